"""Evaluation runs, their chunks, predictions and the response cache; judge verdicts (on predictions and on
people's baseline answers), people's own verdicts, judge references and failure tags."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from config.models import StateChange
from config.state import StateMachine
from evaluation import judge_registry


class VersionSubset(models.Model):
    """A named, reproducible sample of a frozen version's requests (`evaluation.subsets`): per group
    (a variant, or the items of the open-ended variants) `per_group` requests, or `items` items, drawn
    with `seed` over the requests' ids in sorted order; a run restricted to it answers only these."""

    version = models.ForeignKey("annotation.BenchmarkVersion", on_delete=models.PROTECT, related_name="subsets")
    name = models.CharField(max_length=100)
    seed = models.IntegerField(default=0)
    per_group = models.PositiveIntegerField(help_text="requests drawn per variant")
    items = models.PositiveIntegerField(null=True, blank=True,
                                        help_text="open-ended variants: items drawn (BlackSwanSuite: videos), "
                                                  "every open-ended request of each; empty: per_group per variant")
    variants = models.JSONField(default=list, help_text="the variants drawn from, in the benchmark's order")
    groups = models.JSONField(default=dict, help_text="variant → the request ids drawn, sorted")
    item_ids = models.JSONField(default=list, blank=True,
                                help_text="the items drawn for the open-ended variants (when `items` is set), sorted")
    request_ids = models.JSONField(default=list, help_text="every request id of the subset, group by group")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["version_id", "name"]
        constraints = [models.UniqueConstraint(fields=["version", "name"], name="one_subset_name_per_version")]

    def __str__(self):
        return f"subset {self.name} of {self.version} ({len(self.request_ids or [])} requests, seed {self.seed})"


class EvaluationRun(models.Model):
    """One model run over a frozen benchmark version under one fixed set of strategies.

    Everything that changes a prediction is part of the run: model and revision, backend, input
    and prompting strategies, option order, frame policy, generation parameters and seed.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    # running -> running: resume; a finished run can be resumed (only what is missing runs)
    STATES = StateMachine("status", {
        Status.PENDING: {Status.RUNNING, Status.FAILED, Status.CANCELLED},
        Status.RUNNING: {Status.RUNNING, Status.SUCCEEDED, Status.FAILED, Status.CANCELLED},
        Status.SUCCEEDED: {Status.RUNNING},
        Status.FAILED: {Status.RUNNING},
        Status.CANCELLED: {Status.RUNNING},
    })

    version = models.ForeignKey("annotation.BenchmarkVersion", on_delete=models.PROTECT, related_name="runs")
    model_id = models.CharField(max_length=255, help_text="hub id or local path")
    model_revision = models.CharField(max_length=128, blank=True)
    backend = models.CharField(max_length=32, default="transformers")
    backend_options = models.JSONField(default=dict, blank=True, help_text="dtype, device map, base URL, …")
    input_strategy = models.CharField(max_length=32, default="default")
    prompting = models.CharField(max_length=32, default="standard")
    option_order = models.CharField(
        max_length=40, default="release",
        help_text="release: options under the release's letters and order; shuffled:<seed>: a seeded order per request")
    frame_policy = models.JSONField(default=dict, blank=True)
    generation_params = models.JSONField(default=dict, blank=True)
    seed = models.IntegerField(default=0)
    variants = models.JSONField(default=list, blank=True, help_text="empty: every variant of the benchmark")
    limit = models.PositiveIntegerField(null=True, blank=True, help_text="only the first N items")
    subset = models.ForeignKey(VersionSubset, null=True, blank=True, on_delete=models.PROTECT, related_name="runs",
                               help_text="only the requests of this subset of the version")
    resolved_revision = models.CharField(max_length=128, blank=True,
                                         help_text="the revision the model resolved to (part of the cache key)")
    n_samples = models.PositiveSmallIntegerField(null=True, blank=True,
                                                 help_text="responses per request; empty: what each request asks")
    describer = models.JSONField(default=dict, blank=True,
                                 help_text="image-to-text: {backend, model_id, revision, resolved_revision, options}")
    batch_size = models.PositiveIntegerField(default=8, help_text="requests per model call")
    chunk_size = models.PositiveIntegerField(default=64, help_text="requests per chunk (one Celery task each)")
    workers = models.CharField(max_length=16, default="local", help_text="local | celery")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    message = models.CharField(max_length=500, blank=True)
    total_requests = models.PositiveIntegerField(default=0)
    total_predictions = models.PositiveIntegerField(default=0, help_text="requests x samples")
    completed_predictions = models.PositiveIntegerField(default=0, help_text="predictions without an error")
    cached_predictions = models.PositiveIntegerField(default=0)
    failed_predictions = models.PositiveIntegerField(default=0)
    throughput = models.FloatField(null=True, blank=True, help_text="predictions per second since the last start")
    eta_seconds = models.FloatField(null=True, blank=True)
    job = models.ForeignKey("generation.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.model_id} on {self.version} ({self.input_strategy}/{self.prompting})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED, self.Status.CANCELLED)

    @property
    def transitions(self):
        """The run's status history (`config.StateChange` rows), oldest first."""
        return StateChange.objects.of(self).select_related("actor")


class RunChunk(models.Model):
    """A slice of a run's requests, executed as one unit (one Celery task with `--workers celery`).

    Chunks are only a way to split the work: predictions are the truth, so a chunk that runs twice
    (redelivered after a worker died, or resumed) only fills in what is missing. A running chunk
    writes `heartbeat_at` every `EVAL_CHUNK_HEARTBEAT_SECONDS`; beat re-queues one that went silent
    (`evaluation.runs.requeue_silent_chunks`). `attempts` counts the times a worker started it.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    OPEN = (Status.PENDING, Status.RUNNING)
    # running -> running: a worker starts it again (redelivered); running -> pending: its worker went
    # silent and beat re-queues it
    STATES = StateMachine("status", {
        Status.PENDING: {Status.RUNNING, Status.CANCELLED},
        Status.RUNNING: {Status.RUNNING, Status.PENDING, Status.DONE, Status.FAILED, Status.CANCELLED},
        Status.DONE: set(),
        Status.FAILED: set(),
        Status.CANCELLED: set(),
    })

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    request_ids = models.JSONField(default=list)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="last sign of life of its worker")
    worker = models.CharField(max_length=255, blank=True, help_text="host:pid of the worker that last started it")

    class Meta:
        ordering = ["run_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="one_chunk_per_index"),
        ]

    def __str__(self):
        return f"run {self.run_id} chunk {self.index} ({self.status})"


class Prediction(models.Model):
    """One sampled response to one request, with everything needed to reproduce and audit it."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="predictions")
    request_id = models.CharField(max_length=255)
    sample_index = models.PositiveSmallIntegerField(default=0)
    item = models.ForeignKey("annotation.BenchmarkItem", on_delete=models.PROTECT, related_name="+")
    variant = models.CharField(max_length=64, db_index=True)
    prompt = models.JSONField(help_text="the exact messages sent, media as fingerprints")
    inputs = models.JSONField(default=dict, blank=True, help_text="frame indices, image order, policy")
    params = models.JSONField(default=dict, blank=True)
    raw_output = models.TextField(blank=True)
    parsed_answer = models.JSONField(null=True, blank=True)
    parse_status = models.CharField(max_length=16, blank=True, help_text="ok | unparsed | empty")
    parses = models.JSONField(default=dict, blank=True,
                              help_text="every reading so far, by parser name: {name: {value, status}}; "
                                        "parsed_answer/parse_status hold the default parser's")
    latency_s = models.FloatField(null=True, blank=True)
    prompt_tokens = models.IntegerField(null=True, blank=True)
    completion_tokens = models.IntegerField(null=True, blank=True)
    from_cache = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run_id", "request_id", "sample_index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "request_id", "sample_index"], name="one_prediction_per_sample"),
        ]

    def __str__(self):
        return f"run {self.run_id} {self.request_id} sample {self.sample_index}"


class RunModelMetric(models.Model):
    """Metrics of a run that need a scoring model (BlackSwan CLIP score, MAIA BERTScore), computed by
    `manage.py score --run` and kept with the run, so that results pages and exports show them.

    `values` maps each metric's dotted path in the run's metrics to its value; `predictions_state`
    records the run's predictions when they were computed, so that values computed before the run
    gained or replaced predictions are not shown as current.
    """

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="model_metrics")
    kind = models.CharField(max_length=32, help_text="clip | bertscore")
    model_id = models.CharField(max_length=255, help_text="the scoring model (hub id or local folder)")
    parser = models.CharField(max_length=16, help_text="the answer parser the run was scored with")
    values = models.JSONField(default=dict, help_text="metric path → value")
    predictions_state = models.CharField(max_length=200, help_text="the run's predictions when computed")
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run_id", "kind"]
        constraints = [
            models.UniqueConstraint(fields=["run", "kind"], name="one_model_metric_per_kind"),
        ]

    def __str__(self):
        return f"{self.kind} ({self.model_id}) of run {self.run_id}"


class ResponseCache(models.Model):
    """Model responses keyed by (model, revision, backend, prompt, input fingerprints, parameters).

    Only deterministic, successful, non-empty responses are stored.
    """

    key = models.CharField(max_length=64, unique=True)
    model_id = models.CharField(max_length=255)
    model_revision = models.CharField(max_length=128, blank=True)
    backend = models.CharField(max_length=32)
    texts = models.JSONField()
    prompt_tokens = models.IntegerField(null=True, blank=True)
    completion_tokens = models.IntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"cached response of {self.model_id} ({self.key[:12]})"


class JudgeParseStatus(models.TextChoices):
    OK = "ok", "Parsed"
    UNPARSED = "unparsed", "Unparsed"
    FAILED = "failed", "Call failed"


class JudgeCall(models.Model):
    """What one LLM judge call records, whatever answer it judged: the judge (kind, model, resolved
    revision, backend), the exact prompt and parameters, the raw and parsed verdict and its status."""

    ParseStatus = JudgeParseStatus

    kind = models.CharField(max_length=32, db_index=True, validators=[judge_registry.validate_name],
                            help_text="the judge kind (evaluation.judge_registry)")
    judge_model = models.CharField(max_length=255, help_text="hub id, local path or API model name")
    judge_revision = models.CharField(max_length=128, blank=True, help_text="the revision the judge resolved to")
    judge_backend = models.CharField(max_length=32)
    reference_key = models.CharField(max_length=64, blank=True, default="",
                                     help_text="which reference this verdict compares with; empty: all of them")
    prompt = models.JSONField(help_text="the exact messages sent to the judge")
    references = models.JSONField(default=list, blank=True,
                                  help_text="the references it compared with: [{source, text}], where the kind "
                                            "records them")
    params = models.JSONField(default=dict, blank=True)
    raw_verdict = models.TextField(blank=True)
    verdict = models.JSONField(null=True, blank=True, help_text="the parsed verdict")
    parse_status = models.CharField(max_length=16, choices=JudgeParseStatus.choices, db_index=True)
    error = models.TextField(blank=True)
    from_cache = models.BooleanField(default=False)
    latency_s = models.FloatField(null=True, blank=True)
    prompt_tokens = models.IntegerField(null=True, blank=True)
    completion_tokens = models.IntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True


class Judgment(JudgeCall):
    """An LLM judge's verdict on one prediction, with everything needed to reproduce and audit it.

    One row per (prediction, judge kind, judge model, reference key): LLM-Match rates each reference
    separately (`reference_key` "ref:0", "ref:1", …); the other judges see every reference at once
    (`reference_key` ""). A verdict the judge wrote but that cannot be read is kept with its raw text
    and `parse_status` "unparsed" (counted, never guessed); a call that failed is "failed" with the
    error and is tried again on the next pass. `kind` names a registered judge kind
    (`evaluation.judge_registry`; no choices, so a new kind needs no migration).
    """

    prediction = models.ForeignKey(Prediction, on_delete=models.CASCADE, related_name="judgments")

    class Meta:
        ordering = ["prediction_id", "kind", "judge_model", "reference_key"]
        constraints = [
            models.UniqueConstraint(fields=["prediction", "kind", "judge_model", "reference_key"],
                                    name="one_judgment_per_reference"),
        ]

    def __str__(self):
        key = f" {self.reference_key}" if self.reference_key else ""
        return f"{self.kind} by {self.judge_model} on prediction {self.prediction_id}{key}: {self.parse_status}"


class HumanAnswerJudgment(JudgeCall):
    """An LLM judge's verdict on a person's free-text answer in a human-baseline study, judged exactly
    as a model's prediction is (`evaluation.human_eval.answer_judgments`).

    One row per (submission, judge kind, judge model, reference key). `answer` is the text the judge
    saw (the submission's final answer then); a reviewer's later correction makes the row stale, and
    the next judging pass replaces it."""

    submission = models.ForeignKey("annotation.Submission", on_delete=models.CASCADE, related_name="judgments")
    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="+")
    request_id = models.CharField(max_length=255)
    answer = models.TextField(help_text="the answer as judged")

    class Meta:
        ordering = ["study_id", "request_id", "submission_id", "kind", "judge_model", "reference_key"]
        constraints = [
            models.UniqueConstraint(fields=["submission", "kind", "judge_model", "reference_key"],
                                    name="one_human_answer_judgment_per_reference"),
        ]

    def __str__(self):
        return f"{self.kind} by {self.judge_model} on submission {self.submission_id}: {self.parse_status}"


class HumanBaselineMetric(models.Model):
    """Metrics of a human baseline that need a scoring model (BlackSwan's CLIP score of people's written
    answers), computed by `manage.py human_eval score` and kept so that the leaderboard's Human row shows
    them (`evaluation.human_eval.human_baselines`). `study` is the first study of the baseline's group and
    `studies` all of them; `answers_state` fingerprints the answers scored, so values computed before
    the answers changed are not shown as current."""

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="+")
    studies = models.JSONField(default=list, help_text="the slugs of the baseline's studies")
    kind = models.CharField(max_length=32, help_text="clip")
    model_id = models.CharField(max_length=255, help_text="the scoring model (hub id or local folder)")
    values = models.JSONField(default=dict, help_text="metric path → value")
    answers_state = models.CharField(max_length=200, help_text="the answers scored, when computed")
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["study_id", "kind"]
        constraints = [models.UniqueConstraint(fields=["study", "kind"], name="one_human_model_metric_per_kind")]

    def __str__(self):
        return f"{self.kind} ({self.model_id}) of human baseline {', '.join(self.studies or [])}"


class HumanVerdict(models.Model):
    """A person's own verdict on one answer the judge judges: a model's prediction (a response sample)
    or a person's answer in a human-baseline study (a submission). The judge is compared with these
    (`evaluation.human_verdicts`). `label` is in the judge kind's human labels (CVRR-ES and MAIA:
    correct / incorrect); `answer` is the text the person saw. Insert-only: recording again adds a
    row, and an answer's current verdict is its latest row (an empty `label` withdraws it)."""

    prediction = models.ForeignKey(Prediction, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="human_verdicts")
    submission = models.ForeignKey("annotation.Submission", null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="human_verdicts")
    kind = models.CharField(max_length=32, validators=[judge_registry.validate_name],
                            help_text="the judge kind whose labels it uses")
    label = models.CharField(max_length=16, blank=True, help_text="the person's label; empty: withdrawn")
    answer = models.TextField(help_text="the answer as the person saw it")
    note = models.TextField(blank=True)
    given_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    given_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-given_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(prediction__isnull=False, submission__isnull=True)
                           | models.Q(prediction__isnull=True, submission__isnull=False)),
                name="human_verdict_on_one_answer"),
        ]
        indexes = [models.Index(fields=["prediction", "-given_at"], name="human_verdict_prediction"),
                   models.Index(fields=["submission", "-given_at"], name="human_verdict_submission")]

    def __str__(self):
        target = f"prediction {self.prediction_id}" if self.prediction_id else f"submission {self.submission_id}"
        return f"{self.label or 'withdrawn'} on {target} by {self.given_by_id}"

    def save(self, *args, **kwargs):
        if self.pk:
            raise ValidationError("Human verdicts are insert-only: record a new one instead.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValidationError("Human verdicts are insert-only: record a withdrawal instead.")


class JudgeReference(models.Model):
    """A people's explanation a curator approved as a reference for an item's LLM judge.

    A frozen item cannot change, so the explanations validated after freezing (NL-EYE: human-baseline
    explanations of the gold hypothesis, voted valid in an explanation vote) are written here, beside
    the item, with where each came from. Insert-only, except that an approval can be revoked once
    (`revoked_at`, `revoked_by`, `revoke_reason`); a revoked reference stays as history and a new
    approval of the same text is a new row. `evaluation.judge_references` makes and reads them.
    """

    class Source(models.TextChoices):
        BASELINE = "baseline", "Human baseline explanation"

    item = models.ForeignKey("annotation.BenchmarkItem", on_delete=models.PROTECT, related_name="judge_references")
    text = models.TextField()
    text_key = models.CharField(max_length=64, help_text="SHA-256 of the text, whitespace collapsed and lower case")
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.BASELINE)
    study = models.ForeignKey("annotation.Study", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
                              help_text="the study the explanation was written in")
    submission = models.ForeignKey("annotation.Submission", null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+", help_text="the submission that wrote it")
    vote_study = models.ForeignKey("annotation.Study", null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+", help_text="the explanation vote that judged it, if any")
    votes = models.PositiveSmallIntegerField(null=True, blank=True, help_text="voters who selected it")
    voters = models.PositiveSmallIntegerField(null=True, blank=True, help_text="voters who saw it")
    details = models.JSONField(default=dict, blank=True, help_text="request, worker, review state, …")
    approved_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    approved_at = models.DateTimeField(auto_now_add=True)
    revoked_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoke_reason = models.CharField(max_length=500, blank=True)

    REVOKE_FIELDS = ("revoked_by", "revoked_at", "revoke_reason")

    class Meta:
        ordering = ["item_id", "approved_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["item", "text_key"], condition=models.Q(revoked_at__isnull=True),
                                    name="one_active_judge_reference_per_text"),
        ]

    def __str__(self):
        state = " (revoked)" if self.revoked_at else ""
        return f"judge reference #{self.pk} of {self.item}{state}"

    def save(self, *args, **kwargs):
        changed = set(kwargs.get("update_fields") or ())
        if self.pk and (not changed or not changed <= set(self.REVOKE_FIELDS)):
            raise ValidationError("Judge references are insert-only: only a revocation may change one.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValidationError("Judge references are insert-only: revoke one instead.")


class FailureTag(models.Model):
    """Why a wrong prediction failed: one of the benchmark's failure factors (`Benchmark.failure_factors`,
    NL-EYE §6), with a note. Insert-only: tagging again adds a row, and a prediction's current tag is
    its latest row (an empty `factor` clears it), so the history of every tag is kept.
    `evaluation.failure_analysis` makes and reads them."""

    prediction = models.ForeignKey(Prediction, on_delete=models.CASCADE, related_name="failure_tags")
    factor = models.CharField(max_length=32, blank=True, help_text="a failure factor's key; empty: tag cleared")
    note = models.TextField(blank=True)
    tagged_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    tagged_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["prediction_id", "-tagged_at", "-id"]
        indexes = [models.Index(fields=["prediction", "-tagged_at"], name="failure_tag_latest")]

    def __str__(self):
        return f"{self.factor or 'cleared'} on prediction {self.prediction_id} by {self.tagged_by}"

    def save(self, *args, **kwargs):
        if self.pk:
            raise ValidationError("Failure tags are insert-only: tag the prediction again instead.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValidationError("Failure tags are insert-only.")


class ValidationSample(models.Model):
    """A seeded sample of a run's answers judged by one judge model, which people rate blind to validate
    the judge (seeds/004 §4.2: 100 answers, two raters, Fleiss' kappa; `evaluation.validation_samples`)."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="validation_samples")
    kind = models.CharField(max_length=32, validators=[judge_registry.validate_name])
    judge_model = models.CharField(max_length=255)
    size = models.PositiveIntegerField(help_text="answers asked for (fewer when fewer were judged)")
    seed = models.IntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"validation sample {self.pk} of run {self.run_id} ({self.judge_model})"


class ValidationSampleItem(models.Model):
    """One judged answer drawn into a validation sample, at its place in the sample."""

    sample = models.ForeignKey(ValidationSample, on_delete=models.CASCADE, related_name="items")
    prediction = models.ForeignKey(Prediction, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["sample_id", "position"]
        constraints = [models.UniqueConstraint(fields=["sample", "prediction"], name="validation_item_once")]

    def __str__(self):
        return f"answer {self.position} of validation sample #{self.sample_id}"


class ValidationRating(models.Model):
    """One rater's label on one sampled answer: each rater rates each item once."""

    item = models.ForeignKey(ValidationSampleItem, on_delete=models.CASCADE, related_name="ratings")
    rater = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    label = models.CharField(max_length=16)
    given_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "rater_id"]
        constraints = [models.UniqueConstraint(fields=["item", "rater"], name="validation_rating_once")]

    def __str__(self):
        return f"{self.label} by {self.rater} on {self.item}"
