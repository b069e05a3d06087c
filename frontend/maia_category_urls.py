"""URLs of the MAIA category pages (`frontend.benchmarks.maia.category_views`)."""

from django.urls import path

from frontend.benchmarks.maia import category_views as views

urlpatterns = [
    path("maia/categories/", views.categories_page, name="maia-categories"),
    path("maia/categories/<slug:key>/", views.category_page, name="maia-category"),
]
