"""BlackSwanSuite's records in Django's admin: the steps of staged claims, read-only."""

from django.contrib import admin

from annotation.benchmarks.blackswan.models import StagedStep
from annotation.crowd.admin import SubmissionReadRule
from config.admin_states import RecordsOnly


@admin.register(StagedStep)
class StagedStepAdmin(RecordsOnly, SubmissionReadRule, admin.ModelAdmin):
    """Steps of BlackSwanSuite staged claims, read-only: submitted steps are frozen by the database."""

    list_display = ["claim", "step", "draft_revision", "submitted_at", "active_seconds", "wall_seconds"]
    list_filter = ["step", "claim__study"]
    readonly_fields = [f.name for f in StagedStep._meta.fields]
