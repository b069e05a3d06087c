"""NL-EYE's pages (see the package)."""

from django.urls import path

from frontend.benchmarks.nleye import console_views, scene_views, triplet_validation_views

urlpatterns = [
    path("nleye/triplets/", console_views.triplets_page, name="nleye-triplets"),
    path("nleye/triplets/augment/", console_views.augment, name="nleye-triplets-augment"),
    path("nleye/triplets/<id:item_id>/", console_views.triplet_page, name="nleye-triplet"),
    path("nleye/triplets/<id:item_id>/explain/", triplet_validation_views.explain, name="nleye-triplet-explain"),
    path("nleye/triplets/<id:item_id>/validate/", triplet_validation_views.validate, name="nleye-triplet-validate"),
    path("nleye/versions/<id:pk>/validation/", triplet_validation_views.validation_state,
         name="nleye-validation-state"),
    path("studies/<slug:slug>/spread/", scene_views.scene_spread, name="scene-spread"),
]
