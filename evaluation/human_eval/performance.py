"""A paper's human performance as human baselines over named subsets (`Benchmark.human_performance`;
BlackSwanSuite §5.2: an expert answers 150 questions per MCQ and Y/N task, crowd workers write the
generative answers for 20 videos).

`create_expert_baseline(version, curator=…, seed=…)` draws (or reuses) the subset `human-expert-s<seed>`
of the benchmark's expert variants, `per_group` requests each (default the benchmark's), and makes a
human-baseline study over it answered by one person per request (`k=1`), open only to holders of
`qualification` when one is given (the engine's `Study.required_qualification`). `create_written_baseline`
draws the subset `human-written-s<seed>` of `items` items (videos) of the written variants, every written
request of each, and makes a baseline study of free-text answers (`k` people per request, 1 by default),
judged by the benchmark's judge like the models' answers (`manage.py human_eval judge`) and scored with
its CLIP model by `manage.py human_eval score` (`baselines.score_human_baseline`).

Both are ordinary human baselines (`baselines.create_human_baseline_study` with `subset` and `who`), read by
`human_baseline_results` with the benchmark's own scorer and shown as Human rows on the leaderboard. The
subset and the study are made together: when the study cannot be made, no subset is left behind.
"""

from __future__ import annotations

from django.db import transaction

from evaluation import benchmarks, subsets
from evaluation.human_eval.base import HumanEvalError, HumanStudy, require_study_maker
from evaluation.human_eval.human_baselines import create_human_baseline_study
from evaluation.models import VersionSubset

EXPERT, WRITTEN = "expert", "crowd"
EXPERT_INSTRUCTIONS = ("Watch the clip and answer each question as well as you can: pick the option that "
                       "describes the video, or say whether the hypothesis holds.")


def defaults_of(version):
    """The benchmark's human-performance draws (`Benchmark.human_performance`); HumanEvalError when none."""
    benchmark = benchmarks.find(version.benchmark.slug)
    found = getattr(benchmark, "human_performance", None)
    if found is None:
        raise HumanEvalError(f"{version.benchmark.slug} declares no human performance study.")
    return found


def subset_for(version, name: str, *, seed: int, per_group: int, variants, videos: int | None,
               user) -> VersionSubset:
    """The version's subset `name` when it was drawn with these parameters, else a new one; SubsetError
    (409) when the name is taken by another draw."""
    found = VersionSubset.objects.filter(version=version, name=name).first()
    if found is None:
        return subsets.make_subset(version, name, seed=seed, per_group=per_group, variants=list(variants),
                                   videos=videos, user=user)
    if (found.seed, found.per_group, found.items, list(found.variants)) != (seed, per_group, videos, list(variants)):
        raise subsets.SubsetError(f"{version} already has a subset {name!r} drawn otherwise; name another.",
                                  status=409)
    return found


def _make(version, *, curator, subset: str, draw: dict, study: dict) -> HumanStudy:
    require_study_maker(curator)
    try:
        with transaction.atomic():
            chosen = (subsets.find_subset(version, subset) if subset
                      else subset_for(version, user=curator, **draw))
            return create_human_baseline_study(version, curator=curator, subset=chosen, **study)
    except subsets.SubsetError as exc:
        raise HumanEvalError(exc.message, status=exc.status) from None


def create_expert_baseline(version, *, curator, seed: int = 0, per_group: int | None = None, subset: str = "",
                           qualification=None, name: str = "", slug: str | None = None,
                           open_now: bool = True) -> HumanStudy:
    """An expert answers `per_group` requests per expert variant (see the module docstring)."""
    found = defaults_of(version)
    per_group = found.expert_per_group if per_group is None else per_group
    draw = {"name": f"human-expert-s{seed}", "seed": seed, "per_group": per_group,
            "variants": found.expert_variants, "videos": None}
    study = {"variants": found.expert_variants, "k": 1, "seed": seed, "input_strategy": found.input_strategy,
             "who": EXPERT, "name": name or f"Expert baseline: {version}", "slug": slug, "open_now": open_now,
             "instructions": EXPERT_INSTRUCTIONS, "required_qualification": qualification}
    return _make(version, curator=curator, subset=subset, draw=draw, study=study)


def create_written_baseline(version, *, curator, seed: int = 0, videos: int | None = None, subset: str = "",
                            k: int = 1, name: str = "", slug: str | None = None, open_now: bool = True) -> HumanStudy:
    """People write the answers to every written variant's request of `videos` items (see the module docstring)."""
    found = defaults_of(version)
    if not found.written_variants:
        raise HumanEvalError(f"{version.benchmark.slug} has no written human answers to collect.")
    videos = found.written_items if videos is None else videos
    draw = {"name": f"human-written-s{seed}", "seed": seed, "per_group": subsets.DEFAULT_PER_GROUP,
            "variants": found.written_variants, "videos": videos}
    study = {"variants": found.written_variants, "k": k, "seed": seed, "input_strategy": found.input_strategy,
             "who": WRITTEN, "name": name or f"Written human answers: {version}", "slug": slug,
             "open_now": open_now}
    return _make(version, curator=curator, subset=subset, draw=draw, study=study)
