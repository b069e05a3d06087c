"""The media library's curating pages: rename, tag, delete."""

from django.urls import path

from frontend import library_views

urlpatterns = [
    path("library/<str:kind>/<id:pk>/rename/", library_views.rename, name="media-rename"),
    path("library/<str:kind>/<id:pk>/tags/", library_views.tags, name="media-tags"),
    path("library/<str:kind>/<id:pk>/delete/", library_views.delete, name="media-delete"),
]
