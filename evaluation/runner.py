"""The evaluation engine: plan a run's requests and execute them, writing one Prediction per sample.

Planning (`plan`): the frozen version's items in `external_id` order (the first `limit`), each
turned into requests by its benchmark module (`BENCHMARK.requests(item, RequestOptions(...))`),
keeping the selected variants and, for a run restricted to a subset (`EvaluationRun.subset`,
`evaluation.subsets`), only the subset's requests. The plan is deterministic, so any process can
recompute it. Each request carries its item's approved judge references
(`evaluation.judge_references.attach`) for the judges.

Executing (`Executor.execute`) a list of planned requests, in batches of the run's batch size:

- (request, sample) pairs that already have a prediction without an error are skipped (resume);
  pairs whose earlier attempt failed are tried again and their error rows replaced;
- inputs are resolved by `evaluation.inputs` (frames, images, canvas, text only);
- image-to-text requests (`describe_prompt`): the describer model captions every medium first and
  the captions fill the `{caption:<role>}` slots; the predictor then answers without media;
- DSCP requests (`context_prompt`): step 1 is asked with the same media, its answer fills the
  `{context}` slot of the prompt (`prompt_with_context`), step 2 is the prediction; step 1 is
  recorded under `inputs["context"]`, captions under `inputs["captions"]`;
- `n_samples` (or the run's override) responses per request, from one call with
  `GenerationParams.n`. Sampling parameters come from the run's `generation_params`; when n > 1
  and the run gives no temperature, `DEFAULT_SAMPLING_TEMPERATURE` (0.7) is used. DSCP step 1 and
  captions are single answers at the run's temperature (greedy when it gives none);
- every call goes through the response cache first (deterministic requests only, see
  `evaluation.cache`); identical deterministic calls within a batch are sent once; successful
  deterministic answers are stored;
- predictions are inserted ignoring conflicts on (run, request_id, sample_index), so a chunk that
  runs twice never duplicates one. A failed request is recorded with `error` (never cached);
- while a batch's calls run, `cancelled()` (when given) is asked every few seconds from a thread
  (`evaluation.cancel_watch`): once it answers True the backend stops retrying and waiting (API
  backends), and the requests left fail with an error saying so.

Token counts: `prompt_tokens` is the call's prompt; for n samples from one call the call's
completion tokens are split over the samples (the sum is exact).
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db import transaction

from evaluation import benchmarks, cache, cancel_watch, judge_references, scoring
from evaluation.benchmarks.base import EvalRequest, RequestOptions
from evaluation.inputs import DEFAULT_FRAME_POLICY, InputError, MediaResolver, MediaSettings
from evaluation.models import EvaluationRun, Prediction
from generation import model_text
from generation.backends import registry
from generation.backends.base import BackendError, ChatRequest, ChatResult, GenerationParams, Message, TextPart
from generation.frames import FramePolicy

logger = logging.getLogger(__name__)

DEFAULT_SAMPLING_TEMPERATURE = 0.7
DEFAULT_MAX_NEW_TOKENS = 256
HF_BACKENDS = ("transformers", "causal_lm")  # local backends that take a batch_size option
CAPTION_SLOT = re.compile(r"\{caption:([^{}]+)\}")
_COMMIT = re.compile(r"[0-9a-f]{40}")


class PlanError(ValueError):
    """The benchmark module produced requests the runner cannot use."""


# --- Planning -------------------------------------------------------------------------------------

@dataclass
class PlannedRequest:
    position: int
    item_pk: int
    request: EvalRequest


def benchmark_for(version):
    """The benchmark module's BENCHMARK for a version (KeyError / ImportError when there is none)."""
    return benchmarks.get(version.benchmark.slug)


def plan(run: EvaluationRun, benchmark=None) -> list[PlannedRequest]:
    benchmark = benchmark or benchmark_for(run.version)
    options = RequestOptions(input_strategy=run.input_strategy, prompting=run.prompting, seed=run.seed,
                             option_order=run.option_order or "release")
    items = run.version.items.order_by("external_id").prefetch_related("media__video", "media__image")
    if run.limit:
        items = items[:run.limit]
    variants = set(run.variants or [])
    subset = set(run.subset.request_ids or []) if run.subset_id else None
    planned: list[PlannedRequest] = []
    seen: set[str] = set()
    for item in items:
        for request in benchmark.requests(item, options):
            if variants and request.variant not in variants:
                continue
            if subset is not None and request.request_id not in subset:
                continue
            if request.request_id in seen:
                raise PlanError(f"The benchmark made two requests with the id {request.request_id!r}.")
            seen.add(request.request_id)
            planned.append(PlannedRequest(len(planned), item.pk, request))
    for entry, request in zip(planned, judge_references.attach((p.item_pk, p.request) for p in planned),
                              strict=True):
        entry.request = request
    return planned


def samples_for(run: EvaluationRun, request: EvalRequest) -> int:
    return int(run.n_samples or request.n_samples or 1)


def frame_policy_of(run: EvaluationRun) -> FramePolicy:
    return FramePolicy.from_dict(run.frame_policy) if run.frame_policy else FramePolicy.parse(DEFAULT_FRAME_POLICY)


def generation_params(run: EvaluationRun, n: int) -> GenerationParams:
    """The parameters of a call drawing `n` responses (see the module docstring for the defaults)."""
    given = run.generation_params or {}
    temperature = given.get("temperature")
    if temperature is None:
        temperature = DEFAULT_SAMPLING_TEMPERATURE if n > 1 else 0.0
    return GenerationParams(max_new_tokens=int(given.get("max_new_tokens") or DEFAULT_MAX_NEW_TOKENS),
                            temperature=float(temperature), top_p=float(given.get("top_p", 1.0)), n=n,
                            seed=int(run.seed))


# --- Backends -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BackendSpec:
    """Which model answers, as loaded and as keyed in the cache."""

    backend: str
    model_id: str
    revision: str = ""
    resolved_revision: str = ""
    options: tuple = ()  # sorted (key, value) pairs

    @property
    def option_dict(self) -> dict:
        return dict(self.options)

    @property
    def load_revision(self) -> str:
        """A resolved commit pins the weights to what the cache keys name; otherwise what was asked."""
        return self.resolved_revision if _COMMIT.fullmatch(self.resolved_revision or "") else self.revision

    @property
    def cache_revision(self) -> str:
        return self.resolved_revision or self.revision

    @classmethod
    def make(cls, backend: str, model_id: str, revision: str = "", resolved_revision: str = "",
             options: dict | None = None) -> BackendSpec:
        return cls(backend, model_id, revision or "", resolved_revision or "",
                   tuple(sorted((options or {}).items(), key=lambda kv: kv[0])))


def predictor_spec(run: EvaluationRun) -> BackendSpec:
    return BackendSpec.make(run.backend, run.model_id, run.model_revision, run.resolved_revision, run.backend_options)


def describer_spec(run: EvaluationRun) -> BackendSpec | None:
    describer = run.describer or {}
    if not describer.get("model_id"):
        return None
    return BackendSpec.make(describer.get("backend") or "transformers", describer["model_id"],
                            describer.get("revision", ""), describer.get("resolved_revision", ""),
                            describer.get("options") or {})


class BackendPool:
    """Loads backends on first use and keeps the last `max_loaded` (a worker keeps its model between
    chunks); a backend dropped from the pool is closed. `batch_size` goes to local backends that take
    one, unless the options set it."""

    def __init__(self, *, max_loaded: int = 2):
        self.max_loaded = max_loaded
        self._loaded: OrderedDict[BackendSpec, object] = OrderedDict()

    def get(self, spec: BackendSpec, *, batch_size: int | None = None):
        if spec in self._loaded:
            self._loaded.move_to_end(spec)
            return self._loaded[spec]
        options = spec.option_dict
        if batch_size and spec.backend in HF_BACKENDS:
            options.setdefault("batch_size", batch_size)
        backend = registry.load_backend(spec.backend, spec.model_id, revision=spec.load_revision, **options)
        self._loaded[spec] = backend
        while len(self._loaded) > self.max_loaded:
            _, dropped = self._loaded.popitem(last=False)
            registry.close_backend(dropped)
        return backend

    def clear(self) -> None:
        """Drop every loaded backend, closing what they hold open (connections of API backends)."""
        while self._loaded:
            _, dropped = self._loaded.popitem(last=False)
            registry.close_backend(dropped)


# --- Execution ------------------------------------------------------------------------------------

@dataclass
class Outcome:
    """One call's answer, from the model or from the cache."""

    texts: list[str]
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str = ""
    from_cache: bool = False
    nul_removed: list[int] = field(default_factory=list)  # per text (generation.model_text)

    @classmethod
    def cached(cls, row) -> Outcome:
        """The answer a `ResponseCache` row keeps."""
        texts, removed = cache.texts_of(row)
        return cls(texts, 0.0, row.prompt_tokens, row.completion_tokens, from_cache=True, nul_removed=removed)

    @classmethod
    def of(cls, result: ChatResult) -> Outcome:
        return cls(list(result.texts), result.latency_s, result.prompt_tokens, result.completion_tokens, result.error,
                   nul_removed=list(result.nul_removed))

    @property
    def text(self) -> str:
        return self.texts[0] if self.texts else ""

    def removed(self, index: int = 0) -> int:
        """The NUL characters removed from text `index`."""
        return self.nul_removed[index] if index < len(self.nul_removed) else 0

    def record(self, chat: ChatRequest) -> dict:
        return {"prompt": chat.describe(), "output": self.text, "params": model_text.noted(chat.params.as_dict(),
                                                                                          self.removed()),
                "latency_s": self.latency_s, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "from_cache": self.from_cache, "error": self.error}


@dataclass
class ExecutionStats:
    requests: int = 0
    skipped: int = 0  # samples that already had a prediction
    written: int = 0
    from_cache: int = 0
    errors: int = 0
    model_calls: int = 0  # calls sent to a backend (not answered by the cache)
    stopped: bool = False

    def add(self, other: ExecutionStats) -> None:
        for name in ("requests", "skipped", "written", "from_cache", "errors", "model_calls"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.stopped = self.stopped or other.stopped


@dataclass
class _Unit:
    """One request on its way through the stages of a batch."""

    planned: PlannedRequest
    missing: list[int]
    inputs: object = None
    error: str = ""
    captions: dict = field(default_factory=dict)
    caption_records: dict = field(default_factory=dict)
    context_text: str = ""
    context_record: dict | None = None
    final: ChatRequest | None = None
    outcome: Outcome | None = None

    @property
    def request(self) -> EvalRequest:
        return self.planned.request

    def fail(self, message: str) -> None:
        self.error = self.error or message


def fill_captions(prompt: str, captions: dict[str, str]) -> str:
    """Replace every `{caption:<role>}` slot; a slot without a caption is an error."""
    missing = sorted({role for role in CAPTION_SLOT.findall(prompt) if role not in captions})
    if missing:
        raise InputError(f"No caption for {', '.join(map(repr, missing))} (the request shows no such medium).")
    return CAPTION_SLOT.sub(lambda m: captions[m.group(1)].strip(), prompt)


class Executor:
    """Executes planned requests of one run (see the module docstring).

    `should_stop()` is asked before every batch (a cancelled run stops there); `cancelled()`, a read-only
    check safe from another thread, every few seconds while a batch's calls run; `after_batch(stats)`
    is told after each batch's predictions are written.
    """

    def __init__(self, run: EvaluationRun, *, pool: BackendPool | None = None,
                 should_stop: Callable[[], bool] = lambda: False,
                 after_batch: Callable[[ExecutionStats], None] = lambda stats: None,
                 cancelled: Callable[[], bool] | None = None):
        self.run = run
        self.pool = pool or BackendPool()
        self.should_stop = should_stop
        self.cancelled = cancelled
        self.after_batch = after_batch
        self.resolver = MediaResolver(MediaSettings(run.input_strategy, frame_policy_of(run)))
        self.predictor = predictor_spec(run)
        self.describer = describer_spec(run)
        self.batch_size = max(1, int(run.batch_size or 1))
        self.single_params = generation_params(run, 1)  # DSCP step 1 and captions: one answer each
        self.benchmark_slug = run.version.benchmark.slug  # predictions are parsed as they are written

    # -- the loop
    def execute(self, planned: list[PlannedRequest]) -> ExecutionStats:
        stats = ExecutionStats(requests=len(planned))
        ids = [p.request.request_id for p in planned]
        done: set[tuple[str, int]] = set()
        for start in range(0, len(ids), 500):
            done.update(Prediction.objects.filter(run=self.run, request_id__in=ids[start:start + 500], error="")
                        .values_list("request_id", "sample_index"))
        todo = []
        for item in planned:
            n = samples_for(self.run, item.request)
            missing = [i for i in range(n) if (item.request.request_id, i) not in done]
            stats.skipped += n - len(missing)
            if missing:
                todo.append((item, missing))
        for start in range(0, len(todo), self.batch_size):
            if self.should_stop():
                stats.stopped = True
                break
            batch_stats = self._run_batch(todo[start:start + self.batch_size])
            stats.add(batch_stats)
            self.after_batch(stats)
        return stats

    def _run_batch(self, batch: list[tuple[PlannedRequest, list[int]]]) -> ExecutionStats:
        stats = ExecutionStats()
        units = [_Unit(planned, missing) for planned, missing in batch]
        self.resolver.prefetch([u.request for u in units])
        for unit in units:
            try:
                unit.inputs = self.resolver.resolve(unit.request, separate=bool(unit.request.describe_prompt))
            except InputError as exc:
                unit.fail(f"inputs: {exc}")
        self._captions([u for u in units if not u.error and u.request.describe_prompt], stats)
        self._contexts([u for u in units if not u.error and u.request.context_prompt], stats)
        self._finals([u for u in units if not u.error], stats)
        rows = [row for unit in units for row in self._rows(unit)]
        self._write(rows, [u.request.request_id for u in units])
        stats.written = sum(1 for r in rows if not r.error)
        stats.errors = sum(1 for r in rows if r.error)
        stats.from_cache = sum(1 for r in rows if r.from_cache and not r.error)
        return stats

    # -- stages
    def _media_parts(self, unit: _Unit) -> tuple:
        if unit.request.describe_prompt:  # image-to-text: the predictor sees only the captions
            return ()
        return tuple(unit.inputs.parts)

    def _captions(self, units: list[_Unit], stats: ExecutionStats) -> None:
        if not units:
            return
        if self.describer is None:
            for unit in units:
                unit.fail("image-to-text: the run has no describer model")
            return
        calls = []
        for unit in units:
            for medium, parts in unit.inputs.per_medium:
                chat = ChatRequest(messages=[Message("user", (*parts, TextPart(unit.request.describe_prompt)))],
                                   params=GenerationParams(**self.single_params.as_dict()),
                                   request_id=f"{unit.request.request_id}#caption:{medium.role}")
                calls.append((unit, medium.role, chat))
            if not unit.inputs.per_medium:
                unit.fail("image-to-text: the request shows no medium to describe")
        outcomes = self._call(self.describer, [chat for _, _, chat in calls], stats)
        for (unit, role, chat), outcome in zip(calls, outcomes, strict=True):
            unit.caption_records[role] = {**outcome.record(chat), "model": self.describer.model_id,
                                          "backend": self.describer.backend}
            if outcome.error or not outcome.text.strip():
                unit.fail(f"caption of {role!r} failed: {outcome.error or 'empty caption'}")
            else:
                unit.captions[role] = outcome.text

    def _contexts(self, units: list[_Unit], stats: ExecutionStats) -> None:
        if not units:
            return
        chats = [ChatRequest(messages=[Message("user", (*self._media_parts(u), TextPart(u.request.context_prompt)))],
                             params=GenerationParams(**self.single_params.as_dict()),
                             request_id=f"{u.request.request_id}#context") for u in units]
        for unit, chat, outcome in zip(units, chats, self._call(self.predictor, chats, stats), strict=True):
            unit.context_record = outcome.record(chat)
            if outcome.error or not outcome.text.strip():
                unit.fail(f"context step failed: {outcome.error or 'empty answer'}")
            else:
                unit.context_text = outcome.text

    def _finals(self, units: list[_Unit], stats: ExecutionStats) -> None:
        ready = []
        for unit in units:
            prompt = unit.request.prompt_with_context(unit.context_text)
            try:
                if unit.request.describe_prompt:
                    prompt = fill_captions(prompt, unit.captions)
            except InputError as exc:
                unit.fail(f"inputs: {exc}")
                continue
            unit.final = ChatRequest(messages=[Message("user", (*self._media_parts(unit), TextPart(prompt)))],
                                     params=generation_params(self.run, len(unit.missing)),
                                     request_id=unit.request.request_id)
            ready.append(unit)
        outcomes = self._call(self.predictor, [u.final for u in ready], stats)
        for unit, outcome in zip(ready, outcomes, strict=True):
            unit.outcome = outcome
            if outcome.error:
                unit.fail(outcome.error)
            elif len(outcome.texts) < len(unit.missing):
                unit.fail(f"the backend returned {len(outcome.texts)} of {len(unit.missing)} responses")

    # -- model calls through the cache
    def _call(self, spec: BackendSpec, chats: list[ChatRequest], stats: ExecutionStats) -> list[Outcome]:
        keys = [cache.cache_key(model_id=spec.model_id, revision=spec.cache_revision, backend=spec.backend,
                                request=chat, backend_options=spec.option_dict) if cache.cacheable(chat) else None
                for chat in chats]
        hits = cache.lookup([k for k in keys if k])
        outcomes: list[Outcome | None] = [None] * len(chats)
        to_send: list[ChatRequest] = []
        owners: list[list[int]] = []
        sent_by_key: dict[str, int] = {}
        for index, (chat, key) in enumerate(zip(chats, keys, strict=True)):
            if key and key in hits:
                outcomes[index] = Outcome.cached(hits[key])
            elif key and key in sent_by_key:
                owners[sent_by_key[key]].append(index)
            else:
                if key:
                    sent_by_key[key] = len(to_send)
                to_send.append(chat)
                owners.append([index])
        if to_send:
            backend = self.pool.get(spec, batch_size=self.batch_size)
            stats.model_calls += len(to_send)
            try:
                with cancel_watch.CancelWatch(self.cancelled) as stop:
                    results = registry.generate(backend, to_send, stop=stop)
            except BackendError:
                raise
            except Exception as exc:  # noqa: BLE001 - recorded on every prediction of the batch, retried on resume
                logger.exception("%s failed on a batch of %d", spec.backend, len(to_send))
                results = [ChatResult(texts=[], error=f"{type(exc).__name__}: {exc}") for _ in to_send]
            if len(results) != len(to_send):
                raise BackendError(f"{spec.backend}: {len(results)} results for {len(to_send)} requests")
            for result, owner in zip(results, owners, strict=True):
                key = keys[owner[0]]
                if key and result.ok:
                    cache.store(key, model_id=spec.model_id, revision=spec.cache_revision, backend=spec.backend,
                                result=result)
                for index in owner:
                    outcomes[index] = Outcome.of(result)
        return outcomes

    # -- predictions
    def _rows(self, unit: _Unit) -> list[Prediction]:
        inputs = dict(unit.inputs.record) if unit.inputs is not None else {}
        if unit.caption_records:
            inputs["captions"] = unit.caption_records
        if unit.context_record is not None:
            inputs["context"] = unit.context_record
        request = unit.request
        prompt = unit.final.describe() if unit.final is not None else []
        params = unit.final.params.as_dict() if unit.final is not None else \
            generation_params(self.run, len(unit.missing)).as_dict()
        params["n_samples"] = samples_for(self.run, request)
        common = {"run": self.run, "request_id": request.request_id, "item_id": unit.planned.item_pk,
                  "variant": request.variant, "prompt": prompt, "inputs": inputs}
        outcome = unit.outcome
        if unit.error or outcome is None:
            return [Prediction(sample_index=i, error=unit.error or "no answer", params=params, **common)
                    for i in unit.missing]
        shares = _split(outcome.completion_tokens, len(unit.missing))
        return [scoring.parse_prediction(
                    Prediction(sample_index=sample, raw_output=outcome.texts[k], latency_s=outcome.latency_s,
                               prompt_tokens=outcome.prompt_tokens, completion_tokens=shares[k],
                               from_cache=outcome.from_cache, params=model_text.noted(params, outcome.removed(k)),
                               **common), request, self.benchmark_slug)
                for k, sample in enumerate(unit.missing)]

    def _write(self, rows: list[Prediction], request_ids: list[str]) -> None:
        with transaction.atomic():
            # Earlier failed attempts of these requests are replaced; successful rows are never touched.
            Prediction.objects.filter(run=self.run, request_id__in=request_ids).exclude(error="").delete()
            Prediction.objects.bulk_create(rows, ignore_conflicts=True)


def _split(total: int | None, parts: int) -> list[int | None]:
    if total is None:
        return [None] * parts
    base, extra = divmod(int(total), parts)
    return [base + (1 if k < extra else 0) for k in range(parts)]
