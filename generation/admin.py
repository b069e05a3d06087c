"""Django admin for background jobs, model proposals and the model registry.

Proposal sets, proposals and decisions are for curators and admins (by role, not by Django model
permissions). Everything a model produced is read-only here; the actions call the services in
`generation.proposals`: start generation for a set, accept parsed proposals, reject proposals whose
output could not be parsed. Decisions are insert-only.

The model registry's entries (`RegisteredModel`) are the admin role's alone: they decide which models
people may pick, the endpoints the server calls, the key variable sent (one of MODEL_KEY_VARIABLES) and
whether a model folder's own code may run. Each entry is checked by its `clean` when saved.
"""

from django import forms
from django.contrib import admin, messages

from config.roles import ADMIN, CURATOR, has_role
from generation import jobs, proposals
from generation.backends import registry
from generation.models import Job, Proposal, ProposalDecision, ProposalSet, RegisteredModel
from generation.registered_models import Use, key_variables


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


class RegisteredModelForm(forms.ModelForm):
    backend = forms.ChoiceField(choices=[(name, name) for name in registry.MODEL_BACKENDS])
    uses = forms.MultipleChoiceField(choices=Use.choices, widget=forms.CheckboxSelectMultiple)
    key_variable = forms.ChoiceField(required=False,
                                     help_text=RegisteredModel._meta.get_field("key_variable").help_text)

    class Meta:
        model = RegisteredModel
        fields = ["name", "description", "backend", "model_id", "revision", "uses", "endpoint", "key_variable",
                  "options", "allowed_options", "trust_remote_code", "enabled"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        current = (self.instance.key_variable or "") if self.instance is not None else ""
        names = list(key_variables()) + ([current] if current and current not in key_variables() else [])
        self.fields["key_variable"].choices = [("", "no key"), *((name, name) for name in names)]


@admin.register(RegisteredModel)
class RegisteredModelAdmin(admin.ModelAdmin):
    form = RegisteredModelForm
    list_display = ["name", "backend", "model_id", "revision", "uses", "endpoint", "key_variable",
                    "trust_remote_code", "enabled", "updated_at"]
    list_filter = ["backend", "enabled", "trust_remote_code"]
    search_fields = ["name", "model_id", "description"]
    actions = ["enable", "disable"]

    def _admin(self, request) -> bool:
        return has_role(request.user, ADMIN)

    def has_module_permission(self, request):
        return self._admin(request)

    def has_view_permission(self, request, obj=None):
        return self._admin(request)

    def has_add_permission(self, request):
        return self._admin(request)

    def has_change_permission(self, request, obj=None):
        return self._admin(request)

    def has_delete_permission(self, request, obj=None):
        return self._admin(request)

    @admin.action(description="Enable selected models")
    def enable(self, request, queryset):
        self.message_user(request, f"Enabled {queryset.update(enabled=True)} model(s).")

    @admin.action(description="Disable selected models (refused wherever they are picked)")
    def disable(self, request, queryset):
        self.message_user(request, f"Disabled {queryset.update(enabled=False)} model(s).")
