"""URLs of the CVRR-ES curation pages (`curation_views`)."""

from django.urls import path

from frontend.benchmarks.cvrr import curation_views as views

urlpatterns = [
    path("cvrr/", views.hub, name="cvrr-curation"),
    path("cvrr/dimensions/", views.dimensions_page, name="cvrr-dimensions"),
    path("cvrr/dimensions/<slug:key>/", views.dimension_page, name="cvrr-dimension"),
    path("cvrr/videos/", views.videos_page, name="cvrr-videos"),
    path("cvrr/captions/", views.captions_page, name="cvrr-captions"),
    path("cvrr/captions/new/", views.caption_study_new, name="cvrr-captions-new"),
    path("cvrr/captions/studies/<slug:slug>/", views.caption_study_page, name="cvrr-caption-study"),
    path("cvrr/captions/<id:item_id>/", views.caption_page, name="cvrr-caption"),
]
