"""The crowd work engine's records: studies, their items, claims, drafts, submissions, reviews.

Invariants the database itself guards (so they hold on SQLite, where row locks do nothing):
- `StudyItem.open_slots` never goes below zero (check constraint); claiming decrements it with a
  conditional UPDATE, so no item is ever handed out more than `k` times at once;
- one claim per (item, worker), ever (unique constraint);
- at most one active claim per (study, worker) (partial unique constraint), so a worker's claims are
  made one after another: the per-video cap (`Study.max_items_per_video`), checked inside the claim
  statement, counts every earlier claim;
- one submission per claim (one-to-one), which also makes submitting idempotent.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from config.state import KeepsHistory, StateMachine


class Qualification(models.Model):
    name = models.SlugField(max_length=64, unique=True)
    description = models.TextField(blank=True)

    def __str__(self):
        return self.name


class WorkerProfile(models.Model):
    """Facts about a worker that eligibility rules read, and where the worker came from."""

    class Platform(models.TextChoices):
        LOCAL = "local", "Local account"
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Mechanical Turk"

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="worker_profile")
    platform = models.CharField(max_length=16, choices=Platform.choices, default=Platform.LOCAL)
    platform_worker_id = models.CharField(max_length=128, blank=True, db_index=True)
    language = models.CharField(max_length=8, blank=True, choices=settings.LANGUAGES,
                                help_text="the language the worker chose for the work pages (empty: the study's)")
    attributes = models.JSONField(default=dict, blank=True,
                                  help_text='e.g. {"native_language": "it", "country_of_upbringing": "IT"}')
    qualifications = models.ManyToManyField(Qualification, through="WorkerQualification", blank=True)

    def __str__(self):
        return f"{self.user} ({self.platform})"


class WorkerQualification(models.Model):
    profile = models.ForeignKey(WorkerProfile, on_delete=models.CASCADE)
    qualification = models.ForeignKey(Qualification, on_delete=models.CASCADE)
    granted_at = models.DateTimeField(auto_now_add=True)
    source = models.CharField(max_length=64, blank=True, help_text="the test that granted it, or 'manual'")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["profile", "qualification"], name="unique_worker_qualification")]

    def __str__(self):
        return f"{self.qualification} held by {self.profile.user}"


MAX_ANNOTATORS_PER_ITEM = 100


class Study(KeepsHistory, models.Model):
    """A campaign of one kind of human step over a set of items.

    The rules its settings obey (ranges, known step kinds, recruitment, what freezes once work has
    started) are checked in one place, `annotation.crowd.study_settings`; the check constraints
    below hold the ranges in the database too."""

    class State(models.TextChoices):
        DRAFT = "draft", _("Draft")
        OPEN = "open", _("Open")
        PAUSED = "paused", _("Paused")
        CLOSED = "closed", _("Closed")

    # opening also needs items (`annotation.crowd.study_state.change`)
    STATES = StateMachine("state", {
        State.DRAFT: {State.OPEN, State.CLOSED},
        State.OPEN: {State.PAUSED, State.CLOSED},
        State.PAUSED: {State.OPEN, State.CLOSED},
        State.CLOSED: set(),
    })

    class Recruitment(models.TextChoices):
        NONE = "none", "No crowd platform (workers with an account)"
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Mechanical Turk"

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64, unique=True)
    step_kind = models.CharField(max_length=32, default="form",
                                 help_text="which step runs the items: 'form' (a configured human-judgment form) "
                                           "or a benchmark workflow such as 'blackswan_staged'")
    form_schema = models.JSONField(default=dict, blank=True,
                                   help_text="fields of the form (see annotation.crowd.forms)")
    state = models.CharField(max_length=16, choices=State.choices, default=State.DRAFT, db_index=True)
    annotators_per_item = models.PositiveSmallIntegerField(default=1, help_text="k")
    count_accepted_only = models.BooleanField(
        default=True, help_text="a rejected answer frees its place, so each item gets k accepted answers")
    max_items_per_video = models.PositiveSmallIntegerField(
        default=0, help_text="the most items of one video (StudyItem.video) a worker gets in the study; 0: no limit")
    lease_seconds = models.PositiveIntegerField(default=30 * 60)
    instructions = models.TextField(blank=True, help_text="Markdown")
    consent_text = models.TextField(
        blank=True, help_text="Markdown; when set, a worker agrees to it on a page before their first item")
    language = models.CharField(
        max_length=8, choices=settings.LANGUAGES, default="en",
        help_text="the language of the pages workers see (a worker may switch to another)")
    estimated_minutes = models.DecimalField(max_digits=6, decimal_places=2, default=1)
    pay_per_item = models.DecimalField(max_digits=8, decimal_places=2, default=0)
    currency = models.CharField(max_length=8, default="USD")
    # eligibility
    required_qualification = models.ForeignKey(Qualification, null=True, blank=True, on_delete=models.PROTECT)
    required_attributes = models.JSONField(
        default=dict, blank=True, help_text='worker attributes that must match, e.g. {"native_language": "it"}')
    include_workers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+",
                                             help_text="if any are listed, only they may work")
    exclude_workers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    # quality control
    gold_share = models.FloatField(default=0.0, help_text="share of a worker's items that are gold items")
    expert_share = models.FloatField(default=0.10, help_text="share of each worker's submissions sent to experts")
    expert_first = models.PositiveSmallIntegerField(default=2, help_text="a worker's first N submissions are reviewed")
    min_accept_rate = models.FloatField(default=0.7, help_text="workers whose expert-accepted rate falls below "
                                                                  "this are excluded")
    min_reviews_for_exclusion = models.PositiveSmallIntegerField(default=3)
    attention_warn_after = models.PositiveSmallIntegerField(default=1)
    attention_block_after = models.PositiveSmallIntegerField(default=2)
    # crowd platforms
    completion_code = models.CharField(max_length=64, blank=True)
    completion_url = models.URLField(blank=True, help_text="where to send a worker who finished, e.g. Prolific's")
    required_submissions = models.PositiveSmallIntegerField(
        default=1, help_text="items a worker hands in before the completion code is shown")
    recruitment_platform = models.CharField(
        max_length=16, choices=Recruitment.choices, default=Recruitment.NONE,
        help_text="where the study recruits: entry links of any other platform are refused. A worker's first "
                  "link binds them to its session (Prolific's SESSION_ID; on Mechanical Turk, per HIT, the "
                  "assignmentId): a link with their worker id and another session is refused (409), and a "
                  "sign-in by link reaches only the work done through that link's session")
    platform_study_id = models.CharField(
        max_length=100, blank=True, help_text="Prolific: the study's STUDY_ID (required). Mechanical Turk: the "
                                              "HIT id (optional; when set, links of other HITs are refused)")
    output_version = models.ForeignKey(
        "annotation.BenchmarkVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="the unfrozen benchmark version that approved work adds items to (study kinds that write items)")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="studies_created")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"
        constraints = [
            models.CheckConstraint(condition=Q(annotators_per_item__gte=1), name="study_k_at_least_1"),
            models.CheckConstraint(condition=Q(annotators_per_item__lte=MAX_ANNOTATORS_PER_ITEM),
                                   name="study_k_at_most_100"),
            models.CheckConstraint(condition=Q(min_accept_rate__gte=0, min_accept_rate__lte=1),
                                   name="study_min_accept_rate_0_1"),
            models.CheckConstraint(condition=Q(required_submissions__gte=1), name="study_required_submissions_1"),
            models.CheckConstraint(condition=Q(recruitment_platform__in=["none", "prolific", "mturk"]),
                                   name="study_known_recruitment_platform"),
            models.CheckConstraint(condition=~Q(recruitment_platform="prolific") | ~Q(platform_study_id=""),
                                   name="study_prolific_needs_study_id"),
            models.CheckConstraint(condition=Q(gold_share__gte=0, gold_share__lte=1), name="study_gold_share_0_1"),
            models.CheckConstraint(condition=Q(expert_share__gte=0, expert_share__lte=1),
                                   name="study_expert_share_0_1"),
        ]

    def __str__(self):
        return self.name


class StudyItem(models.Model):
    """One thing to work on. `payload` is what the worker sees; `answer_key` is never sent to workers."""

    class Role(models.TextChoices):
        REGULAR = "regular", "Regular"
        GOLD = "gold", "Gold"
        ATTENTION = "attention", "Attention check"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=128)
    payload = models.JSONField(default=dict)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.REGULAR)
    answer_key = models.JSONField(default=dict, blank=True,
                                  help_text="gold/attention answers and comparison rules per field")
    open_slots = models.IntegerField(help_text="places left; claiming takes one with a conditional update")
    completed_count = models.PositiveIntegerField(default=0)
    benchmark_item = models.ForeignKey("annotation.BenchmarkItem", null=True, blank=True, on_delete=models.PROTECT)
    video = models.ForeignKey("annotation.Video", null=True, blank=True, on_delete=models.PROTECT)
    image = models.ForeignKey("annotation.Image", null=True, blank=True, on_delete=models.PROTECT)
    proposal = models.ForeignKey("generation.Proposal", null=True, blank=True, on_delete=models.PROTECT,
                                 related_name="review_items", help_text="the model proposal this item reviews")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "external_id"], name="unique_study_item_id"),
            models.CheckConstraint(condition=Q(open_slots__gte=0), name="study_item_slots_not_negative"),
        ]
        indexes = [
            models.Index(fields=["study", "role", "open_slots"], name="study_item_open_idx"),
            # the claim query: open items of a study in hand-out order
            models.Index(fields=["study", "role", "completed_count", "id"], condition=Q(open_slots__gt=0),
                         name="study_item_claimable_idx"),
        ]

    def __str__(self):
        return f"{self.study.slug}/{self.external_id}"


class Claim(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", _("Active")
        SUBMITTED = "submitted", _("Awaiting review")
        APPROVED = "approved", _("Approved")
        REJECTED = "rejected", _("Rejected")
        RETURNED = "returned", _("Returned")
        EXPIRED = "expired", _("Timed out")

    HOLDS_SLOT = (Status.ACTIVE, Status.SUBMITTED, Status.APPROVED)
    # the claims that count towards a study's per-worker, per-video cap: all but those given back or timed out
    COUNTS_FOR_VIDEO_CAP = (Status.ACTIVE, Status.SUBMITTED, Status.APPROVED, Status.REJECTED)
    # The claim loop applies these with conditional UPDATEs whose WHERE comes from `STATES.sources`.
    STATES = StateMachine("status", {
        Status.ACTIVE: {Status.SUBMITTED, Status.RETURNED, Status.EXPIRED},
        Status.SUBMITTED: {Status.APPROVED, Status.REJECTED},
        Status.APPROVED: set(),
        Status.REJECTED: set(),
        Status.RETURNED: set(),
        Status.EXPIRED: set(),
    })

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="claims")
    item = models.ForeignKey(StudyItem, on_delete=models.CASCADE, related_name="claims")
    worker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="claims")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE, db_index=True)
    lease_expires_at = models.DateTimeField(db_index=True)
    platform_assignment_id = models.CharField(max_length=128, blank=True)
    presentation = models.JSONField(default=dict, blank=True,
                                    help_text="what this worker was shown, e.g. the shuffled order of candidates")
    step = models.CharField(max_length=32, blank=True, help_text="current step of multi-step workflows")
    claimed_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-claimed_at"]
        constraints = [
            models.UniqueConstraint(fields=["item", "worker"], name="one_claim_per_item_and_worker"),
            models.UniqueConstraint(fields=["study", "worker"], condition=Q(status="active"),
                                    name="one_active_claim_per_study_and_worker"),
        ]

    def __str__(self):
        return f"claim {self.pk} {self.item} by {self.worker} ({self.status})"


class Draft(models.Model):
    claim = models.OneToOneField(Claim, on_delete=models.CASCADE, related_name="draft")
    data = models.JSONField(default=dict)
    revision = models.PositiveIntegerField(default=0)
    active_seconds = models.FloatField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"draft of claim {self.claim_id} (revision {self.revision})"


class Submission(models.Model):
    class Review(models.TextChoices):
        NOT_SAMPLED = "not_sampled", "Not sampled"
        PENDING = "pending", "Awaiting review"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    # a submission is sampled for review (or not) when it is made; a curator's decision is final
    STATES = StateMachine("review_state", {
        Review.NOT_SAMPLED: {Review.APPROVED, Review.REJECTED},
        Review.PENDING: {Review.APPROVED, Review.REJECTED},
        Review.APPROVED: set(),
        Review.REJECTED: set(),
    })

    claim = models.OneToOneField(Claim, on_delete=models.PROTECT, related_name="submission")
    data = models.JSONField()
    reviewed_data = models.JSONField(null=True, blank=True, help_text="a reviewer's corrected version; data is kept")
    active_seconds = models.FloatField(default=0, help_text="time with the page visible and focused")
    wall_seconds = models.FloatField(default=0, help_text="from claim to submission")
    submitted_at = models.DateTimeField(auto_now_add=True)
    review_state = models.CharField(max_length=16, choices=Review.choices, default=Review.NOT_SAMPLED, db_index=True)
    review_queue = models.CharField(max_length=32, blank=True, db_index=True,
                                    help_text="why it is reviewed: expert_sample, gold, attention")
    check_passed = models.BooleanField(null=True, blank=True, help_text="gold/attention result; null if neither")
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_reason = models.TextField(blank=True)
    review_criterion = models.CharField(
        max_length=32, blank=True, default="", db_default="",
        help_text="the criterion a rejection was made on, for study kinds that name their criteria")

    class Meta:
        ordering = ["-submitted_at"]

    @property
    def final_data(self):
        return self.reviewed_data if self.reviewed_data is not None else self.data

    def __str__(self):
        return f"submission {self.pk} of claim {self.claim_id} ({self.get_review_state_display().lower()})"


class StudyExclusion(models.Model):
    """A worker removed from a study's pool, and why."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="exclusions")
    worker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "worker"], name="unique_study_exclusion")]

    def __str__(self):
        return f"{self.worker} excluded from {self.study}: {self.reason}"


class PlatformEntry(models.Model):
    """The platform session a worker's first entry link to a study's run came with (Prolific's SESSION_ID,
    Mechanical Turk's assignmentId): a later link of the same worker to the same run must carry the same one
    (`annotation.crowd.platforms.bind`). A Prolific study of ours is one run; on Mechanical Turk each HIT is
    (`run` = its hitId), since a worker holds one assignment per HIT."""

    platform = models.CharField(max_length=16, choices=WorkerProfile.Platform.choices)
    platform_worker_id = models.CharField(max_length=128)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="platform_entries")
    run = models.CharField(max_length=100, blank=True, help_text="Mechanical Turk: the hitId; Prolific: empty")
    session_id = models.CharField(max_length=128, help_text="Prolific's SESSION_ID, Mechanical Turk's assignmentId")
    worker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    last_entry_at = models.DateTimeField(auto_now=True)
    refused_entries = models.PositiveIntegerField(default=0, help_text="links with another session, refused")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["platform", "platform_worker_id", "study", "run"],
                                               name="one_platform_session_per_worker_and_run")]

    def __str__(self):
        return f"{self.platform} {self.platform_worker_id} in {self.study} ({self.run or 'study'}): {self.session_id}"


class StudyConsent(models.Model):
    """A worker agreed to a study's consent / introduction page (on the page or through the API)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="consents")
    worker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    agreed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "worker"], name="unique_study_consent")]

    def __str__(self):
        return f"{self.worker} agreed to the consent page of {self.study}"


class QualificationTest(models.Model):
    """Questions with answer keys; passing grants the qualification."""

    qualification = models.ForeignKey(Qualification, on_delete=models.CASCADE, related_name="tests")
    name = models.CharField(max_length=200)
    questions = models.JSONField(help_text='[{"id": "q1", "prompt": "...", "choices": [...], "answer": "..."}]')
    pass_threshold = models.FloatField(default=0.8)
    retry_delay_seconds = models.PositiveIntegerField(default=24 * 3600)

    def __str__(self):
        return self.name


class QualificationAttempt(models.Model):
    test = models.ForeignKey(QualificationTest, on_delete=models.CASCADE, related_name="attempts")
    worker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    answers = models.JSONField()
    score = models.FloatField()
    passed = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.worker} on {self.test}: {self.score:.0%} ({'passed' if self.passed else 'failed'})"
