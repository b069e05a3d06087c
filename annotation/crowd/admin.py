from django.contrib import admin

from annotation.crowd import assignment, review, study_settings, study_state
from annotation.crowd.access import can_read_submissions
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import (
    Claim,
    PlatformEntry,
    Qualification,
    QualificationAttempt,
    QualificationTest,
    Study,
    StudyExclusion,
    StudyItem,
    Submission,
    WorkerProfile,
)
from annotation.crowd.study_forms import StudyAdminForm, StudyItemForm
from config.admin_states import TransitionActions


@admin.register(Study)
class StudyAdmin(TransitionActions, admin.ModelAdmin):
    """A study's settings; its state moves only by the open / pause / close actions."""

    list_display = ["name", "slug", "step_kind", "state", "annotators_per_item", "pay_per_item", "created_at"]
    list_filter = ["state", "step_kind"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    filter_horizontal = ["include_workers", "exclude_workers"]
    form = StudyAdminForm  # the settings' rules (annotation.crowd.study_settings) as form errors
    refusal_errors = (CrowdError,)

    def apply_transition(self, request, obj, to):
        study_state.change(obj, study_state.verb_for(to), request.user, self.transition_reason)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        study_settings.resize_items(obj)


@admin.register(StudyItem)
class StudyItemAdmin(admin.ModelAdmin):
    """Items; their counters are the claim loop's to keep (a new item gets its study's k places)."""

    list_display = ["external_id", "study", "role", "open_slots", "completed_count"]
    list_filter = ["study", "role"]
    search_fields = ["external_id"]
    raw_id_fields = ["benchmark_item", "video", "image"]
    readonly_fields = ["open_slots", "completed_count"]
    form = StudyItemForm  # media frozen once work started; a video once in a study of a kind that holds each once

    def save_model(self, request, obj, form, change):
        if not change:
            obj.open_slots = assignment.initial_slots(obj.study, obj.role)
        super().save_model(request, obj, form, change)


@admin.register(Claim)
class ClaimAdmin(TransitionActions, admin.ModelAdmin):
    """Claims, read-only; an active one can be given back to the pool (its place goes to someone else)."""

    list_display = ["id", "study", "item", "worker", "status", "claimed_at", "lease_expires_at", "finished_at"]
    list_filter = ["status", "study"]
    search_fields = ["worker__username", "item__external_id", "platform_assignment_id"]
    readonly_fields = ["study", "item", "worker", "status", "claimed_at", "finished_at", "presentation"]
    transition_targets = (Claim.Status.RETURNED,)
    refusal_errors = (CrowdError,)

    def apply_transition(self, request, obj, to):
        assignment.give_back(obj, request.user, reason=self.transition_reason)


class SubmissionReadRule:
    """Workers' answers are seen by whom `can_read_submissions` allows, as in the API, the pages and
    the exports, whatever Django model permissions a user holds; changing them also needs the rule."""

    def has_view_permission(self, request, obj=None):
        return can_read_submissions(request.user)

    def has_change_permission(self, request, obj=None):
        return can_read_submissions(request.user) and super().has_change_permission(request, obj)


@admin.register(Submission)
class SubmissionAdmin(SubmissionReadRule, TransitionActions, admin.ModelAdmin):
    """Answers; a curator approves or rejects them by the actions (the review service), never by
    editing the review state."""

    list_display = ["id", "claim", "review_state", "review_queue", "check_passed", "active_seconds", "submitted_at"]
    list_filter = ["review_state", "review_queue", "check_passed", "claim__study"]
    search_fields = ["claim__worker__username", "claim__item__external_id"]
    readonly_fields = ["claim", "data", "active_seconds", "wall_seconds", "submitted_at", "reviewed_by",
                       "reviewed_at", "review_reason", "review_criterion"]
    refusal_errors = (CrowdError,)
    transition_reason = "rejected in the admin"

    def apply_transition(self, request, obj, to):
        if to == Submission.Review.APPROVED:
            review.approve(obj, request.user)
        else:
            review.reject(obj, request.user, reason=self.transition_reason)

    def has_delete_permission(self, request, obj=None):
        return False  # rejected work stays visible


@admin.register(WorkerProfile)
class WorkerProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "platform", "platform_worker_id"]
    list_filter = ["platform"]
    search_fields = ["user__username", "platform_worker_id"]


@admin.register(PlatformEntry)
class PlatformEntryAdmin(admin.ModelAdmin):
    """The session each platform worker's first link to a run came with, shown as it is; deleting one lets the
    worker's next link (e.g. a new assignment after returning a HIT) bind its own session."""

    list_display = ["platform", "platform_worker_id", "study", "run", "session_id", "created_at", "last_entry_at",
                    "refused_entries"]
    list_filter = ["platform", "study"]
    search_fields = ["platform_worker_id", "session_id", "worker__username"]
    readonly_fields = [f.name for f in PlatformEntry._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


admin.site.register(Qualification)
admin.site.register(QualificationTest)


@admin.register(QualificationAttempt)
class QualificationAttemptAdmin(admin.ModelAdmin):
    list_display = ["test", "worker", "score", "passed", "created_at"]
    list_filter = ["passed", "test"]


@admin.register(StudyExclusion)
class StudyExclusionAdmin(admin.ModelAdmin):
    list_display = ["study", "worker", "reason", "created_at"]
    list_filter = ["study"]
