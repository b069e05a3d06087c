"""Admin pages for evaluation runs (with their chunks and status history), predictions, judge verdicts
and the response cache; runs can be cancelled or resumed on the Celery workers from the list."""

from django.contrib import admin, messages
from django.utils.html import format_html, format_html_join

from config.admin_states import RecordsOnly
from evaluation import runs
from evaluation.admin_filters import BenchmarkFilter
from evaluation.models import (
    EvaluationRun,
    FailureTag,
    HumanAnswerJudgment,
    HumanBaselineMetric,
    HumanVerdict,
    JudgeReference,
    Judgment,
    Prediction,
    ResponseCache,
    RunChunk,
    RunModelMetric,
    VersionSubset,
)


class RunChunkInline(admin.TabularInline):
    model = RunChunk
    fields = ["index", "status", "attempts", "worker", "started_at", "heartbeat_at", "finished_at", "error"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = ["id", "model_id", "version", "backend", "input_strategy", "prompting", "status",
                    "completed_predictions", "total_predictions", "failed_predictions", "cached_predictions",
                    "created_at"]
    list_filter = ["status", "backend", "input_strategy", "prompting", "workers", BenchmarkFilter]
    search_fields = ["model_id", "version__label"]
    readonly_fields = ["status", "message", "job", "created_by", "created_at", "started_at", "finished_at",
                       "resolved_revision", "total_requests", "total_predictions", "completed_predictions",
                       "cached_predictions", "failed_predictions", "throughput", "eta_seconds", "status_history"]
    inlines = [RunChunkInline]
    actions = ["cancel_runs", "resume_on_workers"]

    @admin.display(description="status history")
    def status_history(self, run):
        rows = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", (
            (f"{t.created_at:%Y-%m-%d %H:%M:%S}", t.from_state, t.to_state, t.reason, t.actor or "—")
            for t in run.transitions))
        return format_html("<table><tr><th>When</th><th>From</th><th>To</th><th>Why</th><th>By</th></tr>{}</table>",
                           rows)

    @admin.action(description="Cancel the selected runs")
    def cancel_runs(self, request, queryset):
        cancelled = sum(runs.cancel_run(run, user=request.user, reason="Cancelled in the admin") for run in queryset)
        self.message_user(request, f"{cancelled} run(s) cancelled.")

    @admin.action(description="Start or resume the selected runs on the Celery workers")
    def resume_on_workers(self, request, queryset):
        for run in queryset:
            try:
                runs.start_run(run, workers="celery", user=request.user)
            except runs.RunConfigError as exc:
                self.message_user(request, f"Run {run.pk}: {exc}", level=messages.ERROR)
            else:
                self.message_user(request, f"Run {run.pk}: {run.chunks.count()} chunks sent to the workers.")


@admin.register(Prediction)
class PredictionAdmin(admin.ModelAdmin):
    list_display = ["run", "request_id", "sample_index", "variant", "parse_status", "from_cache", "latency"]
    list_filter = ["variant", "parse_status", "from_cache", "run"]
    search_fields = ["request_id", "raw_output"]
    readonly_fields = [f.name for f in Prediction._meta.fields]

    @admin.display(description="latency", ordering="latency_s")
    def latency(self, prediction):
        """Seconds, rounded to hundredths (the stored value keeps full precision)."""
        return "—" if prediction.latency_s is None else f"{prediction.latency_s:.2f} s"


@admin.register(RunModelMetric)
class RunModelMetricAdmin(admin.ModelAdmin):
    """CLIP score / BERTScore that `manage.py score --run` kept with a run: read-only records."""

    list_display = ["run", "kind", "model_id", "parser", "computed_at"]
    list_filter = ["kind", "parser"]
    search_fields = ["model_id"]
    readonly_fields = [f.name for f in RunModelMetric._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(ResponseCache)
class ResponseCacheAdmin(admin.ModelAdmin):
    list_display = ["key", "model_id", "model_revision", "backend", "created_at"]
    list_filter = ["backend"]
    search_fields = ["key", "model_id"]


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    """Judge verdicts are records of what a judge model said: read-only."""

    list_display = ["prediction", "kind", "judge_model", "judge_backend", "reference_key", "parse_status",
                    "from_cache", "created_at"]
    list_filter = ["kind", "parse_status", "judge_backend", "judge_model", "from_cache"]
    search_fields = ["prediction__request_id", "judge_model", "raw_verdict"]
    list_select_related = ["prediction"]
    readonly_fields = [f.name for f in Judgment._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

from evaluation import admin_export_actions  # noqa: E402,F401  (adds the export actions to the runs, predictions, judgments and crowd submissions admins)


@admin.register(JudgeReference)
class JudgeReferenceAdmin(RecordsOnly, admin.ModelAdmin):
    """People's explanations approved as judge references: insert-only, revoked from the references page."""

    list_display = ["id", "item", "text", "votes", "voters", "approved_by", "approved_at", "revoked_at"]
    list_filter = ["source"]
    search_fields = ["text", "item__external_id"]


@admin.register(FailureTag)
class FailureTagAdmin(RecordsOnly, admin.ModelAdmin):
    """Failure factors of wrong predictions: insert-only, the latest per prediction counts."""

    list_display = ["id", "prediction", "factor", "tagged_by", "tagged_at"]
    list_filter = ["factor"]
    search_fields = ["note", "prediction__request_id"]


@admin.register(HumanAnswerJudgment)
class HumanAnswerJudgmentAdmin(RecordsOnly, admin.ModelAdmin):
    """Judge verdicts on people's free-text baseline answers: records of what a judge model said."""

    list_display = ["submission", "request_id", "kind", "judge_model", "parse_status", "from_cache", "created_at"]
    list_filter = ["kind", "parse_status", "judge_model"]
    search_fields = ["request_id", "answer", "raw_verdict"]


@admin.register(HumanVerdict)
class HumanVerdictAdmin(RecordsOnly, admin.ModelAdmin):
    """People's own verdicts on judged answers: insert-only, the latest per answer counts."""

    list_display = ["id", "prediction", "submission", "kind", "label", "given_by", "given_at"]
    list_filter = ["kind", "label"]
    search_fields = ["answer", "note"]


@admin.register(VersionSubset)
class VersionSubsetAdmin(RecordsOnly, admin.ModelAdmin):
    """Named subsets of frozen versions (`manage.py make_subset`): records of what was drawn."""

    list_display = ["name", "version", "seed", "per_group", "items", "created_by", "created_at"]
    search_fields = ["name"]


@admin.register(HumanBaselineMetric)
class HumanBaselineMetricAdmin(RecordsOnly, admin.ModelAdmin):
    """CLIP scores of people's written answers that `manage.py human_eval score` kept: read-only records."""

    list_display = ["study", "kind", "model_id", "computed_at"]
    list_filter = ["kind"]
