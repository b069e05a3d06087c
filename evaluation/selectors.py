"""Read paths of the results and run pages and of the runs API: the querysets they show."""

from django.db.models import Count, Prefetch, Q

from annotation.models import BenchmarkVersion
from evaluation.exports import EXPORT_JOB_KIND
from evaluation.models import EvaluationRun, JudgeReference, Judgment, Prediction
from evaluation.prediction_import_jobs import IMPORT_JOB_KIND
from evaluation.result_actions import METRIC_JOBS
from generation.models import Job


def versions_with_runs(benchmark_slug: str = ""):
    """The frozen versions (of one benchmark when given), each with its runs newest first and the number
    of its succeeded runs as `succeeded`."""
    runs = EvaluationRun.objects.order_by("-created_at")
    versions = (BenchmarkVersion.objects.filter(frozen=True).select_related("benchmark")
                .annotate(succeeded=Count("runs", filter=Q(runs__status=EvaluationRun.Status.SUCCEEDED)))
                .prefetch_related(Prefetch("runs", queryset=runs))
                .order_by("benchmark__slug", "-created_at"))
    return versions.filter(benchmark__slug=benchmark_slug) if benchmark_slug else versions


def runs_with_benchmark():
    return EvaluationRun.objects.select_related("version__benchmark")


def predictions_of(run: EvaluationRun, request_ids):
    """The run's predictions of these requests, by request and sample."""
    return Prediction.objects.filter(run=run, request_id__in=request_ids).order_by("request_id", "sample_index")


def judgments_of(predictions):
    """The stored judge verdicts of these predictions, by prediction, kind and reference."""
    return Judgment.objects.filter(prediction__in=predictions).order_by("prediction_id", "kind", "reference_key")


def run_predictions(run: EvaluationRun):
    """A run's predictions with their items, by request and sample."""
    return run.predictions.select_related("item").order_by("request_id", "sample_index")


RECENT_JOBS = 10


def result_jobs(*, run_ids=(), version=None):
    """The latest judge, scoring and baseline jobs started from the results pages for these runs or this
    version, newest first."""
    query = Q(kind__in=METRIC_JOBS) & (Q(params__run__in=list(run_ids)) |
                                       (Q(params__version=version.pk) if version is not None else Q(pk__in=[])))
    return Job.objects.filter(query).select_related("requested_by").order_by("-pk")[:RECENT_JOBS]


def export_jobs(user, run_ids) -> list:
    """The user's latest export jobs whose runs are all among `run_ids`, newest first."""
    wanted = set(run_ids)
    recent = Job.objects.filter(kind=EXPORT_JOB_KIND, requested_by=user).order_by("-pk")[:50]
    return [job for job in recent
            if (job.params or {}).get("runs") and set(job.params["runs"]) <= wanted][:RECENT_JOBS]


def import_jobs(user, version) -> list:
    """The user's latest imports of predictions into this version, newest first."""
    return list(Job.objects.filter(kind=IMPORT_JOB_KIND, requested_by=user, params__version=version.pk)
                .select_related("requested_by").order_by("-pk")[:RECENT_JOBS])


def prediction_for_tagging(pk: int):
    """A prediction with its run, version and benchmark (404 where there is none is the caller's)."""
    return Prediction.objects.select_related("run__version__benchmark", "item").filter(pk=pk).first()


def judge_reference(pk: int):
    return JudgeReference.objects.select_related("item__version__benchmark").filter(pk=pk).first()


def revoked_references(version):
    """The version's revoked judge references, newest revocation first."""
    return (JudgeReference.objects.filter(item__version=version, revoked_at__isnull=False)
            .select_related("item", "approved_by", "revoked_by").order_by("-revoked_at", "-pk"))
