from django.contrib import admin
from django.urls import include, path, register_converter

from config.ids import IdConverter

admin.site.site_header = "Benchmark platform administration"
admin.site.site_title = "Benchmark platform"

# `<id:pk>`: an object's id in an address (config.ids); registered before the apps' URL modules are read
register_converter(IdConverter, "id")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("config.api_urls")),
    path("media/", include("annotation.urls")),
    path("", include("frontend.urls")),
]

handler404 = "config.not_found.not_found"
