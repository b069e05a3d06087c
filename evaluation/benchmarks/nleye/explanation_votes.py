"""NL-EYE explanation voting (seeds/002 §4.2, App. E.2; SPEC §3), the human-evaluation study kind `VOTE`
(registered with `evaluation.human_eval.register_kind` when this package is discovered).

`create_explanation_vote_study(runs, …)`: one item per triplet request (hypothesis order as the models
saw it), the images on one canvas with the more plausible hypothesis marked, and every distinct explanation given with a
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
For the frozen version itself, `references.candidates(version)` lists the baseline explanations of
the gold hypothesis with their votes, and a curator approves them as judge references
(`references.approve`, `references.approve_voted`; see `evaluation.human_eval.references`).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from annotation.crowd.models import StudyItem
from evaluation import judges, runner
from evaluation.human_eval.base import (
    BASELINE,
    SOURCE,
    VOTE,
    VOTE_FIELD,
    HumanEvalError,
    HumanStudy,
    _as_list,
    _correct,
    _create_study,
    _drawn,
    _fraction,
    _normal_text,
    _one_version,
    _runs_by_pk,
    _source,
    _studies_for,
    _usable,
    counted_submissions,
    kind_of,
    meta_of,
    register_kind,
    require_study_maker,
)
from evaluation.human_eval.canvases import (
    _images_by_role,
    canvas_image,
)
from evaluation.human_eval.human_baselines import gold_explanations
from evaluation.models import EvaluationRun, Judgment

JUDGE_VALID, JUDGE_NOT_LOGICAL = 2, 0  # the NL-EYE judge's labels a person's valid / not valid stands for
VOTE_INSTRUCTIONS = (
    "The picture shows a premise and two hypotheses; the more plausible hypothesis is marked. Select **all** "
    "explanations that are logical and justify why the marked hypothesis is more plausible than the other. "
    "Select none if none does.")


def vote_form() -> dict:
    return {"fields": [{"name": VOTE_FIELD, "type": "multi_select", "candidates_from": "candidates", "shuffle": True,
                        "min_selected": 0,
                        "label": "Which explanations are logical and justify the marked hypothesis?"}]}


def create_explanation_vote_study(runs, *, curator, baseline_studies=(), sample: int | None = None, seed: int = 0,
                                  k: int = 3, name: str = "", slug: str | None = None, instructions: str = "",
                                  open_now: bool = True, **study_fields) -> HumanStudy:
    """An NL-EYE explanation vote over runs' correct triplet answers (see the module docstring)."""
    require_study_maker(curator)
    runs = _as_list(runs)
    version = _one_version(runs, VOTE)
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
    for request_id, found in gold_explanations(baseline_studies, requests).items():
        candidates[request_id].extend(found)
    items = {item.external_id: item for item in version.items.filter(external_id__in={
        r.item_id for r in requests.values()})}
    chosen = _drawn(sorted(candidates), sample, seed, "vote")
    rows = [_vote_row(requests[request_id], candidates[request_id], items[requests[request_id].item_id], curator)
            for request_id in chosen]
    left_out = dict.fromkeys(sorted(set(requests) - set(candidates)), "no correct answer to vote on")
    meta = {"kind": VOTE, "benchmark": version.benchmark.slug, "version": version.pk, "runs": [run.pk for run in runs],
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
    models = (Judgment.objects.filter(prediction__run=run, kind=judges.NleyeExplanationJudge.name)
              .exclude(parse_status=judges.FAILED).order_by().values_list("judge_model", flat=True).distinct())
    return [{"judge_model": model, **judges.run_agreement(run, judges.NleyeExplanationJudge.name, model,
                                                           human).as_dict()}
            for model in sorted(models)] if human else []


register_kind(VOTE, results=explanation_results, create=create_explanation_vote_study)
