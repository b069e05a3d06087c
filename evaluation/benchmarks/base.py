"""What a benchmark module declares, and the request shape the runner and the scorers share.

Each benchmark's module (`evaluation/benchmarks/<slug>/benchmark.py`) defines a `Benchmark` subclass,
registers it (`evaluation.benchmarks.register`) and keeps the instance as `BENCHMARK`: its variants, and
`requests(item, options)` that turns one frozen item into `EvalRequest`s with the paper's prompts.
Request ids are stable: `<item external id>:<variant>[:<suffix>]`.

Besides requests and `score`, a benchmark declares everything else that is particular to it, read by
the generic machinery (see `Benchmark`): its answer parser under the authors' rules (`authors_parser`,
`evaluation.named_parsers`), its leaderboard columns and per-category series (`main_metrics`, `series`,
`evaluation.results.specs`), how a metric path narrows its requests (`drill_rules`,
`evaluation.results.drilldown`), its consistency views (`consistency_views`,
`evaluation.results.consistency_views`), the LLM judges that judge its answers (`judge_kinds`, names
of `evaluation.judges` kinds; the first is the one its scorer uses), the paper baselines it supports
besides the random one (`baselines`, `evaluation.baseline_runs`), the human evaluations it supports
(`human_evaluations`, `evaluation.human_eval`), the form of its human baseline where it differs
from the plain one (`human_baseline_form`), the paper's human-performance draws (`human_performance`),
the clips people see of a request that shows parts of a video (`human_clip`), and the sections of a
version's results page (`results_sections`, `ResultsSection`: the generic ones, `RESULTS_SECTIONS`, with
the tables of its own human evaluations and the run metrics they show inserted by `results_sections_with`).

How the runner reads a request:
- `media` in order, each resolved under the run's input strategy and frame policy; a `hidden`
  part becomes black frames of the same count and size when the parts go in as one video, and is
  left out when they go in as separate frames;
- `context_prompt` (DSCP): asked first with the same media; its answer fills the `{context}` slot
  of `prompt` (`prompt_with_context`);
- `describe_prompt` (image-to-text): every medium is captioned first by the describer model; the
  captions fill `{caption:<role>}` slots of `prompt`, which is then sent without media;
- `n_samples` responses are drawn (sampling parameters come from the run).

`score(requests, responses, **models)` turns the responses into the paper's metrics (the shared
rules are in `evaluation.scoring`); `scoring_models` names the model-based inputs it takes.

Option order (SPEC "Fidelity rules": release order is part of the benchmark). `RequestOptions.option_order`
is `release` (the default: options under the release's letters, in the release's order, and question
texts as released) or `shuffled:<seed>` (an explicit strategy: a per-request order drawn from (seed,
request id)). `parse_option_order` reads and checks the value; `ordered_options` shows a list of
options under either, and `option_extra` is what a request records about it.

Shared helpers for the modules: `Benchmark.resolve_input_strategy` / `check_prompting` /
`check_option_order` / `check_variants` refuse what a benchmark does not offer (they are the rules and the
words of the one check of request options that pages, API and commands go through,
`evaluation.request_options`); `shuffle_options` draws a reproducible option order from (seed, request id);
`media_links` / `media_input` read an item's media by role.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evaluation import prompting


@dataclass(frozen=True)
class MediaInput:
    """A medium a request shows, by role (`video`, `pre`, `premise`, …), resolved to frames/images
    by the runner under the run's input strategy and frame policy."""

    role: str
    kind: str  # "video" | "image"
    asset_id: int | None = None
    segment: tuple[float, float] | None = None  # seconds within the video, for part-wise inputs
    label: str = ""  # shown next to the image in combined canvases (e.g. "Hypothesis 1")
    hidden: bool = False  # a part the model must not see (BlackSwan Detective's V_main): black frames


@dataclass
class EvalRequest:
    request_id: str
    item_id: str
    variant: str
    text: str  # the question/hypothesis itself, without the benchmark's instructions
    prompt: str  # the full user prompt under the chosen prompting strategy
    media: list[MediaInput] = field(default_factory=list)
    options: dict[str, str] | None = None  # letter → option text, in the order shown
    gold: Any = None
    n_samples: int = 1
    answer_type: str = "free"  # letter | yes_no | number | choice_12 | score_1_10 | free
    extra: dict = field(default_factory=dict)  # order, hypothesis, category, … for scorers
    source: dict = field(default_factory=dict)  # the item's record as it stands in the release
    context_prompt: str = ""  # DSCP step 1, asked first on the same media (see evaluation.prompting)
    describe_prompt: str = ""  # image-to-text: each medium is captioned with this prompt first, and
    # the captions replace `{caption:<role>}` slots in `prompt`, which then goes to the model text-only

    def prompt_with_context(self, context: str) -> str:
        """The final prompt once step 1 has answered (the prompt itself when there is no step 1)."""
        return prompting.fill_context(self.prompt, context) if self.context_prompt else self.prompt


@dataclass(frozen=True)
class RequestOptions:
    input_strategy: str = "default"  # benchmark-specific: separate | combined | text_only | image_to_text | …
    prompting: str = "standard"  # standard | cot | dscp | dscp_stage1 | plus_p | plus_pc
    seed: int = 0
    option_order: str = "release"  # release | shuffled:<seed> (see `parse_option_order`)


@dataclass(frozen=True)
class FailureFactor:
    """One reason a wrong prediction failed, as a benchmark's failure analysis names it (NL-EYE §6)."""

    key: str
    label: str
    description: str = ""


@dataclass(frozen=True)
class HumanBaselineForm:
    """How a human baseline asks a benchmark's requests when every request asked has one of
    `answer_types` (NL-EYE triplets): which extra fields people fill in, and the instructions."""

    answer_types: frozenset[str]
    explanation: bool = False
    certainty: bool = False
    likelihood: bool = False
    instructions: str = ""


@dataclass(frozen=True)
class HumanPerformance:
    """A paper's human performance (`evaluation.human_eval.performance`): an expert answers `expert_per_group`
    requests of each of `expert_variants` (drawn as a named subset), and people write answers to every
    request of `written_variants` for `written_items` items; both see the media of `input_strategy`."""

    expert_variants: tuple[str, ...]
    expert_per_group: int = 150
    written_variants: tuple[str, ...] = ()
    written_items: int = 20
    input_strategy: str = "default"


@dataclass(frozen=True)
class SectionMetric:
    """A run's metric that a results-page section shows beside what people measured: its column's label and
    its dotted path in the run's metrics (`{variant}` stands for the variant of the section's row)."""

    label: str
    path: str
    rate: bool = True
    n: str = "n"  # the count next to the metric (a path relative to the metric's group)

    def path_for(self, variant: str = "") -> str:
        return self.path.replace("{variant}", variant)


@dataclass(frozen=True)
class ResultsSection:
    """One section of a version's results page, shown by the template `frontend/results/<kind>.html` (a
    table of results is left out while it has nothing to show): `title` its heading, `metrics` the run metrics
    its table shows, `note` what the reader needs to know about its numbers (`code` between backticks)."""

    kind: str
    title: str = ""
    metrics: tuple[SectionMetric, ...] = ()
    note: str = ""

    @property
    def template(self) -> str:
        return f"frontend/results/{self.kind}.html"


# The sections every benchmark's results page shows, in order: the leaderboard (its `main_metrics`, the
# human baselines), the judge against people's verdicts, the failure factors of wrong answers (where it
# declares `failure_factors`), the consistency views, the per-category charts (its `series`), and what
# can be started from the page (the requests for models run elsewhere and the exports follow them).
RESULTS_SECTIONS = tuple(ResultsSection(kind) for kind in (
    "leaderboard", "judge_agreement", "failure_factors", "consistency", "charts", "baselines", "subsets",
    "human_evaluation"))
HUMAN_TABLES_AFTER = "judge_agreement"  # where a benchmark's own human-evaluation tables go


def results_sections_with(*own: ResultsSection, after: str = HUMAN_TABLES_AFTER) -> tuple[ResultsSection, ...]:
    """The generic results sections with a benchmark's `own` inserted after the section of kind `after`."""
    kinds = [section.kind for section in RESULTS_SECTIONS]
    at = kinds.index(after) + 1
    return (*RESULTS_SECTIONS[:at], *own, *RESULTS_SECTIONS[at:])


class Benchmark:
    slug: str = ""
    title: str = ""  # the benchmark's name for people (lists, filters); the slug when empty
    variants: tuple[str, ...] = ()
    input_strategies: tuple[str, ...] = ("default",)  # the first one is what "default" means
    prompting_strategies: tuple[str, ...] = ("standard", "cot")
    default_frame_policy: str = "uniform:8"  # the paper's main frame setting (for exports and runs)
    scoring_models: tuple[str, ...] = ()  # the model-based metrics' inputs `score` uses: clip, judge, bertscore
    shuffles_options: bool = False  # whether `shuffled:<seed>` changes its requests (release options it shows)
    # answer parsing under the authors' released rules, `read(request, text) -> Parsed`; None: as `strict`
    authors_parser: Callable | None = None
    main_metrics: tuple = ()  # `evaluation.results.specs.MetricSpec`s: the leaderboard's columns
    series: tuple = ()  # `evaluation.results.specs.SeriesSpec`s: per-category series and charts
    drill_rules = None  # `evaluation.results.drilldown.DrillRules`; None: the variants and the count leaves only
    consistency_views: dict = {}  # name → `evaluation.results.consistency_views.PairView` / `PoolView`
    judge_kinds: tuple[str, ...] = ()  # LLM judge kinds (`evaluation.judges`) of its answers; the first scores
    baselines: tuple[str, ...] = ()  # paper baselines (`evaluation.baseline_runs`) besides `random`, which fits all
    human_evaluations: tuple[str, ...] = ()  # human evaluation study kinds (`evaluation.human_eval`) it supports
    human_baseline_form: HumanBaselineForm | None = None  # a human baseline's richer form, where it has one
    human_performance: HumanPerformance | None = None  # the paper's expert and written human baselines
    # `FailureFactor`s people tag wrong predictions with (`evaluation.failure_analysis`); none: no tagging
    failure_factors: tuple = ()
    failure_variants: tuple[str, ...] = ()  # the variants whose wrong predictions are tagged; empty: all
    results_sections: tuple[ResultsSection, ...] = RESULTS_SECTIONS  # what its version's results page shows

    def results_section(self, kind: str) -> ResultsSection | None:
        """Its results page's section of `kind`, or None when the page has none."""
        return next((section for section in self.results_sections if section.kind == kind), None)

    @property
    def label(self) -> str:
        return self.title or self.slug

    @property
    def judge_kind(self) -> str:
        """The judge kind its scorer uses ("" when it has no LLM judge)."""
        return self.judge_kinds[0] if self.judge_kinds else ""

    def requests(self, item, options: RequestOptions) -> list[EvalRequest]:
        raise NotImplementedError

    def request_category(self, request: EvalRequest) -> str:
        """The category a request belongs to, as the benchmark groups its results (the `category` column
        of the kit exports, `evaluation.kits`); "" when it has none."""
        return ""

    def human_clip(self, item, request: EvalRequest):
        """The library video a person is shown for a request that shows parts of a video (segments, a
        hidden part): a clip holding exactly what the request shows, or None when there is none."""
        return None

    def score(self, requests: list[EvalRequest], responses: dict, **models) -> dict:
        """The benchmark's metrics over its requests and their responses (request id → list of
        `evaluation.scoring.Response`; missing requests have none). `models` holds those named in
        `scoring_models` (None when not given); see `evaluation.scoring`."""
        raise NotImplementedError

    def resolve_input_strategy(self, options: RequestOptions) -> str:
        """The run's input strategy ("default" = the benchmark's first); ValueError for one it lacks."""
        strategy = options.input_strategy
        if strategy == "default":
            return self.input_strategies[0]
        if strategy not in self.input_strategies:
            raise ValueError(f"{self.slug} has no input strategy {strategy!r}; "
                             f"known: {', '.join(self.input_strategies)}.")
        return strategy

    def check_option_order(self, options: RequestOptions) -> str:
        """The run's option order, normalised; ValueError for a malformed one, or for `shuffled:<seed>`
        on a benchmark whose options it would not change."""
        order = parse_option_order(options.option_order)
        if order != RELEASE_ORDER and not self.shuffles_options:
            raise ValueError(f"{self.slug} shows no release options to reorder; option order {order!r} does not "
                             f"apply (use 'release').")
        return order

    def check_prompting(self, options: RequestOptions) -> str:
        """The run's prompting strategy; ValueError for one the benchmark does not offer."""
        if options.prompting not in self.prompting_strategies:
            raise ValueError(f"{self.slug} does not use prompting {options.prompting!r}; "
                             f"known: {', '.join(self.prompting_strategies)}.")
        return options.prompting

    def check_variants(self, variants) -> list[str]:
        """The variants asked (empty: all); ValueError for one the benchmark does not have."""
        variants = list(variants or [])
        for variant in variants:
            if variant not in self.variants:
                raise ValueError(f"{self.slug} has no variant {variant!r}; known: {', '.join(self.variants)}.")
        return variants


# --- Options shown in a seeded order ----------------------------------------------------------

LETTERS = "ABCDEFGHIJ"


def derived_seed(seed: int, request_id: str) -> int:
    """A 64-bit seed from (run seed, request id), the same in every process and Python version."""
    digest = hashlib.sha256(f"{seed}:{request_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class ShuffledOptions:
    options: dict[str, str]  # letter → option text, in the order shown
    gold: str  # the letter the correct option is shown under
    order: list[int]  # for each letter in turn, the index of its option in the source list
    seed: int | None  # the derived seed the order was drawn with (None: the release's order)


def shuffle_options(texts: list[str], correct: int, seed: int, request_id: str) -> ShuffledOptions:
    """Options under letters A, B, … in an order drawn from `derived_seed(seed, request_id)`."""
    if not 0 <= correct < len(texts) <= len(LETTERS):
        raise ValueError(f"Correct option {correct} is out of range for {len(texts)} options.")
    rng_seed = derived_seed(seed, request_id)
    order = list(range(len(texts)))
    random.Random(rng_seed).shuffle(order)
    letters = LETTERS[:len(texts)]
    return ShuffledOptions(options={letter: texts[index] for letter, index in zip(letters, order, strict=True)},
                           gold=letters[order.index(correct)], order=order, seed=rng_seed)


RELEASE_ORDER = "release"
SHUFFLED_PREFIX = "shuffled:"


def parse_option_order(value) -> str:
    """The option order as stored: `release` (also for an empty value) or `shuffled:<seed>` with an
    integer seed; ValueError with the accepted forms for anything else (`shuffled:x`, `foo`)."""
    text = str(value if value is not None else "").strip()
    if text in ("", RELEASE_ORDER):
        return RELEASE_ORDER
    prefix, _, seed = text.partition(":")
    if prefix == SHUFFLED_PREFIX[:-1] and seed.strip().lstrip("-").isdigit():
        return f"{SHUFFLED_PREFIX}{int(seed)}"
    raise ValueError(f"Unknown option order {text!r}: use 'release' (the options as released) or "
                     f"'shuffled:<seed>' with an integer seed (e.g. shuffled:0).")


def option_order_seed(order: str) -> int | None:
    """The seed of a `shuffled:<seed>` order; None for the release order."""
    order = parse_option_order(order)
    return None if order == RELEASE_ORDER else int(order[len(SHUFFLED_PREFIX):])


def ordered_options(texts: list[str], correct: int, order: str, request_id: str) -> ShuffledOptions:
    """Options under letters A, B, …: in the given order for `release` (the gold is the correct
    option's own letter), else drawn by `shuffle_options` from the order's seed and the request id."""
    seed = option_order_seed(order)
    if seed is not None:
        return shuffle_options(texts, correct, seed, request_id)
    if not 0 <= correct < len(texts) <= len(LETTERS):
        raise ValueError(f"Correct option {correct} is out of range for {len(texts)} options.")
    letters = LETTERS[:len(texts)]
    return ShuffledOptions(options=dict(zip(letters, texts, strict=True)), gold=letters[correct],
                           order=list(range(len(texts))), seed=None)


def option_extra(shown: ShuffledOptions, order: str) -> dict:
    """What a request records about its option order: the strategy, the order shown (indices into the
    release's options) and the seed it was drawn with (None for the release order)."""
    return {"option_strategy": parse_option_order(order), "option_order": list(shown.order),
            "option_seed": shown.seed}


def option_lines(options: dict[str, str]) -> str:
    """'A. first\nB. second…' for a prompt."""
    return "\n".join(f"{letter}. {text}" for letter, text in options.items())


# --- An item's media by role ------------------------------------------------------------------

def media_links(item) -> dict:
    """role → ItemMedia row of a saved item ({} for an unsaved one, which cannot have media)."""
    if item.pk is None:
        return {}
    return {link.role: link for link in item.media.all()}


def media_input(links: dict, role: str, kind: str, *, shown_as: str = "", **fields) -> MediaInput:
    """A MediaInput for the item's medium under `role`; `asset_id` is None when the item lacks it
    (the runner reports it). `shown_as` names the input's own role when it differs (a part of a video)."""
    link = links.get(role)
    asset_id = None if link is None else (link.video_id if kind == "video" else link.image_id)
    return MediaInput(role=shown_as or role, kind=kind, asset_id=asset_id, **fields)


COT_SUFFIX = prompting.COT_SUFFIX
