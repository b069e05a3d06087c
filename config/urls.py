from django.contrib import admin
from django.urls import include, path

admin.site.site_header = "Benchmark platform administration"
admin.site.site_title = "Benchmark platform"

# `<id:pk>`, an object's id in an address (config.ids), is registered when the apps are ready (config.apps), once,
# before any URL module is read
urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("config.api_urls")),
    path("media/", include("annotation.urls")),
    path("", include("frontend.urls")),
]

handler404 = "config.not_found.not_found"
