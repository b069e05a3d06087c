"""The report of a CVRR-ES expert assessment study, and its finalisation (seeds/003 §3.2 "Quality of QA
pairs"; SPEC §4 Curation 5).

`report(study)`: the three rates — "Yes" to (1) the pair represents its dimension, "Agree" to (2) it can be
answered from the video alone, "Yes" to (3) its ground-truth answer is correct — per dimension and overall,
each with its counts (answers given, positive answers), as the paper reports them (the share of the
experts' answers). The answers that count are those approved by a reviewer or not sampled for review, read
through `final_data` (a reviewer's correction wins); answers waiting for review and rejected ones are left
out and counted. Where pairs had more than one expert, the experts' agreement per question: percent
agreement (the share of those pairs on which every expert gave the same answer), Fleiss' kappa (over the
pairs with all `k` answers) and Krippendorff's alpha (nominal, every pair with two answers or more), from
`annotation.crowd.agreement`.

Each pair's verdict per question is the majority of its experts: a pair passes a question when more than
half of its answers are positive; a tie fails it. So a pair whose ground-truth answer is not confirmed by a
strict majority (most experts, or half of them, say it is wrong) fails (3). Outcomes:
- `returned`: fails (3): it goes back to filtration (stage `returned_to_filtration`) with the experts' notes;
- `checked`: passes all three: stage `expert_checked`;
- `kept`: passes (3) but fails (1) or (2): it stays `filtered` and is listed for the curators;
- `not_assessed`: no answer counts yet: it stays `filtered`.

Nothing moves on a submission. `finalise(study, curator)` applies the outcomes once, when a curator
finalises the report: inside one transaction it writes each assessed pair's votes, verdicts and notes to
its curation record (`working["expert_assessment"]`), moves the pairs at stage `filtered` (a pair that
has moved since is left as it is and listed), closes the study and records the finalisation in the
study's history (to state `FINALISED`, the summary as JSON under `FINAL_KEY`). A study is finalised once.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

from django.db import transaction

from annotation import curation_stages
from annotation.benchmarks.cvrr import expert_study, filtration, stages
from annotation.benchmarks.cvrr.expert_study import ANSWER, NEGATIVE, NOTES, POSITIVE, QUESTION_NAMES, QUESTIONS
from annotation.crowd import agreement, history
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study, StudyItem, Submission
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem
from config import state
from config.roles import ADMIN, CURATOR, has_role

COUNTED = (Submission.Review.APPROVED, Submission.Review.NOT_SAMPLED)
FINALISED = "report_finalised"
FINAL_KEY = "cvrr_expert_report"
PASS, FAIL = "pass", "fail"
RETURNED, CHECKED, KEPT, NOT_ASSESSED = "returned", "checked", "kept", "not_assessed"
OUTCOME_LABELS = {RETURNED: "back to filtration", CHECKED: "expert checked",
                  KEPT: "kept in filtration (fails dimension fit or video-only answering)",
                  NOT_ASSESSED: "not assessed yet"}
# seeds/003 §3.2: 1,120 pairs; "Yes" 98.84%, "Agree" 100%, "Yes" 99.91% of the time
PAPER = {"pairs": 1120, "percent": {"represents_dimension": 98.84, "answerable_from_video": 100.0,
                                    "answer_correct": 99.91}}


def is_assessment(study: Study) -> bool:
    return expert_study.is_assessment(study)


def _figure(n: int, positive: int) -> dict:
    return {"n": n, "yes": positive, "rate": positive / n if n else None}


def verdict(answers: list[str], question: str) -> str | None:
    """pass / fail by the strict majority of the answers (a tie fails), None without answers."""
    if not answers:
        return None
    positive = sum(1 for answer in answers if answer == POSITIVE[question])
    return PASS if 2 * positive > len(answers) else FAIL


def outcome(verdicts: dict) -> str:
    if any(verdicts[question] is None for question in QUESTIONS):
        return NOT_ASSESSED
    if verdicts[ANSWER] == FAIL:
        return RETURNED
    return CHECKED if all(verdicts[question] == PASS for question in QUESTIONS) else KEPT


def _agreement(units: dict, k: int) -> dict:
    """Percent agreement, Fleiss' kappa (pairs with all k answers) and Krippendorff's alpha of one question;
    `units` holds the assessed pairs (pair -> {expert: answer})."""
    ratings = agreement.ratings_from_units(units)
    complete = [labels for labels in ratings if len(labels) == k >= 2]
    fleiss = agreement.fleiss_kappa(complete).as_dict()
    fleiss["left_out"] = len(ratings) - len(complete)
    return {"percent_agreement": agreement.unanimous_share(ratings).as_dict(), "fleiss_kappa": fleiss,
            "krippendorff_alpha": agreement.krippendorff_alpha(units, agreement.NOMINAL).as_dict()}


def finalisation(study: Study) -> dict | None:
    """When and by whom the report was finalised, with its summary; None while it is not."""
    entry = history.for_object(Study, study.pk).filter(to_state=FINALISED).order_by("id").first()
    if entry is None:
        return None
    try:
        summary = json.loads(entry.reason).get(FINAL_KEY, {})
    except (ValueError, AttributeError):
        summary = {}
    return {"by": entry.actor.username if entry.actor else "", "at": entry.created_at.isoformat(), **summary}


def _stages(items: list[StudyItem]) -> dict[int, str]:
    ids = [item.benchmark_item_id for item in items if item.benchmark_item_id]
    return dict(CurationRecord.objects.filter(item_id__in=ids).values_list("item_id", "stage"))


def report(study: Study) -> dict:
    """The three rates per dimension and overall, agreement, and every pair's votes and outcome."""
    items = list(study.items.filter(role=StudyItem.Role.REGULAR).order_by("id"))
    submissions = (Submission.objects.filter(claim__study=study, claim__item__role=StudyItem.Role.REGULAR)
                   .select_related("claim__worker").order_by("claim__item_id", "claim__worker_id"))
    by_item: dict[int, list[tuple]] = defaultdict(list)
    left_out = {"pending": 0, "rejected": 0}
    experts = set()
    for submission in submissions:
        if submission.review_state not in COUNTED:
            left_out["pending" if submission.review_state == Submission.Review.PENDING else "rejected"] += 1
            continue
        claim = submission.claim
        by_item[claim.item_id].append((claim.worker, submission.final_data or {}))
        experts.add(claim.worker_id)

    k = study.annotators_per_item
    stage_of = _stages(items)
    overall = {question: Counter() for question in QUESTIONS}
    dimensions: dict[str, dict] = {}
    units = {question: {} for question in QUESTIONS}
    pairs = []
    for item in items:
        payload = item.payload or {}
        key = payload.get("dimension", "")
        dimension = dimensions.setdefault(key, {"dimension": key, "name": payload.get("dimension_name") or key,
                                                "pairs": 0, "assessed": 0,
                                                "counts": {question: Counter() for question in QUESTIONS}})
        dimension["pairs"] += 1
        given = by_item.get(item.pk, [])
        answers = {question: [data.get(question) for _worker, data in given if data.get(question)]
                   for question in QUESTIONS}
        for question in QUESTIONS:
            for answer in answers[question]:
                positive = answer == POSITIVE[question]
                for counts in (overall[question], dimension["counts"][question]):
                    counts["n"] += 1
                    counts["yes"] += positive
            if given:
                units[question][item.pk] = {worker.pk: data[question] for worker, data in given if data.get(question)}
        verdicts = {question: verdict(answers[question], question) for question in QUESTIONS}
        if given:
            dimension["assessed"] += 1
        pairs.append({
            "study_item": item.external_id, "item_id": item.benchmark_item_id, "dimension": key,
            "dimension_name": dimension["name"], "video_id": payload.get("video_id", ""),
            "question": payload.get("question", ""), "answer": payload.get("answer", ""), "experts": len(given),
            "votes": {question: {"yes": answers[question].count(POSITIVE[question]),
                                 "no": answers[question].count(NEGATIVE[question])} for question in QUESTIONS},
            "verdicts": verdicts, "outcome": outcome(verdicts),
            "notes": [{"expert": worker.username, "note": data.get(NOTES, "")}
                      for worker, data in given if data.get(NOTES)],
            "stage": stage_of.get(item.benchmark_item_id, ""),
        })
    multi = sum(1 for given in by_item.values() if len(given) >= 2)
    return {
        "study": study.slug, "name": study.name, "state": study.state, "experts_per_pair": k,
        "sample": expert_study.recorded_sample(study),
        "pairs_in_study": len(items), "videos_in_study": len({(p["dimension"], p["video_id"]) for p in pairs}),
        "pairs_assessed": sum(1 for pair in pairs if pair["experts"]), "pairs_with_several_experts": multi,
        "n_answers": sum(len(given) for given in by_item.values()), "n_experts": len(experts), "left_out": left_out,
        "questions": [{"name": question, "label": QUESTION_NAMES[question], "positive": POSITIVE[question]}
                      for question in QUESTIONS],
        "overall": {question: _figure(overall[question]["n"], overall[question]["yes"]) for question in QUESTIONS},
        "dimensions": [{"dimension": row["dimension"], "name": row["name"], "pairs": row["pairs"],
                        "assessed": row["assessed"],
                        **{question: _figure(row["counts"][question]["n"], row["counts"][question]["yes"])
                           for question in QUESTIONS}}
                       for _key, row in sorted(dimensions.items())],
        "agreement": {question: _agreement(units[question], k) for question in QUESTIONS} if multi else None,
        "pairs": pairs,
        "failing_answer": [pair["study_item"] for pair in pairs if pair["outcome"] == RETURNED],
        "kept": [pair["study_item"] for pair in pairs if pair["outcome"] == KEPT],
        "finalised": finalisation(study),
        "paper": PAPER,
    }


# --- Finalising ----------------------------------------------------------------------------------------

def return_to_filtration(item: BenchmarkItem, reason: str, by) -> CurationRecord:
    """Send a QA pair back to filtration (`filtration.return_to_filtration`: stage `returned_to_filtration`,
    who, when and why in `working["returned"]`, and its proposal reviewed again), in the caller's
    transaction."""
    filtration.return_to_filtration(item, reason, by)
    return CurationRecord.objects.get(item=item)


def return_reason(study: Study, pair: dict) -> str:
    votes = pair["votes"][ANSWER]
    notes = "; ".join(f"“{entry['note']}”" for entry in pair["notes"])
    return (f"Experts found the ground-truth answer wrong in {study.slug} ({votes['no']} of "
            f"{votes['yes'] + votes['no']} said it is wrong)" + (f": {notes}" if notes else "."))


def finalise(study: Study, curator) -> dict:
    """Apply the report's outcomes to the pairs once (see the module docstring) and return the summary.

    CrowdError: 403 for anyone but curators and admins; 400 for a study of another kind; 409 when it is
    finalised already, when no answer counts yet, or when a pair's pool version is frozen. Nothing is
    written then."""
    if not has_role(curator, CURATOR, ADMIN):
        raise CrowdError("Only curators and admins finalise an expert assessment.", status=403)
    if not is_assessment(study):
        raise CrowdError(f"{study.name} is not an expert assessment study.")
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        done = finalisation(locked)
        if done is not None:
            raise CrowdError(f"This report was finalised already ({done['at']} by {done['by']}).", status=409)
        made = report(locked)
        if not made["pairs_assessed"]:
            raise CrowdError("No expert answer counts yet: there is nothing to finalise.", status=409)
        assessed = [pair for pair in made["pairs"] if pair["outcome"] != NOT_ASSESSED and pair["item_id"]]
        records = {record.item_id: record for record in CurationRecord.objects.select_for_update()
                   .filter(item_id__in=[pair["item_id"] for pair in assessed]).select_related("item__version")}
        frozen = sorted({str(record.item.version) for record in records.values() if record.item.version.frozen})
        if frozen:
            raise CrowdError(f"The pool {', '.join(frozen)} is frozen: its pairs can no longer be moved.",
                             status=409)
        moved = {RETURNED: [], CHECKED: [], KEPT: []}
        skipped = {}
        for pair in assessed:
            record = records.get(pair["item_id"])
            if record is None or record.stage != stages.FILTERED:
                skipped[pair["study_item"]] = f"at stage {record.stage}" if record else "no curation record"
                continue
            curation_stages.move(
                record, stages.EXPERT_CHECKED if pair["outcome"] == CHECKED else record.stage, by=curator,
                reason="expert assessment report finalised", working={
                    **(record.working or {}), "expert_assessment": {
                        "study": locked.slug, "votes": pair["votes"], "verdicts": pair["verdicts"],
                        "notes": pair["notes"], "outcome": pair["outcome"], "finalised_by": curator.pk}})
            if pair["outcome"] == RETURNED:
                return_to_filtration(record.item, return_reason(locked, pair), curator)
            moved[pair["outcome"]].append(pair["study_item"])
        summary = {"returned": moved[RETURNED], "checked": moved[CHECKED], "kept": moved[KEPT], "skipped": skipped,
                   "not_assessed": made["pairs_in_study"] - len(assessed),
                   "overall": made["overall"]}
        if locked.state != Study.State.CLOSED:
            state.transition(locked, Study.State.CLOSED, curator, "expert assessment report finalised", scope=locked)
        state.record(Study, locked.pk, Study.State.CLOSED, FINALISED, by=curator, scope=locked,
                     reason=json.dumps({FINAL_KEY: summary}, sort_keys=True))
    return summary
