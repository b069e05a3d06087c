"""URLs of the CVRR-ES QA console: generation from captions, filtration studies, pairs sent back, noise report."""

from django.urls import path

from frontend.benchmarks.cvrr import qa_views as views

urlpatterns = [
    path("cvrr/qa/", views.console, name="cvrr-qa"),
    path("cvrr/qa/generate/", views.generate, name="cvrr-qa-generate"),
    path("cvrr/qa/sets/<id:pk>/filtration/", views.open_filtration, name="cvrr-qa-filtration"),
    path("cvrr/qa/studies/<slug:slug>/record/", views.record, name="cvrr-qa-record"),
    path("cvrr/qa/items/<id:item_id>/return/", views.send_back, name="cvrr-qa-return"),
    path("cvrr/qa/noise/", views.noise, name="cvrr-qa-noise"),
]
