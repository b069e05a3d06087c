from django.conf import settings
from django.db import models

from config.state import StateMachine
from generation.registered_models import RegisteredModel  # noqa: F401 - the model registry, in a module of its own


def _each_to_any_other(states) -> dict:
    return {state: set(states) - {state} for state in states}


class Job(models.Model):
    """One background job: what it is, who asked, and how far it got."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)
    # a job cancelled while running keeps its cancelled state; a run's job may finish without
    # running itself (its chunks ran on the workers)
    STATES = StateMachine("status", {
        Status.QUEUED: {Status.RUNNING, Status.SUCCEEDED, Status.FAILED, Status.CANCELLED},
        Status.RUNNING: {Status.SUCCEEDED, Status.FAILED, Status.CANCELLED},
        Status.SUCCEEDED: set(),
        Status.FAILED: set(),
        Status.CANCELLED: set(),
    })

    kind = models.CharField(max_length=64, db_index=True)
    queue = models.CharField(max_length=32, default="default")
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    progress = models.PositiveSmallIntegerField(default=0)
    message = models.CharField(max_length=500, blank=True)
    log = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(progress__lte=100), name="job_progress_at_most_100"),
        ]

    def __str__(self):
        return f"{self.kind} #{self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED


class ProposalSet(models.Model):
    """Proposals of one task kind from one model: what was asked of which model, with which settings.

    Its proposals are created pending (inputs only); the `make_proposals` job fills them in.
    """

    name = models.CharField(max_length=200)
    task_kind = models.CharField(max_length=64, db_index=True, help_text="a kind registered in generation.proposals")
    task_options = models.JSONField(default=dict, blank=True, help_text="passed to the kind's prompt builder")
    backend = models.CharField(max_length=32, help_text="a name from generation.backends.registry")
    model_id = models.CharField(max_length=500, help_text="hub id or local folder")
    revision = models.CharField(max_length=100, blank=True, help_text="as asked; each proposal records the one used")
    backend_options = models.JSONField(default=dict, blank=True, help_text="load_backend options (device, dtype, ...)")
    params = models.JSONField(default=dict, blank=True, help_text="GenerationParams (max_new_tokens, temperature, ...)")
    batch_size = models.PositiveSmallIntegerField(default=8, help_text="inputs per model call and per saved batch")
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                            help_text="the latest generation job")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="proposal_sets")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.CheckConstraint(condition=models.Q(batch_size__gte=1), name="proposal_set_batch_size_1")]

    def __str__(self):
        return f"{self.name} ({self.task_kind}, {self.model_id})"


class Proposal(models.Model):
    """One model proposal for people to curate: inputs, the exact prompt, the model that answered,
    its raw output, the fields parsed from it and how parsing went, then what people decided.

    A model call may yield several proposals (n samples, or a kind whose output lists several
    records): each is its own row, with `sample_index` and `record_index`, sharing inputs and prompt.
    The parsed `fields` never change; a correction lives in its `ProposalDecision`, and the settled
    version in `final_fields`.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        OK = "ok", "Parsed"
        MALFORMED = "malformed", "Malformed output"
        EMPTY = "empty", "Empty output"
        FAILED = "failed", "Model call failed"

    class Outcome(models.TextChoices):
        UNDECIDED = "undecided", "Undecided"
        ACCEPTED = "accepted", "Accepted"
        CORRECTED = "corrected", "Corrected"
        REJECTED = "rejected", "Rejected"
        DISPUTED = "disputed", "Disputed"

    SETTLED = (Outcome.ACCEPTED, Outcome.CORRECTED, Outcome.REJECTED, Outcome.DISPUTED)
    # what people decided: a first decision settles it (or leaves reviewers disputing); a curator's
    # later direct decision may settle it otherwise (`generation.proposals.resolve_outcome`)
    STATES = StateMachine("outcome", {
        Outcome.UNDECIDED: set(SETTLED),
        **_each_to_any_other(SETTLED),
    })
    # how the model's output parsed: a pending row is filled in once (`generation.proposals`)
    PARSE_STATES = StateMachine("status", {
        Status.PENDING: {Status.OK, Status.MALFORMED, Status.EMPTY, Status.FAILED},
        Status.OK: set(),
        Status.MALFORMED: set(),
        Status.EMPTY: set(),
        Status.FAILED: set(),
    })

    proposal_set = models.ForeignKey(ProposalSet, on_delete=models.PROTECT, related_name="proposals")
    task_kind = models.CharField(max_length=64, db_index=True)
    source_key = models.CharField(max_length=200, blank=True, db_index=True,
                                  help_text="the caller's reference for the input, e.g. 'video-12/caption-1'")
    inputs = models.JSONField(default=dict)
    sample_index = models.PositiveSmallIntegerField(default=0)
    record_index = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True,
                              help_text="parse status")
    parse_error = models.TextField(blank=True, help_text="why the output is malformed, empty or failed")
    prompt = models.JSONField(default=list, blank=True, help_text="the chat sent, media as fingerprints and indices")
    backend = models.CharField(max_length=32, blank=True)
    model_id = models.CharField(max_length=500, blank=True)
    revision = models.CharField(max_length=100, blank=True)
    params = models.JSONField(default=dict, blank=True)
    raw_output = models.TextField(blank=True)
    fields = models.JSONField(default=dict, blank=True, help_text="as parsed from the raw output; never edited")
    latency_s = models.FloatField(null=True, blank=True)
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="proposals")
    generated_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.UNDECIDED, db_index=True)
    final_fields = models.JSONField(null=True, blank=True, help_text="accepted or corrected fields; null otherwise")
    outcome_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["proposal_set_id", "id"]
        indexes = [models.Index(fields=["proposal_set", "status"], name="proposal_set_status_idx")]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(outcome__in=["accepted", "corrected"]) | models.Q(final_fields__isnull=False),
                name="proposal_settled_has_final_fields"),
        ]

    def __str__(self):
        return f"{self.task_kind} proposal #{self.pk} ({self.status}, {self.outcome})"


class ProposalDecision(models.Model):
    """What one person decided about one proposal, and when. Insert-only.

    A correction keeps the person's version in `fields`; the proposal's own fields stay as the
    model gave them. A decision made through a review study names the crowd submission it came
    from (at most one decision per submission).
    """

    class Verdict(models.TextChoices):
        ACCEPT = "accept", "Accept"
        CORRECT = "correct", "Correct"
        REJECT = "reject", "Reject"

    class Origin(models.TextChoices):
        DIRECT = "direct", "Curator, directly"
        REVIEW = "review", "Review study"

    proposal = models.ForeignKey(Proposal, on_delete=models.PROTECT, related_name="decisions")
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    fields = models.JSONField(null=True, blank=True, help_text="the corrected fields (corrections only)")
    reason = models.TextField(blank=True)
    criterion = models.CharField(max_length=64, blank=True,
                                 help_text="the reason named among the task kind's `rejection_reasons`, if any")
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    decided_at = models.DateTimeField()
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.DIRECT)
    study_slug = models.CharField(max_length=64, blank=True)
    submission_id = models.BigIntegerField(null=True, blank=True, unique=True,
                                           help_text="the crowd submission this decision came from")
    review_item_id = models.BigIntegerField(null=True, blank=True,
                                            help_text="the crowd study item it answered: one review round")
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["decided_at", "id"]
        constraints = [
            models.CheckConstraint(condition=~models.Q(verdict="reject") | ~models.Q(reason=""),
                                   name="proposal_rejection_has_reason"),
            models.CheckConstraint(condition=models.Q(verdict="correct", fields__isnull=False)
                                   | (~models.Q(verdict="correct") & models.Q(fields__isnull=True)),
                                   name="proposal_correction_has_fields"),
        ]

    def __str__(self):
        return f"{self.verdict} of proposal {self.proposal_id} by {self.decided_by_id}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise PermissionError("Decisions are insert-only.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise PermissionError("Decisions are insert-only.")
