"""Baselines of the papers, each stored as an ordinary evaluation run (backend `baseline`) with one
Prediction per request and sample, so that results and leaderboards show them beside the models.
Raw outputs are written in the form the answer parsers read (a letter, "yes"/"no", "1"/"2", a
score), and parsed like any model's.

Which benchmark a baseline fits is the benchmark's own declaration (`Benchmark.baselines`); `random`
fits every benchmark.

- `random` (any benchmark; model id `random:seed=<seed>`): a uniform draw per request from the
  answers its type allows: a shown option letter, yes/no, 1/2 (NL-EYE triplets), a score 1–10
  (NL-EYE pairs). Each request draws from its own generator seeded with `derived_seed(seed, request
  id)`, so a run is reproducible and independent of request order. Requests of other answer types
  (open answers, counts) get no prediction; the run's message counts them. (NL-EYE §4.3's random
  baseline; SPEC §3.)
- `dumb_pixel` (NL-EYE; `dumb_pixel`, seeds/002 §4.3): reads the upper-left pixel of each hypothesis
  image as luma (PIL's "L" conversion, ITU-R 601-2). Triplets: the hypothesis with the brighter pixel
  is the more plausible (equal pixels: hypothesis 1 of the item), answered as its shown position, so
  the choice is the same in both orders. Pairs: score = 1 + round(9 × luma / 255), half up (0 → 1,
  255 → 10).
- `nli` (NL-EYE text-only; `nli:<model>`, seeds/002 §4.3): the `nli` backend's entailment probability
  of premise → each hypothesis description (the gold scene texts). Triplets: the higher one (equal:
  hypothesis 1), as its shown position; pairs: score = 1 + round(9 × p), half up.
- `unimodal` (MAIA VSV; `unimodal:<model>[,<model>…]`, seeds/004 §4, App. B.1): every statement of
  a pair is scored by each causal LM with the length-normalised log-probability (`score_logprob`);
  per pair the statement with the highest score under any of the models is chosen and answered with
  its letter (a tie between the two letters: the first shown, recorded as a tie).

The 1-frame and black-video settings are not baselines here: they are ordinary model runs under the
`first` and `black:N` frame policies.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from django.db import transaction

from annotation.models import BenchmarkItem
from evaluation import benchmarks, runner, runs, scoring
from evaluation.benchmarks.base import RequestOptions, derived_seed, media_links
from evaluation.models import EvaluationRun, Prediction
from generation import model_registry
from generation.backends import registry
from generation.backends.base import BackendError
from generation.registered_models import Use

BACKEND = "baseline"
BASELINES = ("random", "dumb_pixel", "nli", "unimodal")
MODEL_USES = {"nli": Use.NLI, "unimodal": Use.BASELINE}  # the baselines that answer with registered models
RANDOM_ANSWERS = {"yes_no": ("yes", "no"), "choice_12": ("1", "2"),
                  "score_1_10": tuple(str(score) for score in range(1, 11))}
HYPOTHESES = ("hypothesis1", "hypothesis2")


class BaselineError(ValueError):
    """A baseline that does not apply to this benchmark or these options; the message says why."""


@dataclass
class Answer:
    """A baseline's raw outputs for one request (one per sample), what it read, or the error."""

    texts: list[str]
    inputs: dict
    error: str = ""


# --- Decision rules (plain functions over what the baseline reads) ----------------------------------

def random_answers(request, seed: int, n: int) -> list[str] | None:
    """n seeded uniform answers for a request; None for an answer type without a random answer."""
    rng = random.Random(derived_seed(seed, request.request_id))
    if request.answer_type == "letter":
        choices = tuple(request.options or ())
    else:
        choices = RANDOM_ANSWERS.get(request.answer_type, ())
    if not choices:
        return None
    return [rng.choice(choices) for _ in range(n)]


def scale_score(fraction: float) -> int:
    """A value in [0, 1] on the 1–10 plausibility scale: 1 + 9 × fraction, rounded half up."""
    return 1 + math.floor(9 * min(max(fraction, 0.0), 1.0) + 0.5)


def pixel_score(luma: int) -> int:
    return scale_score(luma / 255)


def preferred_hypothesis(values: dict[str, float]) -> str:
    """The source hypothesis with the higher value (hypothesis1 on a tie), whatever order they are shown in."""
    return "hypothesis2" if values["hypothesis2"] > values["hypothesis1"] else "hypothesis1"


def nleye_answer(request, values: dict[str, float], to_score) -> str:
    """A triplet's answer (the shown position, "1" or "2", of the preferred hypothesis) or a pair's score."""
    if request.variant == "triplet":
        return str(request.extra["shown"].index(preferred_hypothesis(values)))
    return str(to_score(values[f"hypothesis{request.extra['hypothesis']}"]))


def unimodal_choice(scores: dict[str, dict[str, float]], letters: list[str]) -> tuple[str, str, bool]:
    """(letter, model, tie) of the highest length-normalised log-probability over every model and
    letter; NaN scores (empty statements) are ignored. ValueError when nothing was scored."""
    best: tuple[float, int, str, str] | None = None
    for model, by_letter in scores.items():
        for position, letter in enumerate(letters):
            value = by_letter.get(letter)
            if value is None or math.isnan(value):
                continue
            if best is None or value > best[0] or (value == best[0] and position < best[1]):
                best = (value, position, letter, model)
    if best is None:
        raise ValueError("no statement could be scored")
    tie = sum(1 for letter in letters
              if max((s.get(letter, -math.inf) for s in scores.values()), default=-math.inf) == best[0]) > 1
    return best[2], best[3], tie


def upper_left_luma(path) -> int:
    from PIL import Image

    with Image.open(path) as image:
        return int(image.convert("L").getpixel((0, 0)))


# --- The baselines ----------------------------------------------------------------------------------

class Baseline:
    """A paper baseline. `everywhere` ones (random) fit every benchmark; the others fit the benchmarks that
    name them in their `Benchmark.baselines`."""

    name = ""
    everywhere = False
    input_strategy = ""  # the strategy the baseline runs under ("" = the run's choice)
    variants: tuple[str, ...] = ()  # the variants it answers (empty: any)

    def __init__(self, *, seed: int = 0, models: tuple = (), revision: str = "", batch_size: int = 16,
                 model_options: dict | None = None):
        self.seed, self.models, self.revision, self.batch_size = int(seed), tuple(models), revision, batch_size
        self.model_options = dict(model_options or {})  # model id → its load options
        self.revisions: list[str] = []

    def load(self, backend: str, model: str):
        return registry.load_backend(backend, model, revision=self.revision,
                                     **{**self.model_options.get(model, {}), "batch_size": self.batch_size})

    def check(self) -> None:
        """Refuse options the baseline cannot use (before anything is stored)."""

    def model_id(self) -> str:
        return self.name

    def record(self) -> dict:
        return {"baseline": self.name}

    def answer(self, run: EvaluationRun, planned: list[runner.PlannedRequest]) -> dict[str, Answer | None]:
        """request id → Answer, or None for a request the baseline does not answer."""
        raise NotImplementedError


class RandomBaseline(Baseline):
    name = "random"
    everywhere = True

    def model_id(self) -> str:
        return f"random:seed={self.seed}"

    def record(self) -> dict:
        return {"baseline": self.name, "seed": self.seed}

    def answer(self, run, planned):
        out = {}
        for p in planned:
            texts = random_answers(p.request, self.seed, runner.samples_for(run, p.request))
            out[p.request.request_id] = None if texts is None else Answer(
                texts, {"baseline": self.name, "seed": self.seed, "rng_seed": derived_seed(self.seed,
                                                                                           p.request.request_id)})
        return out


class DumbPixelBaseline(Baseline):
    name = "dumb_pixel"
    input_strategy = "separate"

    def answer(self, run, planned):
        items = {item.pk: item for item in BenchmarkItem.objects.filter(pk__in={p.item_pk for p in planned})
                 .prefetch_related("media__image")}
        lumas: dict[int, dict[str, int] | str] = {}
        for pk, item in items.items():
            links = media_links(item)
            try:
                lumas[pk] = {role: upper_left_luma(links[role].image.file.path) for role in HYPOTHESES}
            except (KeyError, AttributeError):
                missing = [role for role in HYPOTHESES if getattr(links.get(role), "image", None) is None]
                lumas[pk] = f"the item has no image under role {', '.join(map(repr, missing))}"
            except OSError as exc:
                lumas[pk] = f"cannot read a hypothesis image: {exc}"
        out = {}
        for p in planned:
            found = lumas[p.item_pk]
            if isinstance(found, str):
                out[p.request.request_id] = Answer([], {}, error=f"dumb_pixel: {found}")
                continue
            text = nleye_answer(p.request, found, pixel_score)
            out[p.request.request_id] = Answer([text] * runner.samples_for(run, p.request),
                                               {"baseline": self.name, "upper_left_luma": found})
        return out


class NliBaseline(Baseline):
    name = "nli"
    input_strategy = "text_only"

    def check(self) -> None:
        if len(self.models) != 1:
            raise BaselineError("The nli baseline takes one NLI model (--model).")

    def model_id(self) -> str:
        return f"nli:{self.models[0]}"

    def record(self) -> dict:
        return {"baseline": self.name, "models": [{"model_id": self.models[0], "revision": self.revision,
                                                   "resolved_revision": self.revisions[0]}]}

    def answer(self, run, planned):
        backend = self.load("nli", self.models[0])
        texts = {}
        for p in planned:
            source = p.request.source
            texts[p.item_pk] = (source["premise"], {role: source[role] for role in HYPOTHESES})
        order = [(pk, role) for pk in texts for role in HYPOTHESES]
        probabilities = backend.entailment([texts[pk][0] for pk, _ in order],
                                           [texts[pk][1][role] for pk, role in order])
        entailment: dict[int, dict[str, float]] = {}
        for (pk, role), probability in zip(order, probabilities, strict=True):
            entailment.setdefault(pk, {})[role] = probability
        out = {}
        for p in planned:
            values = entailment[p.item_pk]
            text = nleye_answer(p.request, values, scale_score)
            out[p.request.request_id] = Answer([text] * runner.samples_for(run, p.request),
                                               {"baseline": self.name, "model": self.models[0],
                                                "premise": texts[p.item_pk][0], "hypotheses": texts[p.item_pk][1],
                                                "entailment": values})
        return out


class UnimodalBaseline(Baseline):
    name = "unimodal"
    variants = ("vsv",)

    def check(self) -> None:
        if not self.models:
            raise BaselineError("The unimodal baseline needs one or more causal LMs (--model, repeatable).")
        if len(set(self.models)) != len(self.models):
            raise BaselineError("The unimodal baseline's models must differ.")

    def model_id(self) -> str:
        return "unimodal:" + ",".join(self.models)

    def record(self) -> dict:
        return {"baseline": self.name, "models": [
            {"model_id": model, "revision": self.revision, "resolved_revision": resolved}
            for model, resolved in zip(self.models, self.revisions, strict=True)]}

    def answer(self, run, planned):
        statements = sorted({text for p in planned for text in (p.request.options or {}).values()})
        scores: dict[str, dict[str, float]] = {}
        for model in self.models:
            backend = self.load("causal_lm", model)
            scores[model] = dict(zip(statements, backend.score_logprob(statements), strict=True))
        out = {}
        for p in planned:
            options = p.request.options or {}
            by_model = {model: {letter: scores[model][text] for letter, text in options.items()}
                        for model in self.models}
            try:
                letter, model, tie = unimodal_choice(by_model, list(options))
            except ValueError as exc:
                out[p.request.request_id] = Answer([], {"logprob": by_model}, error=f"unimodal: {exc}")
                continue
            out[p.request.request_id] = Answer([letter] * runner.samples_for(run, p.request),
                                               {"baseline": self.name, "statements": options, "logprob": by_model,
                                                "chosen": {"letter": letter, "model": model, "tie": tie}})
        return out


BASELINE_CLASSES = {cls.name: cls for cls in (RandomBaseline, DumbPixelBaseline, NliBaseline, UnimodalBaseline)}


# --- Running one as an evaluation run ---------------------------------------------------------------

def registered_models(baseline: str, references, revision: str = "") -> dict:
    """`models`, `revision` and `model_options` for `run_baseline` from the registered models `references`
    name (their registry names, or the model ids or folders their entries hold): the entries' model ids, the
    revision they are pinned to and their load options. BaselineError when the registry refuses one, or when
    they are pinned to different revisions."""
    use = MODEL_USES.get(baseline)
    if use is None:
        if references:
            raise BaselineError(f"The {baseline} baseline takes no model.")
        return {"models": [], "revision": revision, "model_options": {}}
    try:
        chosen = [model_registry.choose(reference, use=use, revision=revision) for reference in references]
    except model_registry.ModelRefused as exc:
        raise BaselineError(str(exc)) from None
    pinned = sorted({choice.revision for choice in chosen})
    if len(pinned) > 1:
        revisions = ", ".join(f"{choice.name}: {choice.revision or 'none'}" for choice in chosen)
        raise BaselineError(f"The {baseline} baseline loads its models at one revision; {revisions}.")
    return {"models": [choice.model_id for choice in chosen], "revision": pinned[0] if pinned else revision,
            "model_options": {choice.model_id: choice.options for choice in chosen}}


def run_baseline(version, baseline: str, *, seed: int = 0, models=(), revision: str = "", variants=(),
                 limit: int | None = None, input_strategy: str = "", prompting: str = "standard",
                 batch_size: int = 16, user=None, model_options: dict | None = None) -> EvaluationRun:
    """Create a run of `baseline` over a frozen version, answer its requests, and settle its status
    (succeeded when every answered request has its predictions). Raises BaselineError for options
    the baseline cannot use. Pages and commands name registered models (`registered_models`)."""
    if baseline not in BASELINE_CLASSES:
        raise BaselineError(f"Unknown baseline {baseline!r}; choose one of {', '.join(BASELINES)}.")
    maker = BASELINE_CLASSES[baseline](seed=seed, models=models, revision=revision, batch_size=batch_size,
                                       model_options=model_options)
    if not version.frozen:
        raise BaselineError(f"Version {version} is not frozen: freeze it before evaluating on it.")
    slug = version.benchmark.slug
    fits = benchmarks.supporting("baselines", baseline)
    if not maker.everywhere and slug not in fits:
        raise BaselineError(f"The {baseline} baseline is defined for {', '.join(fits) or 'no benchmark'}, "
                            f"not {slug}.")
    maker.check()
    benchmark = runner.benchmark_for(version)
    variants = list(variants or maker.variants)
    unknown = [v for v in variants if v not in benchmark.variants]
    outside = [v for v in variants if maker.variants and v not in maker.variants]
    if unknown or outside:
        allowed = ", ".join(maker.variants or benchmark.variants)
        raise BaselineError(f"The {baseline} baseline answers variants {allowed} of {slug}; "
                            f"got {', '.join(unknown + outside)}.")
    strategy = maker.input_strategy or input_strategy or benchmark.input_strategies[0]
    if input_strategy and maker.input_strategy and input_strategy != maker.input_strategy:
        raise BaselineError(f"The {baseline} baseline runs under input strategy {maker.input_strategy!r}.")
    try:
        strategy = benchmark.resolve_input_strategy(RequestOptions(input_strategy=strategy))
    except ValueError as exc:  # the benchmark's own rule and words, as every request option's check
        raise BaselineError(str(exc)) from None
    try:
        kind = "nli" if baseline == "nli" else "causal_lm"
        maker.revisions = [registry.resolve_revision(kind, model, revision) for model in maker.models]
    except BackendError as exc:
        raise BaselineError(str(exc)) from None
    model_id = maker.model_id()
    if len(model_id) > EvaluationRun._meta.get_field("model_id").max_length:
        raise BaselineError(f"The baseline's model id is too long to store: {model_id[:80]}…")
    run = EvaluationRun(version=version, model_id=model_id, model_revision=revision if maker.models else "",
                        backend=BACKEND, backend_options=maker.record(), input_strategy=strategy,
                        prompting=prompting or "standard", seed=int(seed), variants=variants,
                        limit=limit, batch_size=batch_size, resolved_revision=",".join(maker.revisions)[:128],
                        created_by=user if user is not None and user.pk else None)
    try:
        planned = runner.plan(run, benchmark)
    except ValueError as exc:
        raise BaselineError(str(exc)) from None
    if not planned:
        raise BaselineError(f"No requests: {version} has no items for variants {variants or 'all'}.")
    answers = maker.answer(run, planned)  # before anything is stored: a baseline that fails leaves no run
    answered = [p for p in planned if answers.get(p.request.request_id) is not None]
    left_out = len(planned) - len(answered)
    if not answered:
        raise BaselineError(f"The {baseline} baseline has no answer for any request of {version} under these "
                            f"variants (answer types: {', '.join(sorted({p.request.answer_type for p in planned}))}).")
    run.total_requests = len(answered)
    run.total_predictions = sum(runner.samples_for(run, p.request) for p in answered)
    run.save()
    runs.transition(run, runs.Status.RUNNING, reason=f"Started ({baseline} baseline)", by=run.created_by)
    _write(run, answered, answers)
    run = runs.finish_if_done(run.pk)
    if left_out and run.status == runs.Status.SUCCEEDED:
        note = f"{run.message}; {left_out} requests of other answer types have no {baseline} answer"
        EvaluationRun.objects.filter(pk=run.pk).update(message=note[:500])
        run.refresh_from_db()
    return run


def _write(run: EvaluationRun, answered: list[runner.PlannedRequest], answers: dict[str, Answer]) -> None:
    rows = []
    for p in answered:
        answer = answers[p.request.request_id]
        params = {**run.backend_options, "n_samples": runner.samples_for(run, p.request)}
        common = {"run": run, "request_id": p.request.request_id, "item_id": p.item_pk, "variant": p.request.variant,
                  "prompt": [], "inputs": answer.inputs, "params": params}
        if answer.error:
            rows += [Prediction(sample_index=i, error=answer.error, **common)
                     for i in range(runner.samples_for(run, p.request))]
            continue
        for index, text in enumerate(answer.texts):
            rows.append(scoring.parse_prediction(Prediction(sample_index=index, raw_output=text, latency_s=0.0,
                                                            **common), p.request, run.version.benchmark.slug))
    with transaction.atomic():
        Prediction.objects.bulk_create(rows, ignore_conflicts=True)
