"""NL-EYE: which hypothesis image is the more plausible given a premise image (seeds/002, SPEC §3).

Items: kind `triplet` with the scene descriptions `premise`, `hypothesis1`, `hypothesis2`, `label`
(1 | 2, the more plausible hypothesis) and optional `explanation`, `reasoning_category`, `domain`,
`time_direction`, `time_duration`; images under media roles `premise`, `hypothesis1`, `hypothesis2`.

Variants (§4.1, Figure 5):
- `triplet`, asked in both hypothesis orders. `<id>:triplet:order1` shows the gold (more plausible)
  hypothesis first, `<id>:triplet:order2` shows it second; `gold` is the position of the gold
  hypothesis as shown (1 for order1, 2 for order2). `extra["shown"]` lists the source roles in the
  order shown (e.g. ["premise", "hypothesis2", "hypothesis1"] for order1 of a label-2 item) and
  `extra["gold_source"]` names the gold one, so consistency accuracy (right in both orders) and
  order-1 / order-2 accuracy (App. A.3, Table 7) follow. Answer type `choice_12`.
- `pairs`: premise and one hypothesis → plausibility score 1–10 (`score_1_10`),
  `<id>:pairs:h1` and `<id>:pairs:h2`; `gold` is the label (the source number of the gold
  hypothesis), `extra["hypothesis"]` this request's number and `extra["pair"]` the other request,
  so order-faithful accuracy is score(gold) > score(other).

Input strategies (§4.1): `separate` (premise first, then the hypotheses in the order shown),
`combined` (the same MediaInputs, labelled "Premise", "Hypothesis 1", …; the runner composes one
canvas with the premise on the left; `extra["canvas"]` = True), `text_only` (the gold scene
descriptions in the prompt, no media) and `image_to_text` (each image is captioned with
`describe_prompt`, then the text-only prompt is answered over the captions, which fill its
`{caption:<role>}` slots). Every media input keeps its source role; `label` is its shown position.

Prompt texts: Appendix C, Table 6 (separate/combined × triplet/pairs, text-only triplet, the
image-to-text description prompt). Table 6 gives no text-only pairs prompt; it is the pairs prompt
with "image" dropped. Table 6's text-only triplet prompt names the task but not the answer form,
so it closes with the answer sentence of the image prompts. Chain of thought appends "Let's think
step by step:" (Table 14) through `evaluation.prompting`, as do the DSCP strategies, which need the
images in the final call and so are refused for the text-only and image-to-text strategies.

Scoring (`BENCHMARK.score`, §4.1, App. A.3, Tables 7–8, Figure 6):
- triplets: consistency accuracy (the gold hypothesis picked in both orders), order-1 and order-2
  accuracy; explanations of correct predictions judged 0/1/2 against the gold (`{"label": n}`),
  valid iff 2, when judgments are given;
- pairs: order-faithful accuracy (score(gold) > score(other); ties, unparsed and missing scores are
  wrong); over the triplets whose two scores parsed: the equal-rank rate, the mean |score(gold) −
  score(other)| overall, when correct and when incorrect, and the mean score of the correct (gold)
  and the incorrect hypothesis;
- both again by reasoning category, time direction and time duration (keys lower-case as in the
  release; items without one under "unspecified").

Failure analysis (§6): people tag each wrong triplet prediction with one of `FAILURE_FACTORS` (style &
consistency, time, ignored key details, missing knowledge, failed comparison); the results pages
show each model's distribution (`evaluation.failure_analysis`).
"""

from __future__ import annotations

from evaluation import benchmarks, prompting, scoring
from evaluation.benchmarks.base import (
    Benchmark,
    EvalRequest,
    FailureFactor,
    HumanBaselineForm,
    RequestOptions,
    ResultsSection,
    SectionMetric,
    media_input,
    media_links,
    results_sections_with,
)
from evaluation.benchmarks.nleye.judge import NleyeExplanationJudge
from evaluation.human_eval.base import VOTE
from evaluation.results.consistency_views import PairView
from evaluation.results.drilldown import COUNT_LEAVES, DrillRules, extra_is, status_in
from evaluation.results.outcomes import CORRECT
from evaluation.results.specs import MetricSpec, SeriesSpec

ROLES = ("premise", "hypothesis1", "hypothesis2")
TEXT_STRATEGIES = ("text_only", "image_to_text")
MEDIA_FREE_PROMPTING = ("standard", "cot")
CATEGORY_FIELDS = ("reasoning_category", "domain", "time_direction", "time_duration")
BREAKDOWNS = {"by_category": "reasoning_category", "by_time_direction": "time_direction",
              "by_time_duration": "time_duration"}
VALID_EXPLANATION = 2
HUMAN_BASELINE_INSTRUCTIONS = (
    "The picture shows a premise and two hypotheses. Say which hypothesis is more plausible given the "
    "premise (the premise can happen before or after them), explain why in a sentence, say how certain you are, "
    "and then rate how likely each hypothesis is on its own given the premise. To answer many of these you "
    "have to notice small details and tell yourself the story behind the scenes.")

# The five factors of the failure analysis of wrong triplet predictions (§6, Figure 7, Table 15).
FAILURE_FACTORS = (
    FailureFactor("style_consistency", "Style & consistency", "Irrelevant visual details influence the decision."),
    FailureFactor("time", "Time", "The explanation relies on an incorrect time direction or duration."),
    FailureFactor("ignored_key_details", "Ignored key details", "Important information is overlooked."),
    FailureFactor("missing_knowledge", "Missing knowledge", "Key details are misinterpreted despite being noticed."),
    FailureFactor("failed_comparison", "Failed comparison",
                  "The less plausible hypothesis is justified with logical reasoning."),
)

SCORE_SCALE = ("Rank the plausibility with a score between 1 and 10, where: 1: Not plausible at all, 3: Slightly "
               "plausible, 5: Moderately plausible, 7: Very plausible, 10: Almost necessarily plausible. Explain why.")
SEPARATE_TRIPLET = ("Given a context image and 2 hypothesis images (3 total images), which image of the following "
                    "two (1 and 2) is more plausible? The context image can happen before or after the hypothesis "
                    "images. Mention which one is more plausible – 1 or 2, and explain.")
SEPARATE_PAIRS = ("Given a pair of images – a context image and a hypothesis image – rank how plausible the "
                  "hypothesis image is in relation to the context. The context image can occur before or after the "
                  "hypothesis image. " + SCORE_SCALE)
COMBINED_TRIPLET = ("Given a context image (left image) and two hypothesis images (middle and right), which "
                    "hypothesis image (1 or 2) is more plausible? Mention which one is more plausible – 1 or 2, and "
                    "explain. The context image can happen before or after the hypothesis images.")
COMBINED_PAIRS = "The first (left) image is the context image. " + SEPARATE_PAIRS
TEXT_TRIPLET = ("Given a context, hypothesis1, and hypothesis2, which hypothesis is more plausible? The context can "
                "occur before or after the hypotheses.\nContext: {premise}\nHypothesis 1: {first}\n"
                "Hypothesis 2: {second}\nMention which one is more plausible – 1 or 2, and explain.")
TEXT_PAIRS = ("Given a context and a hypothesis, rank how plausible the hypothesis is in relation to the context. "
              "The context can occur before or after the hypothesis. " + SCORE_SCALE +
              "\nContext: {premise}\nHypothesis: {hypothesis}")
DESCRIBE_PROMPT = "Describe the content of the image in detail."

IMAGE_PROMPTS = {
    ("separate", "triplet"): SEPARATE_TRIPLET,
    ("separate", "pairs"): SEPARATE_PAIRS,
    ("combined", "triplet"): COMBINED_TRIPLET,
    ("combined", "pairs"): COMBINED_PAIRS,
}


def caption_slot(role: str) -> str:
    return "{caption:" + role + "}"


class NleyeBenchmark(Benchmark):
    slug = "nleye"
    title = "NL-EYE"
    variants = ("triplet", "pairs")
    input_strategies = ("separate", "combined", "text_only", "image_to_text")
    prompting_strategies = ("standard", "cot", "dscp", "dscp_stage1")
    scoring_models = ("judge",)
    main_metrics = (
        MetricSpec("triplet.consistency_accuracy", "Triplet consistency"),
        MetricSpec("triplet.order1_accuracy", "Order 1", n="order1.n"),
        MetricSpec("triplet.order2_accuracy", "Order 2", n="order2.n"),
        MetricSpec("pairs.order_faithful_accuracy", "Pairs order-faithful"),
        MetricSpec("triplet.explanations.valid_rate", "Valid explanations"),
    )
    series = (
        SeriesSpec("category-consistency", "Triplet consistency accuracy per reasoning category", "by_category",
                   "triplet.consistency_accuracy"),
        SeriesSpec("direction-consistency", "Triplet consistency accuracy per time direction", "by_time_direction",
                   "triplet.consistency_accuracy"),
        SeriesSpec("duration-consistency", "Triplet consistency accuracy per time duration", "by_time_duration",
                   "triplet.consistency_accuracy"),
        SeriesSpec("category-pairs", "Pairs order-faithful accuracy per reasoning category", "by_category",
                   "pairs.order_faithful_accuracy"),
    )
    drill_rules = DrillRules(
        keyed={name: (lambda r, o, f=fieldname: breakdown_key(r.extra.get(f)))
               for name, fieldname in BREAKDOWNS.items()},
        segments={"order1": extra_is("order", 1), "order2": extra_is("order", 2), "explanations": status_in(CORRECT)},
        leaves={**COUNT_LEAVES, "order1_accuracy": extra_is("order", 1), "order2_accuracy": extra_is("order", 2)})
    consistency_views = {
        "orders": PairView("Hypothesis order: gold shown first (order 1) vs second (order 2)",
                           "triplet.consistency_accuracy", ("triplet",),
                           lambda r: r.extra.get("order"), (1, 2), ("order 1", "order 2")),
    }
    judge_kinds = (NleyeExplanationJudge.name,)
    baselines = ("dumb_pixel", "nli")
    human_evaluations = (VOTE,)
    human_baseline_form = HumanBaselineForm(answer_types=frozenset({"choice_12"}), explanation=True, certainty=True,
                                            likelihood=True, instructions=HUMAN_BASELINE_INSTRUCTIONS)
    failure_factors = FAILURE_FACTORS
    failure_variants = ("triplet",)
    results_sections = results_sections_with(ResultsSection(
        "explanation_votes", "Explanations: people's votes and the judge",
        metrics=(SectionMetric("Valid (judge)", "triplet.explanations.valid_rate"),),
        note="An explanation is valid when at least one voter selected it (seeds/002 §4.2); the vote columns count "
             "explanations by how many voters selected them. The judge's label 2 counts as valid."))

    def request_category(self, request: EvalRequest) -> str:
        """The triplet's reasoning category."""
        return str(request.extra.get("reasoning_category") or "")

    def score(self, requests: list[EvalRequest], responses: dict, **models) -> dict:
        metrics = score_setups(requests, responses, judge=models.get("judge"))
        for name, field in BREAKDOWNS.items():
            groups = scoring.group_by(requests, lambda r, f=field: breakdown_key(r.extra.get(f)))
            metrics[name] = {key: score_setups(found, responses, explain=False)
                             for key, found in sorted(groups.items())}
        return metrics

    def requests(self, item, options: RequestOptions) -> list[EvalRequest]:
        strategy = self.resolve_input_strategy(options)
        self.check_prompting(options)
        if strategy in TEXT_STRATEGIES and options.prompting not in MEDIA_FREE_PROMPTING:
            raise ValueError(f"nleye: prompting {options.prompting!r} asks about the images in the final call, "
                             f"but input strategy {strategy!r} sends none; use one of "
                             f"{', '.join(MEDIA_FREE_PROMPTING)}.")
        if item.payload.get("kind") != "triplet":
            raise ValueError(f"NL-EYE item {item.external_id!r} has unknown kind {item.payload.get('kind')!r}.")
        asker = _Asker(item, strategy, options)
        return [asker.triplet(1), asker.triplet(2), asker.pair(1), asker.pair(2)]


class _Asker:
    """Builds the requests of one triplet under one run's options."""

    def __init__(self, item, strategy: str, options: RequestOptions):
        self.item, self.payload, self.strategy, self.options = item, item.payload, strategy, options
        self.links = media_links(item)
        self.label = int(self.payload["label"])

    def media(self, shown: list[str], labels: list[str]) -> list:
        if self.strategy == "text_only":
            return []
        return [media_input(self.links, role, "image", label=label) for role, label in zip(shown, labels, strict=True)]

    def describe(self, role: str) -> str:
        """A role's scene as the text prompts give it: the gold description, or the caption slot."""
        return caption_slot(role) if self.strategy == "image_to_text" else self.payload[role]

    def body(self, setup: str, shown: list[str]) -> str:
        if self.strategy not in TEXT_STRATEGIES:
            return IMAGE_PROMPTS[(self.strategy, setup)]
        if setup == "triplet":
            return TEXT_TRIPLET.format(premise=self.describe("premise"), first=self.describe(shown[1]),
                                       second=self.describe(shown[2]))
        return TEXT_PAIRS.format(premise=self.describe("premise"), hypothesis=self.describe(shown[1]))

    def request(self, suffix: str, setup: str, shown: list[str], labels: list[str], **fields) -> EvalRequest:
        prompt, context_prompt = prompting.apply(self.body(setup, shown), self.options.prompting)
        text = "\n".join(f"{label}: {self.payload[role]}" for role, label in zip(shown, labels, strict=True))
        extra = {"setup": setup, "input_strategy": self.strategy, "canvas": self.strategy == "combined",
                 "gold_source": f"hypothesis{self.label}", "explanation": self.payload.get("explanation", ""),
                 **{field: self.payload.get(field, "") for field in CATEGORY_FIELDS}, **fields.pop("extra")}
        return EvalRequest(
            request_id=f"{self.item.external_id}:{setup}:{suffix}", item_id=self.item.external_id, variant=setup,
            text=text, prompt=prompt, context_prompt=context_prompt, media=self.media(shown, labels), extra=extra,
            describe_prompt=DESCRIBE_PROMPT if self.strategy == "image_to_text" else "",
            source=dict(self.payload), **fields)

    def triplet(self, order: int) -> EvalRequest:
        """order 1: the gold hypothesis shown first; order 2: shown second."""
        gold_role, other_role = f"hypothesis{self.label}", f"hypothesis{3 - self.label}"
        hypotheses = [gold_role, other_role] if order == 1 else [other_role, gold_role]
        shown = ["premise", *hypotheses]
        return self.request(f"order{order}", "triplet", shown, ["Premise", "Hypothesis 1", "Hypothesis 2"],
                            gold=order, answer_type="choice_12", extra={"order": order, "shown": shown})

    def pair(self, number: int) -> EvalRequest:
        shown = ["premise", f"hypothesis{number}"]
        return self.request(f"h{number}", "pairs", shown, ["Premise", "Hypothesis"], gold=self.label,
                            answer_type="score_1_10",
                            extra={"hypothesis": number, "is_gold": number == self.label, "shown": shown,
                                   "pair": f"{self.item.external_id}:pairs:h{3 - number}"})


# --- Scoring ---------------------------------------------------------------------------------------

def breakdown_key(value) -> str:
    return str(value or "").strip().lower() or "unspecified"


def score_setups(requests: list[EvalRequest], responses: dict, *, judge=None, explain: bool = True) -> dict:
    """`triplet` and `pairs` metrics of the requests there are; with `explain`, the explanations too."""
    metrics: dict = {"n": len({r.item_id for r in requests})}
    setups = scoring.group_by(requests, lambda r: r.variant)
    if "triplet" in setups:
        metrics["triplet"] = score_triplets(setups["triplet"], responses, judge=judge, explain=explain)
    if "pairs" in setups:
        metrics["pairs"] = score_pairs(setups["pairs"], responses)
    return metrics


def score_triplets(requests: list[EvalRequest], responses: dict, *, judge=None, explain: bool = True) -> dict:
    answers = {r.request_id: scoring.answer(r, responses.get(r.request_id)) for r in requests}
    orders = {order: [r for r in requests if r.extra["order"] == order] for order in (1, 2)}
    correct_by_item: dict[str, list[bool]] = {}
    for request in requests:
        correct_by_item.setdefault(request.item_id, []).append(answers[request.request_id].correct)
    consistent = [len(found) == 2 and all(found) for found in correct_by_item.values()]
    block = {"consistency_accuracy": scoring.fraction(sum(consistent), len(consistent)), "n": len(consistent)}
    for order, found in orders.items():
        group = scoring.accuracy_group([answers[r.request_id] for r in found])
        block[f"order{order}_accuracy"], block[f"order{order}"] = group["accuracy"], group
    given = [a for a in answers.values() if not a.missing]
    block["unparsed_rate"] = scoring.fraction(sum(a.unparsed for a in given), len(given))
    if explain:
        right = [(r, scoring.first_response(responses.get(r.request_id))) for r in requests
                 if answers[r.request_id].correct]
        block["explanations"] = score_explanations(right, judge)
    return block


def score_explanations(pairs: list, judge) -> dict:
    """Share of valid (label 2) explanations among the correct predictions, and the label counts."""
    verdicts, reason = scoring.judgments(pairs, judge)
    if reason:
        return scoring.not_computed(reason)
    labels = [verdict.get("label") for verdict in verdicts]
    counts = {str(label): labels.count(label) for label in (0, 1, 2)}
    judged = sum(counts.values())
    invalid = len(labels) - judged
    valid_rate = (scoring.not_computed(f"no valid judgment ({invalid} invalid)") if invalid and not judged
                  else scoring.fraction(counts[str(VALID_EXPLANATION)], judged))
    return {"valid_rate": valid_rate, "n": judged, "labels": counts, "invalid_judgments": invalid}


def score_pairs(requests: list[EvalRequest], responses: dict) -> dict:
    scores: dict[str, dict[str, float | None]] = {}
    missing = unparsed = 0
    for request in requests:
        result = scoring.answer(request, responses.get(request.request_id))
        missing, unparsed = missing + result.missing, unparsed + result.unparsed
        side = "gold" if request.extra["is_gold"] else "other"
        scores.setdefault(request.item_id, {"gold": None, "other": None})[side] = result.value
    faithful = [s["gold"] is not None and s["other"] is not None and s["gold"] > s["other"] for s in scores.values()]
    ranked = [(s["gold"], s["other"]) for s in scores.values() if s["gold"] is not None and s["other"] is not None]
    diffs = [abs(gold - other) for gold, other in ranked]
    return {
        "order_faithful_accuracy": scoring.fraction(sum(faithful), len(faithful)), "n": len(faithful),
        "missing": missing, "unparsed": unparsed, "ranked": len(ranked),
        "equal_rank_rate": scoring.fraction(sum(gold == other for gold, other in ranked), len(ranked)),
        "mean_rank_diff": scoring.mean(diffs),
        "correct_rank_diff": scoring.mean(d for d, (gold, other) in zip(diffs, ranked, strict=True) if gold > other),
        "incorrect_rank_diff": scoring.mean(d for d, (gold, other) in zip(diffs, ranked, strict=True)
                                            if gold <= other),
        "correct_hypothesis_mean_score": scoring.mean(gold for gold, _ in ranked),
        "incorrect_hypothesis_mean_score": scoring.mean(other for _, other in ranked),
    }


BENCHMARK = benchmarks.register(NleyeBenchmark())
