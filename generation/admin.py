"""Django admin for background jobs and model proposals.

Proposal sets, proposals and decisions are for curators and admins (by role, not by Django model
permissions). Everything a model produced is read-only here; the actions call the services in
`generation.proposals`: start generation for a set, accept parsed proposals, reject proposals whose
output could not be parsed. Decisions are insert-only.
"""

from django.contrib import admin, messages

from config.roles import ADMIN, CURATOR, has_role
from generation import jobs, proposals
from generation.models import Job, Proposal, ProposalDecision, ProposalSet


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "status", "progress", "message", "requested_by", "created_at", "finished_at"]
    list_filter = ["status", "kind", "queue"]
    search_fields = ["kind", "message", "requested_by__username"]
    readonly_fields = [f.name for f in Job._meta.fields]
    actions = ["cancel_jobs"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Cancel selected jobs")
    def cancel_jobs(self, request, queryset):
        cancelled = sum(jobs.cancel(job) for job in queryset)
        self.message_user(request, f"Cancelled {cancelled} job(s).")


class CuratorsOnly:
    """Curators and admins see and act; nobody adds, edits or deletes through the admin."""

    def _curator(self, request) -> bool:
        return has_role(request.user, CURATOR, ADMIN)

    def has_module_permission(self, request):
        return self._curator(request)

    def has_view_permission(self, request, obj=None):
        return self._curator(request)

    def has_change_permission(self, request, obj=None):
        return self._curator(request)  # the forms are read-only; actions need it

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ProposalSet)
class ProposalSetAdmin(CuratorsOnly, admin.ModelAdmin):
    list_display = ["id", "name", "task_kind", "backend", "model_id", "counts", "job", "created_by", "created_at"]
    list_filter = ["task_kind", "backend"]
    search_fields = ["name", "model_id"]
    readonly_fields = [f.name for f in ProposalSet._meta.fields] + ["counts"]
    actions = ["generate"]

    @admin.display(description="proposals")
    def counts(self, obj):
        counts = proposals.status_counts(obj)
        status = ", ".join(f"{n} {name}" for name, n in sorted(counts["status"].items()))
        outcome = ", ".join(f"{n} {name}" for name, n in sorted(counts["outcome"].items()))
        return f"{status} | {outcome}"

    @admin.action(description="Generate proposals for pending inputs")
    def generate(self, request, queryset):
        for proposal_set in queryset:
            try:
                job = proposals.start_generation(proposal_set, user=request.user)
            except proposals.ProposalError as exc:
                self.message_user(request, f"{proposal_set.name}: {exc}", messages.WARNING)
            else:
                self.message_user(request, f"{proposal_set.name}: job #{job.pk} queued.")


class DecisionInline(admin.TabularInline):
    model = ProposalDecision
    extra = 0
    can_delete = False
    fields = ["verdict", "fields", "reason", "decided_by", "decided_at", "origin", "study_slug", "submission_id"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Proposal)
class ProposalAdmin(CuratorsOnly, admin.ModelAdmin):
    list_display = ["id", "proposal_set", "task_kind", "source_key", "sample_index", "record_index", "status",
                    "outcome", "generated_at"]
    list_filter = ["status", "outcome", "task_kind", "proposal_set"]
    search_fields = ["source_key", "raw_output", "parse_error"]
    readonly_fields = [f.name for f in Proposal._meta.fields]
    inlines = [DecisionInline]
    actions = ["accept", "reject_unparsed"]

    def _decide_each(self, request, queryset, verdict, reason_for):
        done, refused = proposals.decide_many(queryset, request.user, verdict, reason_for=reason_for)
        self.message_user(request, f"{len(done)} proposal(s) {verdict}ed.")
        if refused:
            shown = list(refused.items())[:20]
            self.message_user(request, "Refused: " + "; ".join(f"#{pk}: {why}" for pk, why in shown), messages.WARNING)

    @admin.action(description="Accept selected proposals as the model proposed them")
    def accept(self, request, queryset):
        self._decide_each(request, queryset, ProposalDecision.Verdict.ACCEPT, lambda proposal: "")

    @admin.action(description="Reject selected proposals whose output is malformed, empty or failed")
    def reject_unparsed(self, request, queryset):
        unparsed = queryset.exclude(status__in=[Proposal.Status.OK, Proposal.Status.PENDING])
        self._decide_each(request, unparsed, ProposalDecision.Verdict.REJECT,
                          lambda proposal: f"model output {proposal.status}: {proposal.parse_error}")


@admin.register(ProposalDecision)
class ProposalDecisionAdmin(CuratorsOnly, admin.ModelAdmin):
    list_display = ["id", "proposal", "verdict", "decided_by", "decided_at", "origin", "study_slug"]
    list_filter = ["verdict", "origin"]
    search_fields = ["reason", "decided_by__username", "study_slug"]
    readonly_fields = [f.name for f in ProposalDecision._meta.fields]

    def has_change_permission(self, request, obj=None):
        return False
