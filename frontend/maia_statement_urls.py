"""URLs of the MAIA false-statement review: failing pairs of a version, and edits of a false statement."""

from django.urls import path

from frontend import maia_statement_views as views

urlpatterns = [
    path("maia/versions/<int:version_id>/statements/", views.failing_statements, name="maia-statements"),
    path("maia/items/<int:item_id>/statements/<int:index>/", views.edit_statement, name="maia-statement-edit"),
]
