from django.contrib import admin
from django.urls import include, path

admin.site.site_header = "Benchmark platform administration"
admin.site.site_title = "Benchmark platform"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("config.api_urls")),
    path("media/", include("annotation.urls")),
    path("", include("frontend.urls")),
]
