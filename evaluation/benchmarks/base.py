"""What a benchmark module declares, and the request shape the runner and the scorers share.

Each `evaluation/benchmarks/<slug>.py` defines a `Benchmark` subclass instance named `BENCHMARK`:
its variants, and `requests(item, options)` that turns one frozen item into `EvalRequest`s with
the paper's prompts. Request ids are stable: `<item external id>:<variant>[:<suffix>]`.

How the runner reads a request:
- `media` in order, each resolved under the run's input strategy and frame policy; a `hidden`
  part becomes black frames of the same count and size when the parts go in as one video, and is
  left out when they go in as separate frames;
- `context_prompt` (DSCP): asked first with the same media; its answer fills the `{context}` slot
  of `prompt` (`prompt_with_context`);
- `describe_prompt` (image-to-text): every medium is captioned first by the describer model; the
  captions fill `{caption:<role>}` slots of `prompt`, which is then sent without media;
- `n_samples` responses are drawn (sampling parameters come from the run).
"""

from __future__ import annotations

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


class Benchmark:
    slug: str = ""
    variants: tuple[str, ...] = ()
    input_strategies: tuple[str, ...] = ("default",)
    prompting_strategies: tuple[str, ...] = ("standard", "cot")

    def requests(self, item, options: RequestOptions) -> list[EvalRequest]:
        raise NotImplementedError


COT_SUFFIX = prompting.COT_SUFFIX
