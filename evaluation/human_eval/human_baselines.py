"""Human baselines: people answer a benchmark's own requests, scored by its scorer (see `evaluation.human_eval`)."""

from __future__ import annotations

import hashlib
import json
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass

from annotation.crowd import agreement
from annotation.crowd.models import Study, StudyItem
from annotation.models import BenchmarkVersion
from evaluation import answer_parsing, benchmarks, judges, model_metrics, scoring, subsets
from evaluation.benchmarks.base import HumanBaselineForm
from evaluation.human_eval.answer_judgments import (
    FREE_TYPES,
    JUDGE_KIND,
    answer_verdicts,
    answers_of,
    chosen_judge,
)
from evaluation.human_eval.base import (
    ANSWER,
    BASELINE,
    SOURCE,
    HumanEvalError,
    HumanStudy,
    _correct,
    _create_study,
    _drawn,
    _fraction,
    _mean,
    _normal_text,
    _plan,
    _source,
    _studies_for,
    counted_submissions,
    meta_of,
    register_kind,
    require_study_maker,
    studies_of,
)
from evaluation.human_eval.canvases import canvas_image
from evaluation.models import HumanBaselineMetric

CHOICE_TYPES = ("letter", "yes_no", "choice_12", "score_1_10")
TEXT_TYPES = ("number",)
# what one study may ask: choices, written numbers, or open-ended answers (judged), never a mix
TYPE_GROUPS = (("choices", CHOICE_TYPES), ("written numbers", TEXT_TYPES), ("free-text answers", FREE_TYPES))
FREE_ANSWER_LENGTH = (2, 1000)  # characters a free-text answer may have, at least and at most
FREE_INSTRUCTIONS = ("Watch the video (or look at the media) and answer the question in your own words, in one or "
                     "a few sentences. Say only what the media shows; if the question asks about something that "
                     "does not happen, say so.")
SCORE_ANCHORS = {1: "not plausible at all", 3: "slightly plausible", 5: "moderately plausible", 7: "very plausible",
                 10: "almost necessarily plausible"}
LIKELIHOOD_FIELDS = ("likelihood_1", "likelihood_2")
BASELINE_INSTRUCTIONS = "Answer each question about the media shown as well as you can."
CROWD = "crowd"  # who answers, by default (a baseline's `who`: crowd, expert)


def choices_for(request) -> list[dict]:
    """The options a person picks from: the request's own (letters with their texts), yes/no, 1/2, 1–10."""
    kind = request.answer_type
    if kind == "letter":
        return [{"id": letter, "text": f"{letter}. {text}"} for letter, text in (request.options or {}).items()]
    if kind == "yes_no":
        return [{"id": "yes", "text": "Yes"}, {"id": "no", "text": "No"}]
    if kind == "choice_12":
        return [{"id": "1", "text": "Hypothesis 1"}, {"id": "2", "text": "Hypothesis 2"}]
    if kind == "score_1_10":
        return [{"id": str(v), "text": f"{v}: {SCORE_ANCHORS[v]}" if v in SCORE_ANCHORS else str(v)}
                for v in range(1, 11)]
    raise HumanEvalError(f"No choices for answer type {kind!r}.")


def baseline_form(types: set[str], *, explanation: bool, certainty: bool, likelihood: bool) -> dict:
    if types <= set(FREE_TYPES):
        low, high = FREE_ANSWER_LENGTH
        return {"fields": [{"name": ANSWER, "type": "free_text", "label": "Your answer", "min_length": low,
                            "max_length": high, "help": "In your own words, from what the media shows."}]}
    if types <= set(TEXT_TYPES):
        return {"fields": [{"name": ANSWER, "type": "free_text", "label": "Your answer (a number)",
                            "min_length": 1, "max_length": 100}]}
    fields = [{"name": ANSWER, "type": "single_choice", "options_from": "choices", "label": "Your answer",
               "explanation": "required" if explanation else "none", "certainty": certainty}]
    if likelihood:
        fields += [{"name": name, "type": "likert", "min": 1, "max": 5,
                    "label": f"Hypothesis {number} alone: how likely is it given the premise?",
                    "labels": {"1": "Not likely at all", "5": "Very likely"}}
                   for number, name in enumerate(LIKELIHOOD_FIELDS, start=1)]
    return {"fields": fields}


def create_human_baseline_study(version, variants=(), *, curator, sample: int | None = None, seed: int = 0,
                                k: int = 3, answer_types=(), input_strategy: str = "default",
                                explanation: bool | None = None, certainty: bool | None = None,
                                likelihood: bool | None = None, name: str = "", slug: str | None = None,
                                instructions: str = "", open_now: bool = True, subset=None, who: str = CROWD,
                                **study_fields) -> HumanStudy:
    """People answer a version's own requests (see the package docstring). `subset`: a named subset of
    the version (`evaluation.subsets`, or its name) whose requests alone are asked, in place of `sample`;
    `who` answers (crowd, expert) names the Human row."""
    require_study_maker(curator)
    if not version.frozen:
        raise HumanEvalError(f"{version} is not frozen: a baseline is measured on a frozen version.")
    try:
        subset = subsets.find_subset(version, subset)
    except subsets.SubsetError as exc:
        raise HumanEvalError(exc.message, status=exc.status) from None
    if subset is not None and sample is not None:
        raise HumanEvalError("Ask a subset or a sample of items, not both.")
    meta = {"kind": BASELINE, "benchmark": version.benchmark.slug, "version": version.pk,
            "variants": list(variants), "answer_types": list(answer_types), "input_strategy": input_strategy,
            "sample": sample, "seed": seed, "who": who or CROWD}
    if subset is not None:
        meta["subset"] = subset.name
    try:
        planned = _plan(version, meta)
    except (KeyError, ImportError, ValueError) as exc:
        raise HumanEvalError(f"The requests of {version} cannot be planned: {exc}") from None
    if subset is not None:
        chosen = set(subset.request_ids)
        planned = [(item, [r for r in requests if r.request_id in chosen]) for item, requests in planned]
    if answer_types:
        planned = [(item, [r for r in requests if r.answer_type in answer_types]) for item, requests in planned]
    planned = [(item, requests) for item, requests in planned if requests]
    types = {r.answer_type for _, requests in planned for r in requests}
    if not types:
        raise HumanEvalError("No request of these variants and answer types.")
    unsupported = types - set(CHOICE_TYPES) - set(TEXT_TYPES) - set(FREE_TYPES)
    if unsupported:
        raise HumanEvalError(f"People's answers of type {', '.join(sorted(unsupported))} cannot be scored; a "
                             f"baseline takes {', '.join(CHOICE_TYPES + TEXT_TYPES + FREE_TYPES)}.")
    groups = [name for name, members in TYPE_GROUPS if types & set(members)]
    if len(groups) > 1:
        raise HumanEvalError(f"These requests mix {' and '.join(groups)} ({', '.join(sorted(types))}); "
                             "make one study per kind with answer_types.")
    if types <= set(FREE_TYPES):
        meta[JUDGE_KIND] = _free_judge(version, [r for _, requests in planned for r in requests])
    rich = _rich_form(version, types)
    explanation = (rich is not None and rich.explanation) if explanation is None else explanation
    certainty = (rich is not None and rich.certainty) if certainty is None else certainty
    likelihood = (rich is not None and rich.likelihood) if likelihood is None else likelihood
    by_item = {item.external_id: (item, requests) for item, requests in planned}
    rows, left_out = [], {}
    for external_id in _drawn(sorted(by_item), sample, seed, "baseline"):
        item, requests = by_item[external_id]
        for request in requests:
            try:
                rows.append(_baseline_row(item, request, curator, with_choices=bool(types & set(CHOICE_TYPES))))
            except HumanEvalError as exc:
                left_out[request.request_id] = exc.message
    if not rows:
        raise HumanEvalError("No request can be shown to people: " + "; ".join(
            f"{rid}: {why}" for rid, why in sorted(left_out.items())[:5]))
    items = _create_study(
        curator, name=name or f"Human baseline: {version} {', '.join(variants) or 'all variants'}", slug=slug,
        form=baseline_form(types, explanation=explanation, certainty=certainty, likelihood=likelihood), meta=meta,
        rows=rows, k=k, instructions=instructions or (rich and rich.instructions) or (
            FREE_INSTRUCTIONS if meta.get(JUDGE_KIND) else BASELINE_INSTRUCTIONS),
        open_now=open_now, seed=seed, **study_fields)
    return HumanStudy(items[0].study, items, left_out)


def _free_judge(version, requests) -> str:
    """The judge kind that scores people's free-text answers to these requests: the benchmark's own
    (`Benchmark.judge_kinds`), which must judge every one of them."""
    name = judges.kind_for_benchmark(version.benchmark.slug)
    judge_kind = judges.get_kind(name) if name else None
    unjudged = [r.request_id for r in requests if judge_kind is None or not judge_kind.applies(r)]
    if unjudged:
        raise HumanEvalError(f"People's free-text answers are scored by the benchmark's judge, and "
                             f"{version.benchmark.slug} has none for {', '.join(unjudged[:3])}"
                             f"{' …' if len(unjudged) > 3 else ''}.")
    return judge_kind.name


def _rich_form(version, types: set[str]) -> HumanBaselineForm | None:
    """The benchmark's own human-baseline form (`Benchmark.human_baseline_form`, NL-EYE triplets: an
    explanation, certainty and likelihoods) when the requests asked are all of its answer types."""
    form = getattr(benchmarks.find(version.benchmark.slug), "human_baseline_form", None)
    return form if form is not None and types == set(form.answer_types) else None


def _baseline_media(item, request, curator) -> dict:
    if any(medium.hidden or medium.segment for medium in request.media):
        # parts of a video: the benchmark's clip of exactly those parts (`Benchmark.human_clip`), or none
        benchmark = benchmarks.find(item.version.benchmark.slug)
        clip = benchmark.human_clip(item, request) if benchmark is not None else None
        if clip is None:
            raise HumanEvalError("it shows parts of a video, and there is no clip of just those parts to show")
        return {"video": clip}
    if not request.media:
        return {}
    if any(medium.asset_id is None for medium in request.media):
        raise HumanEvalError("the item lacks one of its media")
    kinds = {medium.kind for medium in request.media}
    if kinds == {"video"} and len(request.media) == 1:
        return {"video": item.media.filter(video_id=request.media[0].asset_id).select_related("video").first().video}
    if kinds != {"image"}:
        raise HumanEvalError("it shows several videos, or videos and images together")
    images = {link.image_id: link.image for link in item.media.filter(image__isnull=False).select_related("image")}
    if len(request.media) == 1:
        return {"image": images[request.media[0].asset_id]}
    panels = [(images[medium.asset_id], medium.label or medium.role) for medium in request.media]
    return {"image": canvas_image(panels, user=curator, title=f"{item.version.benchmark.slug} {request.request_id}")}


def _baseline_row(item, request, curator, *, with_choices: bool) -> dict:
    payload = {"question": request.prompt}
    if with_choices:
        payload["choices"] = choices_for(request)
    return {"external_id": request.request_id, "payload": payload, "benchmark_item": item,
            **_baseline_media(item, request, curator),
            "answer_key": {SOURCE: {"request_id": request.request_id, "item": request.item_id,
                                    "variant": request.variant, "answer_type": request.answer_type}}}


@dataclass
class _Answered:
    worker: int
    key: object  # what majority counts: the choice, a written number's parsed value, or the judge's label
    text: str  # the response the scorer reads
    data: dict
    verdict: dict | None = None  # free-text answers: the judge's verdict (None: not judged yet)


def _answer_of(request, data: dict, worker: int) -> _Answered | None:
    raw = data.get(ANSWER)
    if raw is None or str(raw).strip() == "":
        return None
    text = str(raw).strip()
    if request.answer_type in TEXT_TYPES:
        parsed = answer_parsing.parse_for_request(request, text)
        return _Answered(worker, parsed.value if parsed.ok else f"unparsed:{text.lower()}", text, data)
    return _Answered(worker, text, text, data)


def aggregate(request, answers: list[_Answered]) -> tuple[_Answered, bool]:
    """The request's answer from its annotators' (in submission order): the majority (a tie goes to the
    answer given first), or for 1–10 scores the lower median. Second value: whether there was a tie."""
    if request.answer_type == "score_1_10":
        median = statistics.median_low(int(a.key) for a in answers)
        return next(a for a in answers if int(a.key) == median), False
    counts = Counter(a.key for a in answers)
    top = max(counts.values())
    leaders = [key for key, count in counts.items() if count == top]
    winner = next(a for a in answers if a.key in leaders)
    return winner, len(leaders) > 1


def _baseline_groups(studies) -> dict[tuple, list[Study]]:
    """Studies that ask the same requests and are read as one Human row: of one version, input strategy
    and seed; studies over a subset go by the subset and whether a judge scores them."""
    groups: dict[tuple, list[Study]] = defaultdict(list)
    for study in studies:
        meta = meta_of(study)
        key = (meta.get("version"), meta.get("input_strategy", "default"), int(meta.get("seed", 0)))
        if meta.get("subset"):
            key += (meta["subset"], meta.get(JUDGE_KIND) or "")
        groups[key].append(study)
    return groups


def human_baseline_results(target, *, clip=None) -> dict:
    """The people's answers scored like a model's (see the package docstring). `target`: a baseline
    study or studies of one version, input strategy and seed (and subset). `clip`: a loaded CLIP model
    for the CLIP score of written answers; without one, the CLIP score stored by `score_human_baseline`
    for these very answers is shown (`model_metrics`)."""
    studies, _ = _studies_for(BASELINE, target)
    if not studies:
        raise HumanEvalError("No human baseline study given.")
    if len(_baseline_groups(studies)) != 1:
        raise HumanEvalError("These baseline studies differ in version, input strategy, seed or subset: the same "
                             "request would not be the same question; read them one group at a time.")
    meta = meta_of(studies[0])
    version = BenchmarkVersion.objects.select_related("benchmark").get(pk=meta["version"])
    asked = {_source(item).get("request_id")
             for item in StudyItem.objects.filter(study__in=studies, role=StudyItem.Role.REGULAR)}
    variants = sorted({variant for study in studies for variant in meta_of(study).get("variants") or ()})
    plan_meta = {**meta, "variants": variants if all(meta_of(s).get("variants") for s in studies) else []}
    requests = [r for _, found in _plan(version, plan_meta) for r in found if r.request_id in asked]
    by_id = {request.request_id: request for request in requests}
    counted, counts = counted_submissions(studies)
    answers: dict[str, list[_Answered]] = defaultdict(list)
    judge_name = meta.get(JUDGE_KIND) or ""
    judge_used, verdicts = _free_verdicts(studies, judge_name)
    for submission in counted:
        request = by_id.get(_source(submission.claim.item).get("request_id"))
        found = _answer_of(request, submission.final_data or {}, submission.claim.worker_id) if request else None
        if found is not None and judge_name:
            found.verdict = verdicts.get(submission.pk)
            label = judges.get_kind(judge_name).label(found.verdict) if found.verdict is not None else None
            found.key = label if label is not None else ("unjudged" if found.verdict is None else "other")
        if found is not None:
            answers[request.request_id].append(found)
    # only items whose every asked request has an answer are scored: the metrics that join requests
    # (both hypothesis orders, a question's eight pairs, original and counterfactual) stay whole
    incomplete = {r.item_id for r in requests if r.request_id not in answers}
    scored = [r for r in requests if r.item_id not in incomplete]
    predictions, ties = [], 0
    for request in scored:
        given = answers[request.request_id]
        if judge_name and any(a.verdict is None for a in given):
            # an answer not judged yet: the request has no verdict, and the judged metrics wait for it
            predictions.append({"request_id": request.request_id, "sample": 0, "response": given[0].text,
                                "judgment": None})
            continue
        chosen, tied = aggregate(request, given)
        ties += tied
        predictions.append({"request_id": request.request_id, "sample": 0, "response": chosen.text,
                            "judgment": chosen.verdict})
    benchmark = benchmarks.get(version.benchmark.slug)
    models = dict.fromkeys(benchmark.scoring_models)
    if clip is not None and "clip" in models:
        models["clip"] = clip
    metrics = scoring.score_predictions(benchmark, scored, predictions, **models)
    state = answers_state(predictions)
    used = [] if clip is not None else _overlay(studies, metrics, state)
    workers = {a.worker for given in answers.values() for a in given}
    return {"kind": BASELINE, "studies": [study.slug for study in studies], "benchmark": version.benchmark.slug,
            "who": meta.get("who") or CROWD, "subset": meta.get("subset") or "", "answers_state": state,
            "model_metrics": used,
            "version": version.pk, "input_strategy": meta.get("input_strategy", "default"),
            "seed": int(meta.get("seed", 0)), "submissions": counts, "requests": len(requests),
            "answered": len(answers), "scored": len(scored), "items_waiting": len(incomplete),
            "annotators": len(workers), "aggregation": "majority", "ties": ties,
            "metrics": metrics, "per_annotator": per_annotator(by_id, answers, judge_name),
            "agreement": _baseline_agreement(answers), "likelihood": _likelihoods(by_id, answers),
            "judge": judge_used, "unjudged_answers": sum(a.verdict is None for given in answers.values()
                                                         for a in given) if judge_name else 0}


def answers_state(predictions: list[dict]) -> str:
    """A fingerprint of the answers a baseline's metrics were computed from (request, answer text)."""
    shown = sorted((p["request_id"], p["response"]) for p in predictions)
    return hashlib.sha256(json.dumps(shown, ensure_ascii=False).encode()).hexdigest()


def _overlay(studies: list[Study], metrics: dict, state: str) -> list[dict]:
    """Put the stored model metrics of this baseline into `metrics`: as computed when they were computed
    from these answers, else "not computed" with the reason. What was used, for the pages."""
    slugs = [study.slug for study in studies]
    used = []
    for row in HumanBaselineMetric.objects.filter(study=studies[0]):
        current = row.answers_state == state and list(row.studies) == slugs
        stale = scoring.not_computed(f"{row.kind} ({row.model_id}) was computed on {row.computed_at:%Y-%m-%d %H:%M} "
                                     f"from other answers; run `manage.py human_eval score` again")
        for path, value in row.values.items():
            model_metrics.put(metrics, path, value if current else stale)
        used.append({"kind": row.kind, "model": row.model_id, "computed_at": row.computed_at.isoformat(),
                     "current": current})
    return used


def score_human_baseline(target, *, clip, model_id: str) -> HumanBaselineMetric:
    """Compute the CLIP score of a baseline's written answers with `clip` (loaded from `model_id`) and keep
    it (`HumanBaselineMetric`), so that the leaderboard's Human row shows it while the answers stay the same."""
    studies, _ = _studies_for(BASELINE, target)
    found = human_baseline_results(studies, clip=clip)
    values = model_metrics.extract(found["metrics"], "clip")
    if not values:
        raise HumanEvalError("No CLIP score was computed: the baseline has no scored written answer yet.")
    row, _ = HumanBaselineMetric.objects.update_or_create(
        study=studies[0], kind="clip", defaults={"studies": found["studies"], "model_id": model_id,
                                                 "values": values, "answers_state": found["answers_state"]})
    return row


def _free_verdicts(studies, judge_name: str) -> tuple[dict | None, dict[int, dict]]:
    """Free-text baselines: the judge model used (`answer_judgments.chosen_judge`) and submission id →
    its verdict; (None, {}) for the other baselines or before any answer is judged."""
    if not judge_name:
        return None, {}
    used = chosen_judge(studies, judge_name)
    if used is None:
        return None, {}
    found = answer_verdicts(studies, judge_name, used["model"], answers_of(studies))
    return {**used, "verdicts": len(found)}, found


def per_annotator(requests: dict, answers: dict[str, list[_Answered]], judge_name: str = "") -> dict:
    """Each annotator's accuracy over the requests they answered (right/wrong answer types only; free-text
    answers by their judge verdict, those without a correct/incorrect verdict left out), and the mean
    over annotators; `pooled_accuracy` is the share of all their answers that are right."""
    right: dict[int, list[bool]] = defaultdict(list)
    judge_kind = judges.get_kind(judge_name) if judge_name else None
    for request_id, given in answers.items():
        request = requests[request_id]
        if request.answer_type == "score_1_10":
            continue
        for answer in given:
            if judge_kind is not None:
                correct = judge_kind.correct(answer.verdict) if answer.verdict is not None else None
                if correct is not None:
                    right[answer.worker].append(correct)
                continue
            right[answer.worker].append(_correct(request, answer.text))
    accuracies = {worker: sum(found) / len(found) for worker, found in right.items()}
    return {"annotators": len(accuracies), "mean_accuracy": _mean(accuracies.values()),
            "pooled_accuracy": _fraction(sum(sum(found) for found in right.values()),
                                         sum(len(found) for found in right.values())),
            "answers": sum(len(found) for found in right.values()),
            "accuracy_by_annotator": {str(worker): value for worker, value in sorted(accuracies.items())}}


def _baseline_agreement(answers: dict[str, list[_Answered]]) -> dict:
    """Agreement among annotators on their answers (free-text answers: on their judge labels, judged ones only)."""
    units = {request_id: {a.worker: str(a.key) for a in given if a.key not in ("unjudged", "other")}
             for request_id, given in answers.items()}
    return {"unanimous_share": agreement.unanimous_share(agreement.ratings_from_units(units)).as_dict(),
            "alpha_nominal": agreement.krippendorff_alpha(units, agreement.NOMINAL).as_dict()}


def _likelihoods(requests: dict, answers: dict[str, list[_Answered]]) -> dict | None:
    """NL-EYE triplets: the mean 1–5 likelihood people gave the plausible and the implausible hypothesis."""
    plausible, implausible = [], []
    for request_id, given in answers.items():
        request = requests[request_id]
        shown = request.extra.get("shown") or []
        for answer in given:
            for position, name in enumerate(LIKELIHOOD_FIELDS, start=1):
                value = answer.data.get(name)
                if value is None or position >= len(shown):
                    continue
                side = plausible if shown[position] == request.extra.get("gold_source") else implausible
                side.append(int(value))
    if not plausible and not implausible:
        return None
    return {"plausible_mean": _mean(plausible), "implausible_mean": _mean(implausible),
            "ratings": len(plausible) + len(implausible)}


def baseline_groups(version) -> list[list[Study]]:
    """The version's baseline studies, in groups that ask the same requests (input strategy and seed)."""
    return list(_baseline_groups(studies_of(BASELINE, version=version)).values())


def gold_explanations(baseline_studies, requests: dict) -> dict[str, list[tuple[str, dict]]]:
    """request id → (explanation, source) of the people who picked the gold answer in a baseline study."""
    found: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    counted, _ = counted_submissions(baseline_studies)
    for submission in counted:
        source = _source(submission.claim.item)
        request = requests.get(source.get("request_id"))
        data = submission.final_data or {}
        explanation = _normal_text(data.get(f"{ANSWER}_explanation"))
        if request is None or not explanation or str(data.get(ANSWER)) != str(request.gold):
            continue
        found[request.request_id].append((explanation, {
            "kind": "human", "study": submission.claim.study.slug, "submission": submission.pk,
            "worker": submission.claim.worker_id, "request_id": request.request_id}))
    return found


register_kind(BASELINE, results=human_baseline_results)
