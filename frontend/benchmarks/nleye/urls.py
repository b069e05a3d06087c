from django.urls import path

from frontend import triplet_validation_views as views

urlpatterns = [
    path("nleye/triplets/<id:item_id>/explain/", views.explain, name="nleye-triplet-explain"),
    path("nleye/triplets/<id:item_id>/validate/", views.validate, name="nleye-triplet-validate"),
    path("nleye/versions/<id:pk>/validation/", views.validation_state, name="nleye-validation-state"),
]
