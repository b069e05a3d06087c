"""The image studio's pages (frontend/studio_views.py)."""

from django.urls import path

from frontend import studio_views

urlpatterns = [
    path("studio/", studio_views.index, name="studio"),
    path("studio/items/<id:item_id>/compare/", studio_views.compare, name="studio-compare"),
    path("studio/items/<id:item_id>/<slug:slot>/", studio_views.slot_page, name="studio-slot"),
    path("studio/items/<id:item_id>/<slug:slot>/attempts/", studio_views.start, name="studio-attempt-start"),
    path("studio/attempts/<id:pk>/", studio_views.attempt_detail, name="studio-attempt"),
    path("studio/attempts/<id:pk>/final/", studio_views.pick_final, name="studio-attempt-final"),
    path("studio/attempts/<id:pk>/image.png", studio_views.attempt_image, name="studio-attempt-image"),
    path("studio/attempts/<id:pk>/mask.png", studio_views.attempt_mask, name="studio-attempt-mask"),
]
