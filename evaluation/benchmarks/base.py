"""What a benchmark module declares, and the request shape the runner and the scorers share.

Each `evaluation/benchmarks/<slug>.py` defines a `Benchmark` subclass instance named `BENCHMARK`:
its variants, and `requests(item, options)` that turns one frozen item into `EvalRequest`s with
the paper's prompts. Request ids are stable: `<item external id>:<variant>[:<suffix>]`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MediaInput:
    """A medium a request shows, by role (`video`, `pre`, `premise`, …), resolved to frames/images
    by the runner under the run's input strategy and frame policy."""

    role: str
    kind: str  # "video" | "image"
    asset_id: int | None = None
    segment: tuple[float, float] | None = None  # seconds within the video, for part-wise inputs
    label: str = ""  # shown next to the image in combined canvases (e.g. "Hypothesis 1")


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


@dataclass(frozen=True)
class RequestOptions:
    input_strategy: str = "default"  # benchmark-specific: separate | combined | text_only | image_to_text | …
    prompting: str = "standard"  # standard | cot | dscp | dscp_stage1 | plus_p | plus_pc
    seed: int = 0


class Benchmark:
    slug: str = ""
    variants: tuple[str, ...] = ()
    input_strategies: tuple[str, ...] = ("default",)
    prompting_strategies: tuple[str, ...] = ("standard", "cot")

    def requests(self, item, options: RequestOptions) -> list[EvalRequest]:
        raise NotImplementedError


COT_SUFFIX = "Let's think step by step:"
