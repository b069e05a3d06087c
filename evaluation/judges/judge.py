"""`Judge`: a judge kind on one judge model, its calls through the response cache, and the scorers'
entry points `for_benchmark` and `judge_texts`."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from evaluation import cache, runner
from evaluation.benchmarks.base import EvalRequest
from evaluation.benchmarks.blackswan.judge import LlmMatch
from evaluation.benchmarks.nleye.judge import NleyeExplanationJudge
from evaluation.judges.base import CHOICES, DECODINGS, FREE, Case, JudgeError, JudgeKind, Reading
from evaluation.judges.cvrr import CvrrJudge
from evaluation.judges.kinds import get_kind, judged_benchmarks, kind_for_benchmark
from evaluation.judges.spec import judge_params, judge_spec
from generation.backends.base import BackendError, ChatRequest, ChatResult, GenerationParams

logger = logging.getLogger("evaluation.judges")  # the name it had as one module
DEFAULT_MODEL = "default"  # names the kind's default judge model (`default_model`)


@dataclass
class JudgeStats:
    responses: int = 0  # responses the judge was asked about
    not_selected: int = 0  # responses the kind does not judge (NL-EYE: wrong predictions)
    empty: int = 0  # empty responses: verdict without a call
    skipped: int = 0  # (response, reference) pairs judged before
    calls: int = 0  # judge calls made (cache misses sent to the backend)
    from_cache: int = 0
    ok: int = 0
    unparsed: int = 0
    failed: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Answered:
    """One case's answer: the call's record and the reading of its text."""

    case: Case
    chat: ChatRequest
    outcome: runner.Outcome
    reading: Reading | None  # None when the call failed


def with_defaults(kind: JudgeKind, params=None):
    """The kind's default parameters (the authors'), overridden by those given (None leaves a default)."""
    if isinstance(params, GenerationParams):
        return params
    given = {key: value for key, value in (params or {}).items() if value is not None}
    return {**kind.default_params, **given}


def default_model(kind: str | JudgeKind) -> str:
    """The judge model a kind uses when none is named; JudgeError when the kind implies none."""
    found = get_kind(kind) if isinstance(kind, str) else kind
    if not found.default_model:
        raise JudgeError(f"The {found.name} judge has no default model: name one (--judge-model).")
    return found.default_model


class Judge:
    """A judge kind on one judge model: callable as `judge(request, response_text) -> verdict` for the
    scorers, and used by `judge_run` for stored judgments."""

    def __init__(self, kind: str | JudgeKind, spec: runner.BackendSpec, *, params=None, batch_size: int = 8,
                 pool: runner.BackendPool | None = None, decoding: str = FREE):
        self.kind = get_kind(kind) if isinstance(kind, str) else kind
        self.spec = spec
        if decoding not in DECODINGS:
            raise JudgeError(f"Unknown judge decoding {decoding!r}: one of {', '.join(DECODINGS)}.")
        if decoding == CHOICES and not self.kind.answer_choices:
            raise JudgeError(f"The {self.kind.name} judge has no fixed answers to choose among.")
        self.decoding = decoding
        self.params = judge_params(with_defaults(self.kind, params))
        self.batch_size = max(1, int(batch_size))
        self.pool = pool or runner.BackendPool(max_loaded=1)
        self.stats = JudgeStats()

    @property
    def provenance(self) -> dict:
        return {"kind": self.kind.name, "model": self.spec.model_id, "revision": self.spec.cache_revision,
                "backend": self.spec.backend, "params": self.params.as_dict(), "decoding": self.decoding}

    @property
    def recorded_params(self) -> dict:
        """What a stored judgment records of how it was made: the generation parameters, and the
        decoding when it is not free generation."""
        extra = {} if self.decoding == FREE else {"decoding": self.decoding}
        return {**self.params.as_dict(), **extra}

    # -- the scorer hook
    def __call__(self, request, response_text: str) -> dict:
        return self.judge_many([(request, response_text)])[0]

    def judge_many(self, pairs: list[tuple[Any, str]]) -> list[dict]:
        """A verdict per (request, response text), in order; the calls go out in batches.
        Raises JudgeError when a call fails or a request is not one this judge judges."""
        plans = []
        for request, text in pairs:
            if not self.kind.applies(request):
                raise JudgeError(f"The {self.kind.name} judge does not judge request {request.request_id!r} "
                                 f"(variant {request.variant!r}).")
            self.stats.responses += 1
            if not (text or "").strip():
                self.stats.empty += 1
                plans.append(None)
            else:
                plans.append(self.kind.cases(request, text))
        flat = [(index, case) for index, cases in enumerate(plans) if cases for case in cases]
        answered = self.answer([case for _, case in flat], [pairs[index][0].request_id for index, _ in flat])
        by_pair: dict[int, list[Answered]] = {}
        for (index, _), answer in zip(flat, answered, strict=True):
            by_pair.setdefault(index, []).append(answer)
        verdicts = []
        for index, cases in enumerate(plans):
            if cases is None:
                verdicts.append(self.kind.empty_verdict())
                continue
            failed = [a for a in by_pair[index] if a.reading is None]
            if failed:
                raise JudgeError(f"The {self.kind.name} judge ({self.spec.model_id}) failed on request "
                                 f"{pairs[index][0].request_id!r}: {failed[0].outcome.error}")
            verdicts.append(self.kind.combine([(a.case, a.reading) for a in by_pair[index]]))
        return verdicts

    # -- calls through the cache
    def answer(self, cases: list[Case], request_ids: list[str] | None = None) -> list[Answered]:
        request_ids = request_ids or [""] * len(cases)
        out: list[Answered] = []
        for start in range(0, len(cases), self.batch_size):
            batch = cases[start:start + self.batch_size]
            chats = [case.chat(self.params, f"{rid}#judge:{self.kind.name}:{case.reference_key}")
                     for case, rid in zip(batch, request_ids[start:start + self.batch_size], strict=True)]
            for case, chat, outcome in zip(batch, chats, self._call(chats), strict=True):
                reading = None if outcome.error else self.kind.parse(outcome.text)
                if reading is None:
                    self.stats.failed += 1
                elif reading.ok:
                    self.stats.ok += 1
                else:
                    self.stats.unparsed += 1
                out.append(Answered(case, chat, outcome, reading))
        return out

    def _call(self, chats: list[ChatRequest]) -> list[runner.Outcome]:
        if self.decoding == CHOICES:
            return self._choose(chats)
        spec = self.spec
        keys = [cache.cache_key(model_id=spec.model_id, revision=spec.cache_revision, backend=spec.backend,
                                request=chat, backend_options=spec.option_dict) if cache.cacheable(chat) else None
                for chat in chats]
        hits = cache.lookup([key for key in keys if key])
        outcomes: list[runner.Outcome | None] = [None] * len(chats)
        to_send, owners, sent = [], [], {}
        for index, (chat, key) in enumerate(zip(chats, keys, strict=True)):
            if key and key in hits:
                outcomes[index] = runner.Outcome.cached(hits[key])
                self.stats.from_cache += 1
            elif key and key in sent:
                owners[sent[key]].append(index)
            else:
                if key:
                    sent[key] = len(to_send)
                to_send.append(chat)
                owners.append([index])
        if to_send:
            backend = self.pool.get(spec, batch_size=self.batch_size)
            self.stats.calls += len(to_send)
            try:
                results = backend.generate(to_send)
            except BackendError:
                raise
            except Exception as exc:  # noqa: BLE001 - recorded on every judgment of the batch, retried later
                logger.exception("judge %s failed on a batch of %d", spec.model_id, len(to_send))
                results = [ChatResult(texts=[], error=f"{type(exc).__name__}: {exc}") for _ in to_send]
            if len(results) != len(to_send):
                raise BackendError(f"{spec.backend}: {len(results)} results for {len(to_send)} requests")
            for result, owner in zip(results, owners, strict=True):
                if not result.error and not result.texts:
                    result = ChatResult(texts=[], latency_s=result.latency_s, error="the judge returned no text")
                key = keys[owner[0]]
                if key and result.ok:
                    cache.store(key, model_id=spec.model_id, revision=spec.cache_revision, backend=spec.backend,
                                result=result)
                for index in owner:
                    outcomes[index] = runner.Outcome.of(result)
        return outcomes


    def _choose(self, chats: list[ChatRequest]) -> list[runner.Outcome]:
        """`choices` decoding: per chat, the answer among the kind's `answer_choices` with the highest
        mean token log-probability after the chat's prompt (not cached: nothing is sampled)."""
        backend = self.pool.get(self.spec, batch_size=self.batch_size)
        if not callable(getattr(backend, "chat_prompt", None)):
            raise JudgeError(f"Choice decoding scores answers with a local text model; the {self.spec.backend} "
                             "backend cannot.")
        choices = list(self.kind.answer_choices)
        outcomes = []
        for chat in chats:
            self.stats.calls += 1
            started = time.perf_counter()
            try:
                prompt = backend.chat_prompt(chat)
                scores = backend.score_logprob(choices, prefix=prompt)
            except (BackendError, ValueError) as exc:
                outcomes.append(runner.Outcome([], error=f"{type(exc).__name__}: {exc}"))
                continue
            best = max(range(len(choices)), key=lambda index: (scores[index], -index))
            outcomes.append(runner.Outcome([choices[best]], round(time.perf_counter() - started, 4)))
        return outcomes


def for_benchmark(benchmark_slug: str, model_id: str, *, backend: str = "", revision: str = "",
                  backend_options: dict | None = None, params: dict | None = None, batch_size: int = 8,
                  kind: str = "") -> Judge:
    """The judge a benchmark's scorer uses (`manage.py score`): the first of the benchmark's
    `judge_kinds` (BlackSwan → llm_match, CVRR-ES → cvrr, MAIA → maia, NL-EYE → nleye_explanation).
    `model_id` may name its backend ("openai:gpt-4o"); the default backend is causal_lm. `model_id`
    "default" is the kind's default model (LLM-Match: the authors' Llama-3.1-8B-Instruct); `params`
    override the kind's defaults."""
    name = kind or kind_for_benchmark(benchmark_slug)
    if name is None:
        raise JudgeError(f"{benchmark_slug!r} has no LLM judge; judges exist for {', '.join(judged_benchmarks())}.")
    if model_id == DEFAULT_MODEL:
        model_id = default_model(name)
    spec = judge_spec(model_id, backend=backend, revision=revision, options=backend_options)
    return Judge(name, spec, params=params, batch_size=batch_size)


def judge_texts(judge: Judge, response: str, references, *, question: str = "", premise: str = "",
                plausible: str = "", other: str = "") -> dict:
    """One verdict from plain texts, without a benchmark request: `references` is the ground truth
    (CVRR-ES: one answer), the references (LLM-Match, MAIA) or the gold explanation followed by the
    validated human ones (NL-EYE, which also needs `premise`, `plausible` and `other`)."""
    references = [references] if isinstance(references, str) else list(references)
    name = judge.kind.name
    if name == CvrrJudge.name:
        if len(references) != 1:
            raise JudgeError("The CVRR-ES judge compares with one ground-truth answer.")
        request = EvalRequest("text:qa", "text", "qa", question, question, gold=references[0])
    elif name == NleyeExplanationJudge.name:
        source = {"premise": premise, "hypothesis1": plausible, "hypothesis2": other, "label": 1,
                  "explanation": references[0] if references else "", "human_explanations": references[1:]}
        request = EvalRequest("text:triplet", "text", "triplet", "", "", gold=1, answer_type="choice_12",
                              source=source)
    else:
        variant = "text_gen" if name == LlmMatch.name else "oevqa"
        request = EvalRequest(f"text:{variant}", "text", variant, question, question, gold=references)
    return judge(request, response)
