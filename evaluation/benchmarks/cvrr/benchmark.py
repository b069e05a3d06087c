"""CVRR-ES: open-ended questions about a video, one request per QA pair (seeds/003, SPEC §4).

One variant, `qa`: the model sees the video and answers the question in free text; an LLM judge
later compares the answer with the reference answer (the request's `gold`).

Prompts: under standard prompting the paper sends "only the question itself" (§5.2), so the
prompt is the question. Chain of thought, DSCP (two calls, Figure 3) and DSCP stage 1 only
(Table 3) wrap that prompt through `evaluation.prompting`, which holds the Figure 3 texts.

Dimensions arrive under several spellings (release folder names such as
`understanding_emotional_context`, display names such as "Understanding of emotional context",
the paper's §3.1 headings); each is normalised to a stable slug, and the name as it stands in the
item is kept beside it.

Scoring (`BENCHMARK.score`, §3.2 Stage 4, Table 2): each answer's judge verdict
`{"pred": "correct"|"incorrect", "score": 0–5}` (precomputed, or from a judge callable). Per
dimension, keyed by its release folder name, as the authors' results parser computes it (SPEC
"Fidelity rules"): accuracy = correct / (correct + incorrect verdicts), where only verdicts that are
exactly correct or incorrect count (case and surrounding spaces aside); the mean score averages the
valid 0–5 scores of the verdicts that carry one. Unjudged answers (`missing`: no answer, so no
verdict; `other_verdicts`: neither correct nor incorrect; `unjudged` their sum) and unscored ones
(`invalid_scores`: a verdict without a valid score) are counted and shown, never averaged in as 0;
`scored` counts the scores averaged. A metric with no valid verdict (or no valid score) is not
computed, with the counts in its reason. Overall: `accuracy` is the mean of the dimension accuracies,
`mean_score` the mean of the dimension mean scores, each over the dimensions where it was computed
(`pooled_accuracy` / `pooled_mean_score` pool every answer instead).
"""

from __future__ import annotations

import re

from annotation.benchmarks.cvrr.dimensions import DIMENSIONS  # slug → the paper's name (§3.1)
from evaluation import answer_parsing, benchmarks, prompting, scoring
from evaluation.benchmarks.base import Benchmark, EvalRequest, RequestOptions, media_input, media_links
from evaluation.benchmarks.cvrr.judge import CvrrJudge
from evaluation.results.drilldown import COUNT_LEAVES, DrillRules, status_in
from evaluation.results.outcomes import ANSWERED
from evaluation.results.specs import MetricSpec, SeriesSpec

# words that some spellings of a dimension carry and others leave out
_FILLER_WORDS = {"a", "an", "the", "of", "depictions"}

QUESTION_KINDS = ("reasoning", "robustness")  # §3.2 Stage 2
VERDICTS = ("correct", "incorrect")
SCORE_RANGE = (0, 5)


def _dimension_key(name: str) -> tuple[str, ...]:
    words = re.findall(r"[a-z0-9]+", name.lower())
    return tuple(word for word in words if word not in _FILLER_WORDS)


_SLUG_BY_KEY = {_dimension_key(slug): slug for slug in DIMENSIONS} | {
    _dimension_key(name): slug for slug, name in DIMENSIONS.items()
}


def dimension_slug(name: str) -> str:
    """The stable slug of a dimension name in any of its spellings; ValueError for an unknown one."""
    slug = _SLUG_BY_KEY.get(_dimension_key(name or ""))
    if slug is None:
        raise ValueError(f"Unknown CVRR-ES dimension {name!r}; known: {', '.join(DIMENSIONS)}.")
    return slug


def question_kind(payload: dict) -> str:
    """'reasoning' or 'robustness' when the item records it, else ''."""
    kind = str(payload.get("question_kind") or "").strip().lower()
    if kind and kind not in QUESTION_KINDS:
        raise ValueError(f"Unknown CVRR-ES question kind {kind!r}; known: {', '.join(QUESTION_KINDS)}.")
    return kind


class CvrrBenchmark(Benchmark):
    slug = "cvrr"
    title = "CVRR-ES"
    variants = ("qa",)
    prompting_strategies = ("standard", "cot", "dscp", "dscp_stage1")
    scoring_models = ("judge",)
    main_metrics = (
        MetricSpec("accuracy", "Accuracy (mean of dimensions)"),
        MetricSpec("mean_score", "Mean score (0–5)", rate=False),
        MetricSpec("pooled_accuracy", "Pooled accuracy", n="judged"),
    )
    series = (
        SeriesSpec("dimension-accuracy", "Accuracy per dimension", "dimensions", "accuracy", labels=DIMENSIONS),
        SeriesSpec("dimension-score", "Mean judge score (0–5) per dimension", "dimensions", "mean_score",
                   rate=False, labels=DIMENSIONS),
    )
    drill_rules = DrillRules(
        keyed={"dimensions": lambda r, o: r.extra.get("dimension"),
               "by_question_kind": lambda r, o: r.extra.get("question_kind")},
        leaves={**COUNT_LEAVES, "other_verdicts": status_in(ANSWERED)})
    judge_kinds = (CvrrJudge.name,)

    def request_category(self, request: EvalRequest) -> str:
        """Its evaluation dimension."""
        return str(request.extra.get("dimension") or "")

    def score(self, requests: list[EvalRequest], responses: dict, **models) -> dict:
        pairs = [(r, scoring.first_response(responses.get(r.request_id))) for r in requests]
        verdicts, reason = scoring.judgments(pairs, models.get("judge"))
        if reason:
            dimensions = {name: {"accuracy": scoring.not_computed(reason), "mean_score": scoring.not_computed(reason),
                                 "n": len(found), "missing": sum(not responses.get(r.request_id) for r in found)}
                          for name, found in scoring.group_by(requests, lambda r: r.extra["dimension"]).items()}
            return {"accuracy": scoring.not_computed(reason), "mean_score": scoring.not_computed(reason),
                    "n": len(requests), "dimensions": dimensions}
        judged = [Judged.of(verdict) for verdict in verdicts]
        by_request = {r.request_id: verdict for r, verdict in zip(requests, judged, strict=True)}
        dimensions = {name: judged_block([by_request[r.request_id] for r in found]) for name, found in
                      scoring.group_by(requests, lambda r: r.extra["dimension"]).items()}
        pooled = judged_block(judged)
        metrics = {
            "accuracy": mean_of_computed([d["accuracy"] for d in dimensions.values()], "accuracy"),
            "mean_score": mean_of_computed([d["mean_score"] for d in dimensions.values()], "mean score"),
            "pooled_accuracy": pooled.pop("accuracy"), "pooled_mean_score": pooled.pop("mean_score"), **pooled,
            "dimensions": dimensions,
        }
        kinds = scoring.group_by(requests, lambda r: r.extra.get("question_kind"))
        if kinds:
            metrics["by_question_kind"] = {kind: judged_block([by_request[r.request_id] for r in found])
                                           for kind, found in kinds.items()}
        return metrics

    def requests(self, item, options: RequestOptions) -> list[EvalRequest]:
        self.resolve_input_strategy(options)
        self.check_prompting(options)
        payload = item.payload
        if payload.get("kind") != "qa":
            raise ValueError(f"CVRR-ES item {item.external_id!r} is a {payload.get('kind')!r} record under curation, "
                             "not a question: only QA pairs are evaluated.")
        slug = dimension_slug(payload["dimension"])
        extra = {"dimension": slug, "dimension_name": DIMENSIONS[slug],
                 "dimension_release": payload["dimension"], "video_id": payload["video_id"]}
        kind = question_kind(payload)
        if kind:
            extra["question_kind"] = kind
        prompt, context_prompt = prompting.apply(payload["question"], options.prompting)
        return [EvalRequest(
            request_id=f"{item.external_id}:qa",
            item_id=item.external_id,
            variant="qa",
            text=payload["question"],
            prompt=prompt,
            context_prompt=context_prompt,
            media=[media_input(media_links(item), "video", "video")],
            gold=payload["answer"],
            answer_type="free",
            extra=extra,
            source=dict(payload),
        )]


# --- Scoring ---------------------------------------------------------------------------------------

class Judged:
    """One answer's verdict: `pred` correct | incorrect | other (None: the answer is missing), `score`."""

    def __init__(self, pred: str | None, score: float | None):
        self.pred, self.score = pred, score

    @classmethod
    def of(cls, verdict: dict | None) -> Judged:
        if verdict is None:
            return cls(None, None)
        pred = str(verdict.get("pred") or "").strip().lower()
        score = verdict.get("score")
        parsed = answer_parsing.parse_score(str(score), *SCORE_RANGE) if score is not None else None
        return cls(pred if pred in VERDICTS else "other", parsed.value if parsed and parsed.ok else None)

    @property
    def judged(self) -> bool:
        """A verdict of correct or incorrect (missing answers and other verdicts are unjudged)."""
        return self.pred in VERDICTS

    @property
    def correct(self) -> bool:
        return self.pred == "correct"


def judged_block(found: list[Judged]) -> dict:
    judged = [j for j in found if j.judged]
    missing = sum(j.pred is None for j in found)
    other = sum(j.pred == "other" for j in found)
    scores = [j.score for j in found if j.score is not None]
    invalid_scores = sum(j.pred is not None and j.score is None for j in found)
    accuracy = (scoring.fraction(sum(j.correct for j in judged), len(judged)) if judged else scoring.not_computed(
        f"no valid verdict ({other} other verdicts, {missing} missing answers)"))
    mean_score = scoring.mean(scores) if scores else scoring.not_computed(
        f"no verdict carries a valid score ({invalid_scores} verdicts without one, {missing} missing answers)")
    return {"accuracy": accuracy, "mean_score": mean_score, "n": len(found), "judged": len(judged),
            "correct": sum(j.correct for j in judged), "other_verdicts": other, "missing": missing,
            "unjudged": missing + other, "scored": len(scores), "invalid_scores": invalid_scores}


def mean_of_computed(values: list, name: str):
    """The mean of the dimensions' values that were computed; not computed when none was."""
    computed = [value for value in values if not scoring.is_not_computed(value) and value is not None]
    if not computed:
        return scoring.not_computed(f"no dimension has a computed {name}")
    return scoring.mean(computed)


BENCHMARK = benchmarks.register(CvrrBenchmark())
