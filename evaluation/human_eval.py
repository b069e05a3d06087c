"""Human evaluation through the crowd engine, with results shaped to sit beside the models'.

Three kinds of study, each an ordinary form study of `annotation.crowd` (claims, drafts, submissions,
review), made from evaluation runs or from a frozen version's own requests:

- **Rating** of BlackSwan's generated responses (seeds/000 §5.1, SPEC §1 "Human rating"):
  `create_rating_study(runs, …)`, one item per prediction of the Gen variants, showing the task's
  question, the reference(s), the response and the item's video; the form asks Correctness,
  Depth/Thoughtfulness and Level of Detail (1–5, labelled ends) and Visual Entailment (0/1).
  `sample` draws that many questions per variant (seeded), the same questions for every run, so the
  models are rated on the same ground; by default each question's first response is rated
  (`all_samples` rates all three of Forecaster/Detective). `rating_results(study or run)`: per run
  and variant (and per run over its variants) the mean of each scale, with n (responses rated,
  ratings) and Krippendorff's alpha per scale (ordinal for the 1–5 scales, nominal for 0/1). A
  response's mean over its raters counts once, so a response with more raters weighs no more.
- **Explanation voting** for NL-EYE (seeds/002 §4.2, App. E.2; SPEC §3): `create_explanation_vote_study
  (runs, …)`, one item per triplet request (hypothesis order as the models saw it), the images on one
  canvas with the more plausible hypothesis marked, and every distinct explanation given with a
  correct answer to that request (models' responses; optionally the human baseline's explanations)
  as candidates of a multi-select, shuffled per worker; three voters by default.
  `explanation_results(study or run)`: an explanation is valid when at least one voter selected it
  (§4.2: "correct if at least one worker selected it"); per run (and for the people's explanations)
  the share of valid explanations, n, and the distribution of votes (0 … k of k voters, Table 9);
  and, for runs with stored `nleye_explanation` judgments, `judges.agreement_report` of the judge
  against the people. People only say valid or not, so a valid explanation is given the judge's
  label 2 and an invalid one 0: the report's `binary` block (valid vs not) is the comparable figure.
  `validated_human_explanations` lists, per triplet, the people's explanations voted valid: the
  references NL-EYE's judge adds to the gold (`human_explanations` of a triplet, for a next version).
- **Human baseline**: `create_human_baseline_study(version, variants, …)`, people answer the
  benchmark's own requests (as `scoring.item_requests` plans them, the prompt the models get) with a
  form built from the request: options → a single choice (letters with their texts, yes/no,
  hypothesis 1/2, a 1–10 score), counts → a short text. NL-EYE triplets also ask for an explanation,
  the certainty, and each hypothesis's likelihood 1–5 given the premise (App. E.2). `sample` draws
  benchmark items, so every request of a drawn item is asked (both hypothesis orders, all eight
  statement pairs of a MAIA question). `human_baseline_results(studies)`: one answer per request —
  the majority answer of its annotators (a tie goes to the answer given first; 1–10 scores take the
  lower median instead, being ordinal) — scored by the benchmark's own scorer over the requests the
  study asked, so the Human row has the same metrics as a model's. An item is scored once every one
  of its asked requests has an answer (until then it waits), so joined metrics stay whole.
  Majority, because the scorers' metrics join requests (NL-EYE consistency across both orders, MAIA
  pools, C-VQA drops) and need one answer per request, and the papers' human figures are the crowd's
  answer per question. The per-annotator accuracy averaged over annotators is reported beside it,
  with the share of unanimous requests and Krippendorff's alpha.

What counts: submissions on regular items that were approved or not sampled for review, read through
`final_data` (a reviewer's correction wins). Rejected ones are left out; those awaiting an expert are
counted apart (`pending`) and left out until decided.

Where things are recorded: a study's `form_schema["human_eval"]` names its kind, benchmark, version,
runs and drawing parameters; each item's `answer_key["source"]` (never sent to workers) names the
run, prediction, request and sample behind it, so raters stay blind to which model wrote what, and
`StudyItem.benchmark_item` links the frozen item.

Only curators and admins create these studies (`PermissionDenied` otherwise).
"""

from __future__ import annotations

import io
import random
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils.text import slugify
from PIL import Image as PILImage

from annotation.crowd import agreement, assignment, history
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from annotation.media import Incoming, MediaRejected, ingest
from annotation.models import BenchmarkVersion, MediaAsset
from config.roles import ADMIN, CURATOR, has_role
from evaluation import benchmarks, parsing, runner, scoring
from evaluation.benchmarks.base import RequestOptions, derived_seed
from evaluation.inputs import draw_canvas
from evaluation.models import EvaluationRun, Judgment

META = "human_eval"  # the study's record in its form_schema
SOURCE = "source"  # an item's record in its answer_key
RATING, VOTE, BASELINE = "blackswan_rating", "nleye_explanation_vote", "human_baseline"
COUNTED_REVIEW = (Submission.Review.APPROVED, Submission.Review.NOT_SAMPLED)

GEN_VARIANTS = ("forecaster_gen", "detective_gen", "reporter_gen")


class HumanEvalError(CrowdError):
    """A human-evaluation study that cannot be made or read as asked."""


@dataclass
class HumanStudy:
    study: Study
    items: list[StudyItem]
    left_out: dict[str, str] = field(default_factory=dict)  # what was not made into an item, and why


# --- Shared ------------------------------------------------------------------------------------

def require_curator(user) -> None:
    if not has_role(user, CURATOR, ADMIN):
        raise PermissionDenied("Only curators and admins create human-evaluation studies.")


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


def _one_version(runs: list[EvaluationRun], benchmark: str) -> BenchmarkVersion:
    versions = {run.version_id for run in runs}
    if len(versions) != 1:
        raise HumanEvalError("The runs of one study must be on the same benchmark version.")
    version = runs[0].version
    if version.benchmark.slug != benchmark:
        raise HumanEvalError(f"Run {runs[0].pk} is on {version.benchmark.slug}, not {benchmark}.")
    return version


def _unique_slug(name: str, slug: str | None) -> str:
    if slug:
        if Study.objects.filter(slug=slug).exists():
            raise HumanEvalError(f"A study with the slug {slug!r} already exists.", status=409)
        return slug
    base = slugify(name)[:56] or "human-eval"
    candidate, number = base, 1
    while Study.objects.filter(slug=candidate).exists():
        number += 1
        candidate = f"{base}-{number}"
    return candidate


def _create_study(user, *, name: str, slug: str | None, form: dict, meta: dict, rows: list[dict], k: int,
                  instructions: str, open_now: bool, seed: int, **study_fields) -> list[StudyItem]:
    if not rows:
        raise HumanEvalError("Nothing to put in the study.")
    random.Random(derived_seed(seed, f"{meta['kind']}:order")).shuffle(rows)  # no model's items in a row
    study_fields = {"expert_share": 0.0, "expert_first": 0, "gold_share": 0.0, **study_fields}
    state = Study.State.OPEN if open_now else Study.State.DRAFT
    with transaction.atomic():
        study = Study.objects.create(
            name=name, slug=_unique_slug(name, slug), step_kind="form", form_schema={**form, META: meta},
            state=state, annotators_per_item=k, instructions=instructions, created_by=user, **study_fields)
        items = assignment.add_items(study, rows)
        history.record("study", study.pk, "", state, actor=user, study=study,
                       reason=f"{meta['kind']}: {len(items)} item(s)")
    return items


def counted_submissions(studies) -> tuple[list[Submission], dict]:
    """The submissions results count (see the module docstring), and how many were left out."""
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


# --- Canvases of several images --------------------------------------------------------------------

def canvas_image(panels: list[tuple[object, str]], *, user, title: str):
    """The library Image of these (Image asset, label) panels side by side (evaluation.inputs' canvas),
    stored once: the same panels give the same file, which the library keeps a single time."""
    loaded = []
    for asset, label in panels:
        with asset.file.open("rb") as handle, PILImage.open(handle) as opened:
            loaded.append((opened.convert("RGB"), label))
    buffer = io.BytesIO()
    draw_canvas(loaded).save(buffer, format="PNG")
    size = buffer.tell()
    try:
        return ingest(Incoming(buffer, f"{slugify(title)[:80] or 'canvas'}.png", size), user=user, title=title,
                      source=MediaAsset.Source.DERIVED, probe=False)
    except MediaRejected as exc:
        if exc.existing is not None:
            return exc.existing
        raise HumanEvalError(f"The canvas for {title!r} cannot be stored: {exc.message}") from None


def _images_by_role(benchmark_item) -> dict:
    return {link.role: link.image for link in benchmark_item.media.filter(image__isnull=False).select_related("image")}


# --- 1. Rating BlackSwan's generated responses ----------------------------------------------------------

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


def _usable(prediction) -> bool:
    return not prediction.error and bool((prediction.raw_output or "").strip())


def _drawn(candidates: list[str], sample: int | None, seed: int, key: str) -> list[str]:
    """`sample` of the candidates (all when None), drawn with a seed of their own, in their order."""
    if sample is None or sample >= len(candidates):
        return list(candidates)
    chosen = set(random.Random(derived_seed(seed, key)).sample(sorted(candidates), max(0, sample)))
    return [candidate for candidate in candidates if candidate in chosen]


def create_rating_study(runs, *, curator, variants=GEN_VARIANTS, sample: int | None = None, seed: int = 0,
                        k: int = 3, all_samples: bool = False, name: str = "", slug: str | None = None,
                        instructions: str = "", open_now: bool = True, **study_fields) -> HumanStudy:
    """A rating study over BlackSwan runs' generated responses (see the module docstring)."""
    require_curator(curator)
    runs = _as_list(runs)
    version = _one_version(runs, "blackswan")
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
    meta = {"kind": RATING, "benchmark": "blackswan", "version": version.pk, "runs": [run.pk for run in runs],
            "variants": list(variants), "sample": sample, "seed": seed, "all_samples": all_samples}
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


def rating_results(target) -> dict:
    """Mean ratings per run and variant and per run, with n and agreement (see the module docstring)."""
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


# --- 2. NL-EYE explanation voting ----------------------------------------------------------------------

VOTE_FIELD = "valid"
JUDGE_VALID, JUDGE_NOT_LOGICAL = 2, 0  # the NL-EYE judge's labels a person's valid / not valid stands for
VOTE_INSTRUCTIONS = (
    "The picture shows a premise and two hypotheses; the more plausible hypothesis is marked. Select **all** "
    "explanations that are logical and justify why the marked hypothesis is more plausible than the other. "
    "Select none if none does.")


def vote_form() -> dict:
    return {"fields": [{"name": VOTE_FIELD, "type": "multi_select", "candidates_from": "candidates", "shuffle": True,
                        "min_selected": 0,
                        "label": "Which explanations are logical and justify the marked hypothesis?"}]}


def _normal_text(text: str) -> str:
    return re.sub(r"\s+", " ", str(text or "")).strip()


def _correct(request, text: str) -> bool:
    return scoring.answer(request, [scoring.Response(text)]).correct


def _human_explanations(baseline_studies, requests: dict) -> dict[str, list[tuple[str, dict]]]:
    """request id → (explanation, source) of the people who picked the gold hypothesis in a baseline study."""
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


def create_explanation_vote_study(runs, *, curator, baseline_studies=(), sample: int | None = None, seed: int = 0,
                                  k: int = 3, name: str = "", slug: str | None = None, instructions: str = "",
                                  open_now: bool = True, **study_fields) -> HumanStudy:
    """An NL-EYE explanation vote over runs' correct triplet answers (see the module docstring)."""
    require_curator(curator)
    runs = _as_list(runs)
    version = _one_version(runs, "nleye")
    baseline_studies = list(baseline_studies)
    for study in baseline_studies:
        if kind_of(study) != BASELINE or meta_of(study).get("version") != version.pk:
            raise HumanEvalError(f"{study.slug} is not a human baseline study of {version}.")
    requests = {}
    for run in runs:
        requests.update({p.request.request_id: p.request for p in runner.plan(run) if p.request.variant == "triplet"})
    candidates: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for run in runs:
        for prediction in run.predictions.filter(variant="triplet").order_by("request_id", "sample_index"):
            request = requests.get(prediction.request_id)
            if request is None or not _usable(prediction) or not _correct(request, prediction.raw_output):
                continue
            candidates[request.request_id].append((_normal_text(prediction.raw_output), {
                "kind": "model", "run": run.pk, "prediction": prediction.pk, "request_id": request.request_id,
                "sample": prediction.sample_index}))
    for request_id, found in _human_explanations(baseline_studies, requests).items():
        candidates[request_id].extend(found)
    items = {item.external_id: item for item in version.items.filter(external_id__in={
        r.item_id for r in requests.values()})}
    chosen = _drawn(sorted(candidates), sample, seed, "vote")
    rows = [_vote_row(requests[request_id], candidates[request_id], items[requests[request_id].item_id], curator)
            for request_id in chosen]
    left_out = dict.fromkeys(sorted(set(requests) - set(candidates)), "no correct answer to vote on")
    meta = {"kind": VOTE, "benchmark": "nleye", "version": version.pk, "runs": [run.pk for run in runs],
            "baseline_studies": [study.slug for study in baseline_studies], "sample": sample, "seed": seed}
    made = _create_study(curator, name=name or f"Explanation votes: {version}", slug=slug, form=vote_form(),
                         meta=meta, rows=rows, k=k, instructions=instructions or VOTE_INSTRUCTIONS,
                         open_now=open_now, seed=seed, **study_fields)
    return HumanStudy(made[0].study, made, left_out)


def _shown_labels(request) -> list[tuple[str, str]]:
    """(source role, label) of the images in the order the request shows them, the gold one marked."""
    shown = request.extra.get("shown") or ["premise", "hypothesis1", "hypothesis2"]
    gold = request.extra.get("gold_source")
    labels = []
    for position, role in enumerate(shown):
        label = "Premise" if position == 0 else f"Hypothesis {position}"
        labels.append((role, f"{label} (more plausible)" if role == gold else label))
    return labels


def _vote_row(request, found: list[tuple[str, dict]], benchmark_item, curator) -> dict:
    """One vote item: the request's distinct explanations (the same text given twice is one candidate,
    whose votes count for each prediction that gave it) over the images as the request showed them."""
    candidate_of: dict[str, str] = {}  # text, lower case → candidate id
    texts: dict[str, str] = {}  # candidate id → its text as first given
    sources: dict[str, list[dict]] = defaultdict(list)
    for text, source in found:
        candidate = candidate_of.setdefault(text.lower(), f"c{len(candidate_of) + 1}")
        texts.setdefault(candidate, text)
        sources[candidate].append(source)
    labels = _shown_labels(request)
    gold_position = next(i for i, (role, _) in enumerate(labels) if role == request.extra.get("gold_source"))
    payload = {"task": "Which explanations justify the marked hypothesis?",
               "more_plausible": f"Hypothesis {gold_position}",
               "candidates": [{"id": candidate, "text": text} for candidate, text in texts.items()]}
    images = _images_by_role(benchmark_item)
    image = None
    if all(role in images for role, _ in labels):
        image = canvas_image([(images[role], label) for role, label in labels], user=curator,
                             title=f"NL-EYE {request.request_id} (vote)")
    else:  # no images: the scene descriptions stand in for them
        payload.update({("premise" if position == 0 else f"hypothesis_{position}"): request.source.get(role, "")
                        for position, (role, _) in enumerate(labels)})
    runs = sorted({s["run"] for group in sources.values() for s in group if s["kind"] == "model"})
    return {"external_id": request.request_id, "payload": payload, "image": image, "benchmark_item": benchmark_item,
            "answer_key": {SOURCE: {"request_id": request.request_id, "item": request.item_id, "runs": runs,
                                    "candidates": dict(sources)}}}


def explanation_results(target) -> dict:
    """Validity (≥ 1 vote) and the vote distribution per run and for people's explanations, and the judge's
    agreement with the people (see the module docstring)."""
    studies, only_run = _studies_for(VOTE, target)
    counted, counts = counted_submissions(studies)
    voters: Counter = Counter()
    votes: dict[int, Counter] = defaultdict(Counter)
    for submission in counted:
        item = submission.claim.item
        voters[item.pk] += 1
        chosen = (submission.final_data or {}).get(VOTE_FIELD) or []
        votes[item.pk].update(str(candidate) for candidate in chosen)
    items = StudyItem.objects.filter(study__in=studies, role=StudyItem.Role.REGULAR).order_by("external_id", "pk")
    most = max([study.annotators_per_item for study in studies] + list(voters.values()) + [0])
    groups: dict[tuple, dict] = {}
    human_labels: dict[int, dict] = defaultdict(dict)  # run → (request id, sample) → the people's label
    for item in items:
        if not voters[item.pk]:
            continue
        for candidate, sources in _source(item).get("candidates", {}).items():
            count = votes[item.pk][candidate]
            for source in sources:
                if source["kind"] == "model":
                    if only_run is not None and source["run"] != only_run.pk:
                        continue
                    key = ("run", source["run"])
                    human_labels[source["run"]][(source["request_id"], source.get("sample", 0))] = \
                        JUDGE_VALID if count else JUDGE_NOT_LOGICAL
                else:
                    if only_run is not None:
                        continue
                    key = ("humans", None)
                group = groups.setdefault(key, {"explanations": 0, "valid": 0, "votes": Counter()})
                group["explanations"] += 1
                group["valid"] += bool(count)
                group["votes"][count] += 1
    runs = _runs_by_pk(pk for kind, pk in groups if kind == "run")
    validated: dict[str, list[str]] = defaultdict(list)  # triplet → people's explanations voted valid
    for item in items:
        texts = {c["id"]: c["text"] for c in item.payload.get("candidates", [])}
        for candidate, sources in _source(item).get("candidates", {}).items():
            if votes[item.pk][candidate] and any(s["kind"] == "human" for s in sources):
                found = validated[_source(item).get("item", "")]
                found.extend([texts[candidate]] if texts[candidate] not in found else [])
    rows = []
    for (kind, run_pk), group in sorted(groups.items(), key=lambda pair: (pair[0][0] != "run", pair[0][1] or 0)):
        n = group["explanations"]
        run = runs.get(run_pk)
        rows.append({"group": kind, "run": run_pk, "model": run.model_id if run else "", "explanations": n,
                     "valid": group["valid"], "valid_rate": _fraction(group["valid"], n),
                     "votes": {str(v): group["votes"][v] for v in range(most + 1)},
                     "vote_shares": {str(v): _fraction(group["votes"][v], n) for v in range(most + 1)},
                     "judge_agreement": _judge_agreement(run, human_labels[run_pk]) if run else []})
    return {"kind": VOTE, "studies": [study.slug for study in studies], "submissions": counts,
            "voters_per_item": dict(sorted(Counter(voters.values()).items())), "groups": rows,
            "validated_human_explanations": dict(sorted(validated.items()))}


def _judge_agreement(run: EvaluationRun, human: dict) -> list[dict]:
    """`judges.agreement_report` of each judge model with stored NL-EYE explanation judgments on the run."""
    from evaluation import judges

    models = (Judgment.objects.filter(prediction__run=run, kind=judges.NleyeExplanationJudge.name)
              .exclude(parse_status=judges.FAILED).order_by().values_list("judge_model", flat=True).distinct())
    return [{"judge_model": model, **judges.run_agreement(run, judges.NleyeExplanationJudge.name, model,
                                                           human).as_dict()}
            for model in sorted(models)] if human else []


# --- 3. Human baselines --------------------------------------------------------------------------------

ANSWER = "answer"
CHOICE_TYPES = ("letter", "yes_no", "choice_12", "score_1_10")
TEXT_TYPES = ("number",)
SCORE_ANCHORS = {1: "not plausible at all", 3: "slightly plausible", 5: "moderately plausible", 7: "very plausible",
                 10: "almost necessarily plausible"}
LIKELIHOOD_FIELDS = ("likelihood_1", "likelihood_2")
BASELINE_INSTRUCTIONS = "Answer each question about the media shown as well as you can."
NLEYE_INSTRUCTIONS = (
    "The picture shows a premise and two hypotheses. Say which hypothesis is more plausible given the "
    "premise (the premise can happen before or after them), explain why in a sentence, say how certain you are, "
    "and then rate how likely each hypothesis is on its own given the premise. To answer many of these you "
    "have to notice small details and tell yourself the story behind the scenes.")


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


def _plan(version, meta: dict) -> list:
    options = RequestOptions(input_strategy=meta.get("input_strategy", "default"), prompting="standard",
                             seed=int(meta.get("seed", 0)))
    return [(item, requests) for item, requests in scoring.item_requests(version, options,
                                                                         tuple(meta.get("variants") or ()))]


def create_human_baseline_study(version, variants=(), *, curator, sample: int | None = None, seed: int = 0,
                                k: int = 3, answer_types=(), input_strategy: str = "default",
                                explanation: bool | None = None, certainty: bool | None = None,
                                likelihood: bool | None = None, name: str = "", slug: str | None = None,
                                instructions: str = "", open_now: bool = True, **study_fields) -> HumanStudy:
    """People answer a version's own requests (see the module docstring)."""
    require_curator(curator)
    if not version.frozen:
        raise HumanEvalError(f"{version} is not frozen: a baseline is measured on a frozen version.")
    meta = {"kind": BASELINE, "benchmark": version.benchmark.slug, "version": version.pk,
            "variants": list(variants), "answer_types": list(answer_types), "input_strategy": input_strategy,
            "sample": sample, "seed": seed}
    try:
        planned = _plan(version, meta)
    except (KeyError, ImportError, ValueError) as exc:
        raise HumanEvalError(f"The requests of {version} cannot be planned: {exc}") from None
    if answer_types:
        planned = [(item, [r for r in requests if r.answer_type in answer_types]) for item, requests in planned]
    planned = [(item, requests) for item, requests in planned if requests]
    types = {r.answer_type for _, requests in planned for r in requests}
    if not types:
        raise HumanEvalError("No request of these variants and answer types.")
    unsupported = types - set(CHOICE_TYPES) - set(TEXT_TYPES)
    if unsupported:
        raise HumanEvalError(f"People's answers of type {', '.join(sorted(unsupported))} would need a judge; a "
                             f"baseline takes {', '.join(CHOICE_TYPES + TEXT_TYPES)}.")
    if types & set(CHOICE_TYPES) and types & set(TEXT_TYPES):
        raise HumanEvalError(f"These requests mix choices and written numbers ({', '.join(sorted(types))}); "
                             "make one study per kind with answer_types.")
    triplets = types == {"choice_12"} and version.benchmark.slug == "nleye"
    explanation = triplets if explanation is None else explanation
    certainty = triplets if certainty is None else certainty
    likelihood = triplets if likelihood is None else likelihood
    by_item = {item.external_id: (item, requests) for item, requests in planned}
    rows, left_out = [], {}
    for external_id in _drawn(sorted(by_item), sample, seed, "baseline"):
        item, requests = by_item[external_id]
        for request in requests:
            try:
                rows.append(_baseline_row(item, request, curator, with_choices=not types <= set(TEXT_TYPES)))
            except HumanEvalError as exc:
                left_out[request.request_id] = exc.message
    if not rows:
        raise HumanEvalError("No request can be shown to people: " + "; ".join(
            f"{rid}: {why}" for rid, why in sorted(left_out.items())[:5]))
    items = _create_study(
        curator, name=name or f"Human baseline: {version} {', '.join(variants) or 'all variants'}", slug=slug,
        form=baseline_form(types, explanation=explanation, certainty=certainty, likelihood=likelihood), meta=meta,
        rows=rows, k=k, instructions=instructions or (NLEYE_INSTRUCTIONS if triplets else BASELINE_INSTRUCTIONS),
        open_now=open_now, seed=seed, **study_fields)
    return HumanStudy(items[0].study, items, left_out)


def _baseline_media(item, request, curator) -> dict:
    if any(medium.hidden or medium.segment for medium in request.media):
        raise HumanEvalError("it shows parts of a video, which a person would need as separate clips")
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
    key: object  # what majority counts: the choice, or a written number's parsed value
    text: str  # the response the scorer reads
    data: dict


def _answer_of(request, data: dict, worker: int) -> _Answered | None:
    raw = data.get(ANSWER)
    if raw is None or str(raw).strip() == "":
        return None
    text = str(raw).strip()
    if request.answer_type in TEXT_TYPES:
        parsed = parsing.parse_for_request(request, text)
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
    groups: dict[tuple, list[Study]] = defaultdict(list)
    for study in studies:
        meta = meta_of(study)
        groups[(meta.get("version"), meta.get("input_strategy", "default"), int(meta.get("seed", 0)))].append(study)
    return groups


def human_baseline_results(target) -> dict:
    """The people's answers scored like a model's (see the module docstring). `target`: a baseline
    study or studies of one version, input strategy and seed."""
    studies, _ = _studies_for(BASELINE, target)
    if not studies:
        raise HumanEvalError("No human baseline study given.")
    if len(_baseline_groups(studies)) != 1:
        raise HumanEvalError("These baseline studies differ in version, input strategy or seed: the same request "
                             "would not be the same question; read them one group at a time.")
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
    for submission in counted:
        request = by_id.get(_source(submission.claim.item).get("request_id"))
        found = _answer_of(request, submission.final_data or {}, submission.claim.worker_id) if request else None
        if found is not None:
            answers[request.request_id].append(found)
    # only items whose every asked request has an answer are scored: the metrics that join requests
    # (both hypothesis orders, a question's eight pairs, original and counterfactual) stay whole
    incomplete = {r.item_id for r in requests if r.request_id not in answers}
    scored = [r for r in requests if r.item_id not in incomplete]
    predictions, ties = [], 0
    for request in scored:
        chosen, tied = aggregate(request, answers[request.request_id])
        ties += tied
        predictions.append({"request_id": request.request_id, "sample": 0, "response": chosen.text,
                            "judgment": None})
    benchmark = benchmarks.get(version.benchmark.slug)
    metrics = scoring.score_predictions(benchmark, scored, predictions, **dict.fromkeys(benchmark.scoring_models))
    workers = {a.worker for given in answers.values() for a in given}
    return {"kind": BASELINE, "studies": [study.slug for study in studies], "benchmark": version.benchmark.slug,
            "version": version.pk, "input_strategy": meta.get("input_strategy", "default"),
            "seed": int(meta.get("seed", 0)), "submissions": counts, "requests": len(requests),
            "answered": len(answers), "scored": len(scored), "items_waiting": len(incomplete),
            "annotators": len(workers), "aggregation": "majority", "ties": ties,
            "metrics": metrics, "per_annotator": per_annotator(by_id, answers),
            "agreement": _baseline_agreement(answers), "likelihood": _likelihoods(by_id, answers)}


def per_annotator(requests: dict, answers: dict[str, list[_Answered]]) -> dict:
    """Each annotator's accuracy over the requests they answered (right/wrong answer types only), and the
    mean over annotators; `pooled_accuracy` is the share of all their answers that are right."""
    right: dict[int, list[bool]] = defaultdict(list)
    for request_id, given in answers.items():
        request = requests[request_id]
        if request.answer_type == "score_1_10":
            continue
        for answer in given:
            right[answer.worker].append(_correct(request, answer.text))
    accuracies = {worker: sum(found) / len(found) for worker, found in right.items()}
    return {"annotators": len(accuracies), "mean_accuracy": _mean(accuracies.values()),
            "pooled_accuracy": _fraction(sum(sum(found) for found in right.values()),
                                         sum(len(found) for found in right.values())),
            "answers": sum(len(found) for found in right.values()),
            "accuracy_by_annotator": {str(worker): value for worker, value in sorted(accuracies.items())}}


def _baseline_agreement(answers: dict[str, list[_Answered]]) -> dict:
    units = {request_id: {a.worker: str(a.key) for a in given} for request_id, given in answers.items()}
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


def results_for(study: Study) -> dict:
    """The results of a human-evaluation study, whatever its kind."""
    kind = kind_of(study)
    read = {RATING: rating_results, VOTE: explanation_results, BASELINE: human_baseline_results}.get(kind)
    if read is None:
        raise HumanEvalError(f"{study.slug} is not a human-evaluation study.")
    return read(study)


