"""Evaluation pages outside the API: the download of exports (included under `exports/`)."""

from django.urls import path

from evaluation import export_downloads

urlpatterns = [
    path("<id:pk>/download/", export_downloads.download_export, name="export-download"),
]
