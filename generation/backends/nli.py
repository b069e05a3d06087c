"""A natural-language-inference classifier through `transformers`: `AutoTokenizer` +
`AutoModelForSequenceClassification` (e.g. an MNLI-tuned RoBERTa/DeBERTa/BART).

`entailment(premises, hypotheses)` gives the probability of the entailment label for each pair;
the label is found by name in `config.id2label` (case-insensitive), never by position.
`probabilities(...)` gives every label's probability.

Options (besides those of `_hf`: device, device_map, dtype, attn_implementation, trust_remote_code):
    batch_size: pairs per forward pass (default 16).
    max_length: truncation length of a pair in tokens (default: the tokenizer's, at most 512).
"""

from __future__ import annotations

from typing import Any

from generation.backends import _hf
from generation.backends.base import BackendError

OPTIONS = (*_hf.LOAD_OPTIONS, "batch_size", "max_length")
ADMIN_OPTIONS = _hf.ADMIN_OPTIONS


class NLIClassifier:
    name = "nli"

    def __init__(self, model_id: str, revision: str = "", *, device: str | None = None, device_map: Any = None,
                 dtype: Any = "auto", attn_implementation: str | None = None, batch_size: int = 16,
                 max_length: int | None = None, trust_remote_code: bool = False):
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        config = _hf.setup(self, model_id, revision, device=device, dtype=dtype, batch_size=batch_size,
                           trust_remote_code=trust_remote_code)
        labels = {int(i): str(label) for i, label in (config.id2label or {}).items()}
        self.labels = [labels[i] for i in sorted(labels)]
        matches = [i for i, label in labels.items() if label.strip().lower() == "entailment"]
        if len(matches) != 1:
            raise BackendError(f"{self.name}: {model_id!r} has no single 'entailment' label in config.id2label "
                               f"({labels}); it does not look like an NLI classifier")
        self.entailment_index = matches[0]
        self.tokenizer, self.model = _hf.load_pretrained(
            self, model_id, revision, config, preprocessor_cls=AutoTokenizer,
            model_cls=AutoModelForSequenceClassification,
            device_map=device_map,
            attn_implementation=attn_implementation, trust_remote_code=trust_remote_code)
        limit = getattr(self.tokenizer, "model_max_length", 512) or 512
        self.max_length = int(max_length or min(limit, 512))
        self._input_device = _hf.input_device(self.model)

    def probabilities(self, premises: list[str], hypotheses: list[str]) -> list[dict[str, float]]:
        """{label: probability} for each (premise, hypothesis) pair, in order."""
        import torch

        if len(premises) != len(hypotheses):
            raise ValueError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
        out: list[dict[str, float]] = [{} for _ in premises]
        order = sorted(range(len(premises)), key=lambda i: len(premises[i]) + len(hypotheses[i]))

        def run(batch: list[int]) -> None:
            inputs = self.tokenizer([premises[i] for i in batch], [hypotheses[i] for i in batch], padding=True,
                                    truncation=True, max_length=self.max_length, return_tensors="pt")
            inputs = {k: v.to(self._input_device) for k, v in inputs.items()}
            with torch.inference_mode():
                probs = self.model(**inputs).logits.float().softmax(-1).cpu()
            for row, i in enumerate(batch):
                out[i] = {label: float(probs[row, j]) for j, label in enumerate(self.labels)}

        def fail(batch: list[int], exc: BaseException) -> None:
            raise BackendError(_hf.error_text(f"{self.name} ({self.model_id})", exc)) from exc

        _hf.run_batches(order, self.batch_size, run, fail, label=f"{self.name} ({self.model_id})")
        return out

    def entailment(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        """Probability that each premise entails its hypothesis (in [0, 1])."""
        label = self.labels[self.entailment_index]
        return [p[label] for p in self.probabilities(premises, hypotheses)]
