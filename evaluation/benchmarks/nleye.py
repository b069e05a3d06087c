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
"""

from __future__ import annotations

from evaluation import prompting
from evaluation.benchmarks.base import Benchmark, EvalRequest, RequestOptions, media_input, media_links

ROLES = ("premise", "hypothesis1", "hypothesis2")
TEXT_STRATEGIES = ("text_only", "image_to_text")
MEDIA_FREE_PROMPTING = ("standard", "cot")
CATEGORY_FIELDS = ("reasoning_category", "domain", "time_direction", "time_duration")

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
    variants = ("triplet", "pairs")
    input_strategies = ("separate", "combined", "text_only", "image_to_text")
    prompting_strategies = ("standard", "cot", "dscp", "dscp_stage1")

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


BENCHMARK = NleyeBenchmark()
