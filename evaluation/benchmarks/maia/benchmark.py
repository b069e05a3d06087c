"""MAIA: the two aligned tasks asked of every question about an Italian video (seeds/004, SPEC §5).

- `vsv` (Visual Statement Verification, §4.1): one request per true/false statement pair, eight per
  question, ids `<question id>:vsv:<pair index>` (0–7). The two statements are shown as A and B in
  an order drawn by `base.shuffle_options` from (run seed, request id), so a run is reproducible and
  the true statement's letter varies across pairs; the model answers with the letter only. This
  seeded random assignment is the paper's protocol, so the run's option order (`release` /
  `shuffled:<seed>`) does not apply; each request records its assignment in `extra` (`order`,
  `option_order`, `option_seed`, `seed`). Questions without statements make no `vsv` requests.
- `oevqa` (Open-ended VQA, §4.2): the model answers the question in one Italian sentence; an LLM
  judge accepts it when it agrees with at least one of the eight reference answers (the gold).

Both variants carry the question id as `pool`, so scorers can form pool accuracy (all eight pairs
right) and the aggregate accuracy (pool right and open answer judged correct), per category.

Prompts: the paper chose the best-performing Italian prompt for each task (§4.1, §4.2) but does not
print them; the Italian prompts below state exactly what §4.1/§4.2 ask (pick the true statement and
answer with its label only; answer the question), with SPEC §5's one-sentence answer.

Categories: the release names (`SpazialeParziale_A`: the part before `_`) map to the paper's 12
categories and their macro-category, the top-level columns of Tables 1–3: causal, counterfactual,
out-of-scope, planning, sentiment, uncertainty, implicit, spatial, temporal. Causal is one category
with implicit and explicit items (App. A.1, footnote 15). Frame settings (32 frames, first frame,
black video) are frame policies of the run, not variants; 32 uniform frames is the main one.

Scoring (`BENCHMARK.score`, §4–6, Tables 1–5): VSV independent accuracy (per pair) and pool
accuracy (a question counts only when all its pairs are right); OEVQA judge accuracy from verdicts
`{"correct": true|false}` (precomputed, or from a judge callable; a verdict without a boolean
`correct` counts as not correct and is reported); aggregate accuracy (per question: pool right and
open answer judged correct); all of them per category, keyed by the release name without its A/B
suffix (`SpazialeParziale`), and per macro-category; and the similarity of the open answers to the
eight references (`evaluation.similarity`, Italian). Missing answers are wrong.
"""

from __future__ import annotations

from evaluation import benchmarks, scoring, similarity
from evaluation.benchmarks.base import (
    Benchmark,
    EvalRequest,
    RequestOptions,
    media_input,
    media_links,
    shuffle_options,
)
from evaluation.benchmarks.maia.judge import MaiaJudge
from evaluation.results.consistency_views import PoolView
from evaluation.results.drilldown import COUNT_LEAVES, DrillRules
from evaluation.results.specs import MetricSpec, SeriesSpec

# release name (lower case) → (category, macro-category)
CATEGORIES: dict[str, tuple[str, str]] = {
    "causaleesplicita": ("causal", "causal"),
    "causaleimplicita": ("causal", "causal"),
    "controfattuale": ("counterfactual", "counterfactual"),
    "outofscope": ("out_of_scope", "out_of_scope"),
    "pianificazione": ("planning", "planning"),
    "sentiment": ("sentiment", "sentiment"),
    "incertezza": ("uncertainty", "uncertainty"),
    "implicitoparziale": ("implicit_partial", "implicit"),
    "implicitotot": ("implicit_total", "implicit"),
    "spazialeparziale": ("spatial_partial", "spatial"),
    "spazialetotale": ("spatial_total", "spatial"),
    "temporaleparziale": ("temporal_partial", "temporal"),
    "temporaledurata": ("temporal_duration", "temporal"),
}

VSV_PROMPT = ("Guarda il video e indica quale delle due affermazioni è vera.\n"
              "A: {a}\n"
              "B: {b}\n"
              "Rispondi solo con la lettera dell'affermazione vera (A o B).")

OEVQA_PROMPT = ("Guarda il video e rispondi alla domanda con una sola frase in italiano.\n"
                "Domanda: {question}")

STATEMENT_KINDS = ("true", "false")  # the order statements are passed to shuffle_options
LANGUAGE = "it"


def category(release_name: str) -> tuple[str, str]:
    """(category, macro-category) of a release category name; ValueError naming an unknown one."""
    base = (release_name or "").split("_", 1)[0].strip()
    try:
        return CATEGORIES[base.lower()]
    except KeyError:
        raise ValueError(f"Unknown MAIA category {release_name!r}.") from None


def statement_pairs(payload: dict) -> list[tuple[str, str]]:
    """The (true, false) statement pairs of a question; empty when it has none."""
    trues, falses = payload.get("true_statements") or [], payload.get("false_statements") or []
    if len(trues) != len(falses):
        raise ValueError(f"MAIA question has {len(trues)} true but {len(falses)} false statements.")
    return list(zip(trues, falses, strict=True))


class MaiaBenchmark(Benchmark):
    slug = "maia"
    title = "MAIA"
    variants = ("vsv", "oevqa")
    prompting_strategies = ("standard",)
    default_frame_policy = "uniform:32"
    scoring_models = ("judge", "bertscore")
    main_metrics = (
        MetricSpec("vsv.independent_accuracy", "VSV independent", n="pairs.n"),
        MetricSpec("vsv.pool_accuracy", "VSV pool"),
        MetricSpec("oevqa.judge_accuracy", "OEVQA judged"),
        MetricSpec("aggregate_accuracy", "Aggregate", n="aggregate_n"),
        MetricSpec("oevqa.similarity.bertscore", "OEVQA BERTScore", rate=False),
    )
    series = (
        SeriesSpec("category-pool", "VSV pool accuracy per category", "categories", "vsv.pool_accuracy", radar=True),
        SeriesSpec("category-independent", "VSV independent accuracy per category", "categories",
                   "vsv.independent_accuracy", radar=True),
        SeriesSpec("category-aggregate", "Aggregate accuracy per category", "categories", "aggregate_accuracy",
                   radar=True),
        SeriesSpec("macro-pool", "VSV pool accuracy per macro-category", "macro_categories", "vsv.pool_accuracy"),
    )
    drill_rules = DrillRules(
        keyed={"categories": lambda r, o: release_category(r),
               "macro_categories": lambda r, o: r.extra.get("macro_category")},
        leaves=dict(COUNT_LEAVES))
    consistency_views = {
        "pools": PoolView("VSV: independent vs pool accuracy (statement pairs right per question)",
                          "vsv.pool_accuracy", ("vsv",), lambda r: r.extra.get("pool")),
    }
    judge_kinds = (MaiaJudge.name,)
    baselines = ("unimodal",)

    def request_category(self, request: EvalRequest) -> str:
        """Its release category (without the A/B suffix)."""
        return release_category(request) if request.extra.get("category_release") else ""

    def score(self, requests: list[EvalRequest], responses: dict, **models) -> dict:
        open_requests = [r for r in requests if r.variant == "oevqa"]
        pairs = [(r, scoring.first_response(responses.get(r.request_id))) for r in open_requests]
        verdicts, reason = scoring.judgments(pairs, models.get("judge"))
        judged = None if reason else {r.request_id: verdict for r, verdict in zip(open_requests, verdicts, strict=True)}
        scorer = _Scorer(responses, judged, reason)
        metrics = scorer.block(requests)
        metrics["oevqa"]["similarity"] = similarity.text_similarity(
            [scoring.first_text(responses.get(r.request_id)) for r in open_requests],
            [list(r.gold) for r in open_requests], language=LANGUAGE, bertscore=models.get("bertscore"))
        for name, key in (("categories", release_category), ("macro_categories", lambda r: r.extra["macro_category"])):
            metrics[name] = {group: scorer.block(found) for group, found in
                             sorted(scoring.group_by(requests, key).items())}
        return metrics

    def requests(self, item, options: RequestOptions) -> list[EvalRequest]:
        self.resolve_input_strategy(options)
        self.check_prompting(options)
        payload = item.payload
        name, macro = category(payload["category"])
        shared = {"pool": item.external_id, "category": name, "macro_category": macro,
                  "category_release": payload["category"], "video": payload["video"]}
        media = [media_input(media_links(item), "video", "video")]
        requests = [self._vsv(item, index, pair, options.seed, shared, media)
                    for index, pair in enumerate(statement_pairs(payload))]
        requests.append(self._oevqa(item, shared, media))
        return requests

    def _vsv(self, item, index: int, pair: tuple[str, str], seed: int, shared: dict, media) -> EvalRequest:
        request_id = f"{item.external_id}:vsv:{index}"
        shuffled = shuffle_options(list(pair), STATEMENT_KINDS.index("true"), seed, request_id)
        return EvalRequest(
            request_id=request_id,
            item_id=item.external_id,
            variant="vsv",
            text=item.payload["question"],
            prompt=VSV_PROMPT.format(a=shuffled.options["A"], b=shuffled.options["B"]),
            media=list(media),
            options=shuffled.options,
            gold=shuffled.gold,
            answer_type="letter",
            extra={**shared, "pair_index": index, "order": [STATEMENT_KINDS[i] for i in shuffled.order],
                   "option_order": shuffled.order, "option_seed": shuffled.seed, "seed": seed},
            source=dict(item.payload),
        )

    def _oevqa(self, item, shared: dict, media) -> EvalRequest:
        question = item.payload["question"]
        return EvalRequest(
            request_id=f"{item.external_id}:oevqa",
            item_id=item.external_id,
            variant="oevqa",
            text=question,
            prompt=OEVQA_PROMPT.format(question=question),
            media=list(media),
            gold=list(item.payload["answers"]),
            answer_type="free",
            extra=dict(shared),
            source=dict(item.payload),
        )


# --- Scoring ---------------------------------------------------------------------------------------

def release_category(request: EvalRequest) -> str:
    """The release's category name without its A/B suffix (`SpazialeParziale_A` → `SpazialeParziale`)."""
    return str(request.extra["category_release"]).split("_", 1)[0].strip()


def judged_correct(verdict: dict | None) -> bool:
    return verdict is not None and verdict.get("correct") is True


class _Scorer:
    """VSV, OEVQA and aggregate accuracy of any subset of the requests, from answers read once."""

    def __init__(self, responses: dict, judged: dict | None, reason: str):
        self.responses, self.judged, self.reason = responses, judged, reason

    def block(self, requests: list[EvalRequest]) -> dict:
        pools: dict[str, list[bool]] = {}
        answers = []
        for request in (r for r in requests if r.variant == "vsv"):
            answers.append(scoring.answer(request, self.responses.get(request.request_id)))
            pools.setdefault(request.extra["pool"], []).append(answers[-1].correct)
        pool_right = {pool: all(found) for pool, found in pools.items()}
        independent = scoring.accuracy_group(answers)
        vsv = {"independent_accuracy": independent.pop("accuracy"),
               "pool_accuracy": scoring.fraction(sum(pool_right.values()), len(pool_right)), "n": len(pool_right),
               "pairs": independent}
        questions = [r for r in requests if r.variant == "oevqa"]
        oevqa = {"n": len(questions), "missing": sum(not self.responses.get(r.request_id) for r in questions)}
        block = {"n": len({r.extra["pool"] for r in requests}), "vsv": vsv, "oevqa": oevqa}
        if self.judged is None:
            oevqa["judge_accuracy"] = block["aggregate_accuracy"] = scoring.not_computed(self.reason)
            return block
        verdicts = {r.extra["pool"]: self.judged[r.request_id] for r in questions}
        oevqa["invalid_judgments"] = sum(v is not None and not isinstance(v.get("correct"), bool)
                                         for v in verdicts.values())
        if oevqa["invalid_judgments"] and not any(v is not None and isinstance(v.get("correct"), bool)
                                                   for v in verdicts.values()):
            # judged answers, none validly: not computed (missing answers alone count as wrong, as everywhere)
            reason = (f"no valid judgment ({oevqa['invalid_judgments']} invalid, "
                      f"{sum(v is None for v in verdicts.values())} missing answers)")
            oevqa["judge_accuracy"] = block["aggregate_accuracy"] = scoring.not_computed(reason)
            return block
        oevqa["judge_accuracy"] = scoring.fraction(sum(map(judged_correct, verdicts.values())), len(verdicts))
        both = [pool for pool in verdicts if pool in pool_right]
        block["aggregate_accuracy"] = scoring.fraction(
            sum(pool_right[pool] and judged_correct(verdicts[pool]) for pool in both), len(both))
        block["aggregate_n"] = len(both)
        return block


BENCHMARK = benchmarks.register(MaiaBenchmark())
