"""MAIA pool checks as a background job: the pool report's "Run pool checks" button queues it
(`enqueue`), a worker loads the NLI model (`settings.MAIA_NLI_MODEL`) and runs
`pool_checks.run_checks` on the version's complete pools as the curator who asked."""

from annotation.benchmarks.maia import pool_checks
from generation import jobs
from generation.models import Job

JOB_KIND = "maia_pool_checks"


def enqueue(version, user, *, threshold: float = pool_checks.DEFAULT_THRESHOLD) -> Job:
    """Queue the checks of `version`'s pools; PoolCheckError (nothing queued) when no NLI model is set
    or the version has no complete pool."""
    model_id = pool_checks.configured_model()
    if not pool_checks.pools(version):
        raise pool_checks.PoolCheckError(f"Version {version.label} has no question with its 8 answers to check.")
    return jobs.enqueue(JOB_KIND, params={"version_id": version.pk, "model_id": model_id, "threshold": threshold},
                        user=user)


def jobs_of(version):
    """The pool-check jobs of a version, newest first."""
    return Job.objects.filter(kind=JOB_KIND, params__version_id=version.pk).order_by("-created_at", "-pk")


@jobs.job_handler(JOB_KIND, queue="gpu", label="Check MAIA answer pools (NLI)")
def run_pool_checks_job(context: jobs.JobContext, *, version_id: int, model_id: str,
                        threshold: float = pool_checks.DEFAULT_THRESHOLD) -> dict:
    version = pool_checks.maia_versions().filter(pk=version_id).first()
    if version is None:
        raise pool_checks.PoolCheckError(f"There is no MAIA version #{version_id}.")
    user = context.job.requested_by
    if user is None:
        raise pool_checks.PoolCheckError("The checks are recorded as the curator who asked for them: none is known.")
    context.progress(10, f"Loading the NLI model {model_id}")
    scorer = pool_checks.load_scorer(model_id)
    context.progress(30, f"Checking the pools of {version.label}")
    results = pool_checks.run_checks(version, user, scorer, model_id=model_id, threshold=threshold)
    disagree = [r.external_id for r in results if not r.agrees]
    return {"message": f"{len(results)} pools checked, {len(disagree)} with a contradiction",
            "checked": len(results), "contradicting": disagree}
