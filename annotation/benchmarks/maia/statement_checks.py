"""The checks of a MAIA version's statement pairs (SPEC §5 Curation 6): structural minimality and NLI
contradiction (`minimal_pairs.check_item`), run over a version by a background job (`start_checks`, job
kind `maia_statement_checks` on the `gpu` queue; the statements page's "Run statement checks") or
here (`run_checks`, `manage.py maia_statement_checks run`).

What is checked: every `question` of the version with its 8 pairs, except questions under curation that
are not at stage `STATEMENTS` (a `READY` one is done); of each, only the pairs without a current check
(a pair whose statements changed since its check, a regenerated one, or one never checked), so that a
person's fix stays as it is. The NLI model is the one named, else the `MAIA_NLI_MODEL` setting. After
the checks a question under curation whose 8 pairs all pass is `READY` (`statements.refresh_stage`);
failing pairs wait on the statements page, where a person edits or regenerates them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.benchmarks.maia import minimal_pairs, pool_checks, stages, statements
from annotation.benchmarks.maia.payload import N_ANSWERS
from annotation.curation_models import CurationRecord, ItemCheck
from annotation.models import BenchmarkItem, BenchmarkVersion
from config.roles import ADMIN, CURATOR, has_role
from generation import jobs
from generation.models import Job

JOB_KIND = "maia_statement_checks"


class StatementCheckError(ValidationError):
    """A statement check that cannot run as asked (no model, nothing to check, not a curator)."""


def default_nli_model() -> str:
    """The MAIA_NLI_MODEL setting ("" when unset)."""
    return (getattr(settings, "MAIA_NLI_MODEL", "") or "").strip()


def nli_model_name(model_id: str = "") -> str:
    """The model id of the registered NLI model named, else of settings.MAIA_NLI_MODEL's
    (`pool_checks.nli_model`); StatementCheckError when neither names one or the registry refuses it."""
    name = (model_id or "").strip() or default_nli_model()
    if not name:
        raise StatementCheckError("Name an NLI model (or set MAIA_NLI_MODEL).")
    try:
        return pool_checks.configured_model(name)
    except pool_checks.PoolCheckError as exc:
        raise StatementCheckError(" ".join(exc.messages)) from None


@dataclass
class Due:
    """A question whose pairs are to be checked (`indices`; none when only its stage is to be settled)."""

    item: BenchmarkItem
    record: CurationRecord | None
    indices: list[int]


def due(version: BenchmarkVersion) -> list[Due]:
    """The version's questions with 8 pairs that have pairs without a current check, or whose pairs all
    pass while the question is not yet ready (see the module docstring)."""
    found = []
    items = version.items.filter(payload__kind="question").select_related("curation").order_by("external_id", "pk")
    for item in items:
        if len(minimal_pairs.pairs_of(item.payload)) != N_ANSWERS:
            continue
        record = getattr(item, "curation", None)
        if record is not None and record.stage != stages.STATEMENTS:
            continue
        checked = minimal_pairs.current_checks(item)
        indices = [index for index in range(N_ANSWERS) if index not in checked]
        if indices or (record is not None and statements.all_pairs_pass(item)):
            found.append(Due(item, record, indices))
    return found


def run_checks(version: BenchmarkVersion, user, nli, *, progress=None) -> dict:
    """Check the due pairs of the version (one question at a time, each with its stage) and say what
    happened: {"questions", "pairs", "failed", "ready"}."""
    work = due(version)
    counts = Counter()
    for number, entry in enumerate(work, 1):
        with transaction.atomic():
            checks = minimal_pairs.check_item(entry.item, nli, by=user, only=entry.indices) if entry.indices else []
            if entry.record is not None:
                record = CurationRecord.objects.select_for_update().get(pk=entry.record.pk)
                counts["ready"] += statements.refresh_stage(record) == stages.READY
        counts["questions"] += bool(checks)
        counts["pairs"] += len(checks)
        counts["failed"] += sum(not check.ok for check in checks)
        if progress is not None:
            progress(100 * number / len(work), f"{number} of {len(work)} question(s)")
    return {key: counts[key] for key in ("questions", "pairs", "failed", "ready")}


def summary(result: dict) -> str:
    return (f"{result['pairs']} pair(s) of {result['questions']} question(s) checked, {result['failed']} failing; "
            f"{result['ready']} question(s) ready.")


def start_checks(version: BenchmarkVersion, user, nli_model: str = "") -> Job:
    """Queue the checks of the version's due pairs (sent when the transaction commits); curators and admins."""
    if user is None or not has_role(user, CURATOR, ADMIN):
        raise StatementCheckError("Only curators and admins run statement checks.")
    name = nli_model_name(nli_model)
    if not due(version):
        raise StatementCheckError(f"No statement pair of {version.label} waits for a check.")
    return jobs.enqueue(JOB_KIND, params={"version": version.pk, "nli_model": name}, user=user)


@jobs.job_handler(JOB_KIND, queue="gpu", label="Check MAIA statement pairs")
def statement_checks_job(context: jobs.JobContext, version: int, nli_model: str) -> dict:
    found = minimal_pairs.statement_version(version)
    if found is None:
        raise StatementCheckError(f"There is no MAIA version #{version}.")
    context.progress(0, f"Loading the NLI model {nli_model}")
    nli = pool_checks.load_scorer(nli_model)
    result = run_checks(found, context.job.requested_by, nli, progress=context.progress)
    return {"message": summary(result), **result, "nli_model": nli_model}


def recent_jobs(version: BenchmarkVersion, limit: int = 5):
    return Job.objects.filter(kind=JOB_KIND, params__version=version.pk).order_by("-created_at", "-pk")[:limit]


# --- Report -------------------------------------------------------------------------------------

def report(version: BenchmarkVersion) -> dict:
    """Per question with statement pairs: its stage (under curation) and how many of its pairs pass, fail
    or have no current check; the totals, and the questions per stage."""
    rows, totals, by_stage = [], Counter(), Counter()
    items = version.items.filter(payload__kind="question").select_related("curation").order_by("external_id", "pk")
    for item in items:
        record = getattr(item, "curation", None)
        if record is not None:
            by_stage[record.stage] += 1
        pairs = minimal_pairs.pairs_of(item.payload)
        if not pairs:
            continue
        checks = minimal_pairs.current_checks(item)
        passed = sum(check.verdict == ItemCheck.Verdict.PASS for check in checks.values())
        row = {"item_id": item.pk, "external_id": item.external_id, "category": item.payload.get("category", ""),
               "stage": record.stage if record is not None else None, "pairs": len(pairs), "pass": passed,
               "fail": len(checks) - passed, "unchecked": len(pairs) - len(checks)}
        rows.append(row)
        totals.update({key: row[key] for key in ("pairs", "pass", "fail", "unchecked")})
    return {"version": version.label, "questions": rows,
            "total": {"questions": len(rows), **{k: totals[k] for k in ("pairs", "pass", "fail", "unchecked")}},
            "stages": [{"stage": stage, "label": label, "questions": by_stage[stage]}
                       for stage, label in stages.STAGES if by_stage[stage]]}
