"""BlackSwanSuite's pages (see the package)."""

from django.urls import path

from frontend.benchmarks.blackswan import caption_views, localization_views, variants_views

urlpatterns = [
    path("blackswan/variants/", variants_views.variants_page, name="blackswan-variants"),
    path("blackswan/variants/<id:pk>/", variants_views.preview_page, name="blackswan-variants-preview"),
    path("blackswan/localization/<slug:slug>/", localization_views.localization_page, name="blackswan-localization"),
    path("blackswan/captions/<slug:slug>/", caption_views.captions_page, name="blackswan-captions"),
]
