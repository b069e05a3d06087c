from django.urls import path

from frontend.benchmarks.maia import pool_views as views

urlpatterns = [
    path("maia/versions/<id:pk>/pools/", views.pool_report, name="maia-pool-report"),
    path("maia/versions/<id:pk>/pools/run/", views.pool_run, name="maia-pool-run"),
    path("maia/versions/<id:pk>/pools/review/", views.pool_review, name="maia-pool-review"),
    path("maia/versions/<id:pk>/pools/<id:item_id>/review/", views.pool_decide, name="maia-pool-decide"),
]
