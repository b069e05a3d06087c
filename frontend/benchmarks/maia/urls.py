"""URLs of MAIA statements: the statement console of a curation version (generation of true and false
statements), the checks of a version's pairs, failing pairs with their edits and regeneration."""

from django.urls import path

from frontend.benchmarks.maia import statement_views as views

urlpatterns = [
    path("maia/versions/<id:version_id>/statements/", views.failing_statements, name="maia-statements"),
    path("maia/versions/<id:version_id>/statements/check/", views.run_checks, name="maia-statement-checks"),
    path("maia/versions/<id:version_id>/statements/regenerate/", views.regenerate, name="maia-statement-regenerate"),
    path("maia/items/<id:item_id>/statements/<int:index>/", views.edit_statement, name="maia-statement-edit"),
    path("maia/versions/<id:version_id>/statement-generation/", views.console, name="maia-statement-console"),
    path("maia/versions/<id:version_id>/statement-generation/start/", views.generate,
         name="maia-statement-generate"),
]
