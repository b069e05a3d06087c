"""MAIA: the two aligned tasks asked of every question about an Italian video (seeds/004, SPEC §5).

- `vsv` (Visual Statement Verification, §4.1): one request per true/false statement pair, eight per
  question, ids `<question id>:vsv:<pair index>` (0–7). The two statements are shown as A and B in
  an order drawn by `base.shuffle_options` from (run seed, request id), so a run is reproducible and
  the true statement's letter varies across pairs; the model answers with the letter only. Questions
  without statements make no `vsv` requests.
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
black video) are frame policies of the run, not variants.
"""

from __future__ import annotations

from evaluation.benchmarks.base import (
    Benchmark,
    EvalRequest,
    RequestOptions,
    media_input,
    media_links,
    shuffle_options,
)

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
    variants = ("vsv", "oevqa")
    prompting_strategies = ("standard",)

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


BENCHMARK = MaiaBenchmark()
