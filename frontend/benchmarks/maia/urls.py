"""MAIA's pages (see the package): its categories, the answer pools of a version and its statements."""

from django.urls import path

from frontend.benchmarks.maia import category_views, pool_views, statement_views

urlpatterns = [
    path("maia/categories/", category_views.categories_page, name="maia-categories"),
    path("maia/categories/<slug:key>/", category_views.category_page, name="maia-category"),
    path("maia/versions/<id:pk>/pools/", pool_views.pool_report, name="maia-pool-report"),
    path("maia/versions/<id:pk>/pools/run/", pool_views.pool_run, name="maia-pool-run"),
    path("maia/versions/<id:pk>/pools/review/", pool_views.pool_review, name="maia-pool-review"),
    path("maia/versions/<id:pk>/pools/<id:item_id>/review/", pool_views.pool_decide, name="maia-pool-decide"),
    path("maia/versions/<id:version_id>/statements/", statement_views.failing_statements, name="maia-statements"),
    path("maia/versions/<id:version_id>/statements/check/", statement_views.run_checks,
         name="maia-statement-checks"),
    path("maia/versions/<id:version_id>/statements/regenerate/", statement_views.regenerate,
         name="maia-statement-regenerate"),
    path("maia/items/<id:item_id>/statements/<int:index>/", statement_views.edit_statement,
         name="maia-statement-edit"),
    path("maia/versions/<id:version_id>/statement-generation/", statement_views.console,
         name="maia-statement-console"),
    path("maia/versions/<id:version_id>/statement-generation/start/", statement_views.generate,
         name="maia-statement-generate"),
]
