"""Shared pieces of the human-evaluation studies: the study record, the kinds of study (`register_kind`,
`study_kind`), permission checks, study creation, the submissions results count, sampling and small figures."""

from __future__ import annotations

import random
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied

from annotation.crowd import studies
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from annotation.models import BenchmarkVersion
from config.roles import ADMIN, CURATOR, RESEARCHER, has_role
from evaluation import benchmarks, scoring
from evaluation.benchmarks.base import RequestOptions, derived_seed
from evaluation.models import EvaluationRun

META = "human_eval"  # the study's record in its form_schema
SOURCE = "source"  # an item's record in its answer_key
RATING, VOTE, BASELINE = "blackswan_rating", "nleye_explanation_vote", "human_baseline"
VOTE_FIELD = "valid"  # the explanation-vote form's multi-select: the candidates a voter found valid
COUNTED_REVIEW = (Submission.Review.APPROVED, Submission.Review.NOT_SAMPLED)
ANSWER = "answer"  # the baseline form's answer field


class HumanEvalError(CrowdError):
    """A human-evaluation study that cannot be made or read as asked."""


@dataclass
class HumanStudy:
    study: Study
    items: list[StudyItem]
    left_out: dict[str, str] = field(default_factory=dict)  # what was not made into an item, and why


@dataclass(frozen=True)
class StudyKind:
    """A kind of human-evaluation study: how its results are read (`results(target)`, the target a study,
    studies or a run) and, for a kind made over evaluation runs, how it is made (`create(runs, *, curator,
    sample, k, …)`, a `HumanStudy`)."""

    name: str
    results: Callable[..., dict]
    create: Callable[..., HumanStudy] | None = None


_KINDS: dict[str, StudyKind] = {}


def register_kind(name: str, *, results, create=None) -> StudyKind:
    """Register a kind of study under its name (kept in `form_schema["human_eval"]["kind"]`); its module calls
    this when it is imported (a benchmark's package when `evaluation.benchmarks` discovers it)."""
    kind = StudyKind(name, results, create)
    _KINDS[name] = kind
    return kind


def study_kind(name: str) -> StudyKind:
    """The registered kind `name`; HumanEvalError for any other."""
    try:
        return _KINDS[name]
    except KeyError:
        raise HumanEvalError(f"{name!r} is not a kind of human-evaluation study.") from None


STUDY_MAKERS = (CURATOR, RESEARCHER, ADMIN)  # researchers start them from the results pages


def require_study_maker(user) -> None:
    if not has_role(user, *STUDY_MAKERS):
        raise PermissionDenied("Only curators, researchers and admins create human-evaluation studies.")


def kind_of(study: Study) -> str:
    return str(((study.form_schema or {}).get(META) or {}).get("kind") or "")


def meta_of(study: Study) -> dict:
    return dict((study.form_schema or {}).get(META) or {})


def studies_of(kind: str, *, version=None, run=None) -> list[Study]:
    """The human-evaluation studies of one kind, of a version and/or made over a run (by their record)."""
    found = Study.objects.filter(**{f"form_schema__{META}__kind": kind})
    if version is not None:
        found = found.filter(**{f"form_schema__{META}__version": version.pk})
    found = list(found.order_by("created_at", "pk"))
    if run is not None:
        found = [study for study in found if run.pk in (meta_of(study).get("runs") or [])]
    return found


def _as_list(runs) -> list[EvaluationRun]:
    if isinstance(runs, EvaluationRun):
        return [runs]
    found = list(runs)
    if not found:
        raise HumanEvalError("Name at least one evaluation run.")
    return found


def _one_version(runs: list[EvaluationRun], study_kind: str) -> BenchmarkVersion:
    """The one version the runs are on, whose benchmark supports the human evaluation `study_kind`
    (`Benchmark.human_evaluations`)."""
    versions = {run.version_id for run in runs}
    if len(versions) != 1:
        raise HumanEvalError("The runs of one study must be on the same benchmark version.")
    version = runs[0].version
    supported = benchmarks.supporting("human_evaluations", study_kind)
    if version.benchmark.slug not in supported:
        raise HumanEvalError(f"Run {runs[0].pk} is on {version.benchmark.slug}, not "
                             f"{' or '.join(supported) or 'a benchmark with this study'}.")
    return version


def _create_study(user, *, name: str, slug: str | None, form: dict, meta: dict, rows: list[dict], k: int,
                  instructions: str, open_now: bool, seed: int, **study_fields) -> list[StudyItem]:
    if not rows:
        raise HumanEvalError("Nothing to put in the study.")
    random.Random(derived_seed(seed, f"{meta['kind']}:order")).shuffle(rows)  # no model's items in a row
    study_fields = {"expert_share": 0.0, "expert_first": 0, "gold_share": 0.0, **study_fields}
    return studies.create_study(
        name=name, slug=slug, fallback_slug="human-eval", created_by=user, step_kind="form",
        form_schema={**form, META: meta}, state=Study.State.OPEN if open_now else Study.State.DRAFT,
        annotators_per_item=k, instructions=instructions, rows=rows,
        history_reason=f"{meta['kind']}: {len(rows)} item(s)", **study_fields).items


def counted_submissions(studies) -> tuple[list[Submission], dict]:
    """The submissions results count (see the package docstring), and how many were left out."""
    base = (Submission.objects.filter(claim__study__in=list(studies), claim__item__role=StudyItem.Role.REGULAR)
            .select_related("claim__item", "claim__study").order_by("submitted_at", "pk"))
    counted, rejected, pending = [], 0, 0
    for submission in base:
        if submission.review_state == Submission.Review.REJECTED or submission.claim.status == Claim.Status.REJECTED:
            rejected += 1
        elif submission.review_state in COUNTED_REVIEW:
            counted.append(submission)
        else:
            pending += 1
    return counted, {"counted": len(counted), "rejected": rejected, "pending": pending}


def _source(item: StudyItem) -> dict:
    return dict((item.answer_key or {}).get(SOURCE) or {})


def _mean(values) -> float | None:
    values = [value for value in values if value is not None]
    return statistics.fmean(values) if values else None


def _fraction(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _video_of(benchmark_item):
    link = benchmark_item.media.filter(role="video", video__isnull=False).select_related("video").first()
    return link.video if link is not None else None


def _usable(prediction) -> bool:
    return not prediction.error and bool((prediction.raw_output or "").strip())


def _drawn(candidates: list[str], sample: int | None, seed: int, key: str) -> list[str]:
    """`sample` of the candidates (all when None), drawn with a seed of their own, in their order."""
    if sample is None or sample >= len(candidates):
        return list(candidates)
    chosen = set(random.Random(derived_seed(seed, key)).sample(sorted(candidates), max(0, sample)))
    return [candidate for candidate in candidates if candidate in chosen]


def _studies_for(kind: str, target) -> tuple[list[Study], EvaluationRun | None]:
    """The studies of `kind` a target names: a study, studies, or a run (every study holding its items)."""
    if isinstance(target, EvaluationRun):
        return list(studies_of(kind, run=target)), target
    studies = [target] if isinstance(target, Study) else list(target)
    wrong = [study.slug for study in studies if kind_of(study) != kind]
    if wrong:
        raise HumanEvalError(f"Not a {kind} study: {', '.join(wrong)}.")
    return studies, None


def _runs_by_pk(pks) -> dict[int, EvaluationRun]:
    return {run.pk: run for run in EvaluationRun.objects.filter(pk__in=set(pks))}


def _plan(version, meta: dict) -> list:
    """(item, its requests) of a baseline study's version as its record (`meta`) plans them."""
    options = RequestOptions(input_strategy=meta.get("input_strategy", "default"), prompting="standard",
                             seed=int(meta.get("seed", 0)))
    return [(item, requests) for item, requests in scoring.item_requests(version, options,
                                                                         tuple(meta.get("variants") or ()))]


def _normal_text(text: str) -> str:
    return re.sub(r"\s+", " ", str(text or "")).strip()


def _correct(request, text: str) -> bool:
    return scoring.answer(request, [scoring.Response(text)]).correct
