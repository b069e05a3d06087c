"""Rating BlackSwan's generated responses: the study and its results (see `evaluation.human_eval`)."""

from __future__ import annotations

from collections import defaultdict

from annotation.crowd import agreement
from evaluation import runner
from evaluation.human_eval.base import (
    RATING,
    SOURCE,
    HumanEvalError,
    HumanStudy,
    _as_list,
    _create_study,
    _drawn,
    _mean,
    _one_version,
    _runs_by_pk,
    _source,
    _studies_for,
    _usable,
    _video_of,
    counted_submissions,
    register_kind,
    require_study_maker,
)
from evaluation.models import EvaluationRun

GEN_VARIANTS = ("forecaster_gen", "detective_gen", "reporter_gen")
SCALES = (
    {"name": "correctness", "label": "Correctness: how well does the response answer the task's question?",
     "min": 1, "max": 5, "labels": {"1": "Does not answer it at all", "5": "Answers it fully and correctly"}},
    {"name": "depth", "label": "Depth and thoughtfulness: how thoughtful is the response?",
     "min": 1, "max": 5, "labels": {"1": "Shallow, no thought", "5": "Deep and thoughtful"}},
    {"name": "detail", "label": "Level of detail: how well does it describe the scene, the people or objects and "
                                "the actions?",
     "min": 1, "max": 5, "labels": {"1": "No detail", "5": "Scene, people/objects and actions in full detail"}},
)
ENTAILMENT = "visual_entailment"
ENTAILMENT_OPTIONS = [{"id": "1", "text": "1: yes, what it describes is possible given the video"},
                      {"id": "0", "text": "0: no, the video rules it out"}]
SCALE_NAMES = (*(scale["name"] for scale in SCALES), ENTAILMENT)
TASK_LABELS = {
    "forecaster_gen": "Forecaster: the model saw only the beginning of the video and says what happens next.",
    "detective_gen": "Detective: the model saw the beginning and the end (not the middle) and says what happened "
                     "in the middle.",
    "reporter_gen": "Reporter: the model saw the whole video and describes it.",
}
RATING_INSTRUCTIONS = (
    "Watch the video, read the task, the reference answer(s) people wrote and the response to rate. "
    "Rate the response on each scale; Visual Entailment asks whether what it describes is possible given "
    "the video.")


def rating_form() -> dict:
    fields = [{"type": "likert", **scale} for scale in SCALES]
    fields.append({"name": ENTAILMENT, "type": "single_choice", "options": ENTAILMENT_OPTIONS,
                   "label": "Visual entailment: is the description possible with respect to the video shown?"})
    return {"fields": fields}


def create_rating_study(runs, *, curator, variants=GEN_VARIANTS, sample: int | None = None, seed: int = 0,
                        k: int = 3, all_samples: bool = False, name: str = "", slug: str | None = None,
                        instructions: str = "", open_now: bool = True, **study_fields) -> HumanStudy:
    """A rating study over BlackSwan runs' generated responses (see the package docstring)."""
    require_study_maker(curator)
    runs = _as_list(runs)
    version = _one_version(runs, RATING)
    variants = tuple(variants)
    unknown = sorted(set(variants) - set(GEN_VARIANTS))
    if unknown or not variants:
        raise HumanEvalError(f"Ratings are for the Gen variants ({', '.join(GEN_VARIANTS)}), not "
                             f"{', '.join(unknown) or 'nothing'}.")
    planned = {run.pk: {p.request.request_id: p.request for p in runner.plan(run) if p.request.variant in variants}
               for run in runs}
    usable: dict[int, dict[str, list]] = defaultdict(dict)  # run → request id → predictions to rate
    variant_of: dict[str, str] = {}
    for run in runs:
        found = run.predictions.filter(variant__in=variants).select_related("item").order_by("request_id",
                                                                                             "sample_index")
        for prediction in found:
            if not _usable(prediction) or prediction.request_id not in planned[run.pk] \
                    or not (all_samples or prediction.sample_index == 0):
                continue
            usable[run.pk].setdefault(prediction.request_id, []).append(prediction)
            variant_of[prediction.request_id] = prediction.variant
    rows, left_out = [], {}
    for variant in variants:
        candidates = sorted(rid for rid, found in variant_of.items() if found == variant)
        for request_id in _drawn(candidates, sample, seed, f"rating:{variant}"):
            for run in runs:
                predictions = usable[run.pk].get(request_id)
                if not predictions:
                    left_out[f"run {run.pk} {request_id}"] = "no usable response (missing, failed or empty)"
                    continue
                rows.extend(_rating_row(run, planned[run.pk][request_id], p) for p in predictions)
    meta = {"kind": RATING, "benchmark": version.benchmark.slug, "version": version.pk,
            "runs": [run.pk for run in runs], "variants": list(variants), "sample": sample, "seed": seed,
            "all_samples": all_samples}
    items = _create_study(curator, name=name or f"Rating: {version} runs {', '.join(str(r.pk) for r in runs)}",
                          slug=slug, form=rating_form(), meta=meta, rows=rows, k=k,
                          instructions=instructions or RATING_INSTRUCTIONS, open_now=open_now, seed=seed,
                          **study_fields)
    return HumanStudy(items[0].study, items, left_out)


def _rating_row(run: EvaluationRun, request, prediction) -> dict:
    return {
        "external_id": f"response-{prediction.pk}",
        "payload": {"task": TASK_LABELS[request.variant], "question": request.text,
                    "references": [str(text) for text in request.gold or []],
                    "response": prediction.raw_output.strip()},
        "answer_key": {SOURCE: {"run": run.pk, "prediction": prediction.pk, "request_id": prediction.request_id,
                                "sample": prediction.sample_index, "variant": request.variant,
                                "item": request.item_id}},
        "benchmark_item": prediction.item, "video": _video_of(prediction.item),
    }


def _rating_value(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _scale_figures(units: dict[str, dict[int, dict]]) -> dict:
    """Per scale: mean over responses of their raters' mean, n responses and ratings, Krippendorff's alpha."""
    out = {}
    for name in SCALE_NAMES:
        by_item = {item: ratings for item, ratings in units.get(name, {}).items() if ratings}
        level = agreement.NOMINAL if name == ENTAILMENT else agreement.ORDINAL
        out[name] = {"mean": _mean(_mean(ratings.values()) for ratings in by_item.values()),
                     "items": len(by_item), "ratings": sum(map(len, by_item.values())),
                     "alpha": agreement.krippendorff_alpha(by_item, level).as_dict()}
    return out


def rating_results(target) -> dict:
    """Mean ratings per run and variant and per run, with n and agreement (see the package docstring)."""
    studies, only_run = _studies_for(RATING, target)
    counted, counts = counted_submissions(studies)
    by_group: dict[tuple, dict] = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    overall: dict = defaultdict(lambda: defaultdict(dict))
    for submission in counted:
        item = submission.claim.item
        source = _source(item)
        if only_run is not None and source.get("run") != only_run.pk:
            continue
        data = submission.final_data or {}
        for name in SCALE_NAMES:
            value = _rating_value(data.get(name))
            if value is None:
                continue
            for group in ((source.get("run"), source.get("variant")), (source.get("run"), None)):
                by_group[group][name][item.pk][submission.claim.worker_id] = value
            overall[name][item.pk][submission.claim.worker_id] = value
    runs = _runs_by_pk(run for run, _ in by_group)
    groups, models = [], []
    for (run_pk, variant), units in sorted(by_group.items(), key=lambda pair: (pair[0][0], pair[0][1] or "~")):
        run = runs.get(run_pk)
        row = {"run": run_pk, "model": run.model_id if run else "", "variant": variant,
               "scales": _scale_figures(units)}
        row["means"] = {name: figures["mean"] for name, figures in row["scales"].items()}
        row["items"] = max((figures["items"] for figures in row["scales"].values()), default=0)
        (groups if variant else models).append(row)
    return {"kind": RATING, "studies": [study.slug for study in studies], "submissions": counts,
            "scales": [*({"name": s["name"], "min": s["min"], "max": s["max"]} for s in SCALES),
                       {"name": ENTAILMENT, "min": 0, "max": 1}],
            "groups": groups, "models": models, "overall": _scale_figures(overall)}


register_kind(RATING, results=rating_results, create=create_rating_study)
