"""Support for the evaluation runner tests: a small test-only benchmark, frozen versions built from
real sample media, a backend wrapper that counts model calls, and a process entry point.

`ToyBenchmark` exercises every request feature the runner reads (media of both kinds, video parts
with a hidden middle, canvas, text only, image-to-text captions, DSCP, several samples) without
depending on the real benchmark modules, which are written separately.

Run as a module (`python -m tests.eval_support evaluate ...`) it is a separate worker process:
Django is set up from the environment (DATABASE_URL, MEDIA_ROOT), the toy benchmark stands in for
every benchmark slug, and the arguments go to `call_command` (or, after `celery`, to the Celery
command line of the project's app: `python -m tests.eval_support celery worker -Q gpu`).
"""

from __future__ import annotations

import os
import sys

from evaluation import prompting
from evaluation.benchmarks.base import Benchmark, EvalRequest, MediaInput

QUESTION = "What happens in the scene?"
DESCRIBE = "Describe this picture in one sentence."
# bikes.mp4 is 10 s long: before, during (hidden from the model) and after the event
PARTS = (("pre", (0.0, 3.0), False), ("main", (3.0, 6.0), True), ("post", (6.0, 10.0), False))


def _media_order(role: str) -> tuple:
    return (role != "premise", role)


class ToyBenchmark(Benchmark):
    """One request per item and variant (`<external id>:<variant>`); an item's payload lists its
    variants. `parts` shows the item's video as three parts with a hidden middle; `sampled` asks
    for three responses."""

    slug = "toy"
    variants = ("open", "sampled", "parts")
    input_strategies = ("default", "video", "combined", "text_only", "image_to_text")
    prompting_strategies = ("standard", "cot", "dscp")

    def requests(self, item, options):
        media = sorted(item.media.all(), key=lambda m: _media_order(m.role))
        out = []
        for variant in item.payload.get("variants", ["open"]):
            inputs = self._media(media, variant)
            base = f"{item.payload['question']} [{item.external_id} {variant}]"
            describe = ""
            if options.input_strategy == "text_only":
                inputs = []
            elif options.input_strategy == "image_to_text":
                describe = DESCRIBE
                base = "\n".join(f"{m.role}: {{caption:{m.role}}}" for m in inputs) + "\n" + base
            prompt, context = prompting.apply(base, options.prompting)
            out.append(EvalRequest(
                request_id=f"{item.external_id}:{variant}", item_id=item.external_id, variant=variant,
                text=item.payload["question"], prompt=prompt, media=inputs, gold=item.payload["answer"],
                n_samples=3 if variant == "sampled" else 1, context_prompt=context, describe_prompt=describe,
                extra={"canvas": options.input_strategy == "combined"}))
        return out

    @staticmethod
    def _media(media, variant: str) -> list[MediaInput]:
        if variant == "parts":
            video = next(m for m in media if m.video_id)
            return [MediaInput(role=role, kind="video", asset_id=video.video_id, segment=segment, hidden=hidden,
                               label=role.title()) for role, segment, hidden in PARTS]
        return [MediaInput(role=m.role, kind="video" if m.video_id else "image", asset_id=m.video_id or m.image_id,
                           label=m.role.replace("hypothesis", "Hypothesis ").title()) for m in media]


TOY = ToyBenchmark()


def use_toy_benchmark(monkeypatch) -> ToyBenchmark:
    """Every benchmark slug resolves to the toy benchmark for this test."""
    import evaluation.benchmarks

    monkeypatch.setattr(evaluation.benchmarks, "get", lambda slug: TOY)
    return TOY


def frozen_version(slug: str, label: str, items: list[tuple[str, dict, dict]]):
    """A frozen version of benchmark `slug` with items (external id, payload, {role: asset})."""
    from annotation.models import Benchmark, BenchmarkVersion
    from annotation.versions import add_item, freeze

    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug=slug), label=label)
    for external_id, payload, media in items:
        add_item(version, external_id, payload, media)
    return freeze(version)


def make_version(label: str, items: list[tuple[str, dict, list[str]]]):
    """A frozen version for the toy benchmark with items (external id, {role: asset}, variants)."""
    return frozen_version("cvrr", label, [
        (external_id, {"kind": "qa", "dimension": "toy", "video_id": external_id, "question": QUESTION,
                       "answer": "bikes", "variants": variants}, media)
        for external_id, media, variants in items])


# --- Counting model calls -------------------------------------------------------------------------

class CountingBackend:
    """A real backend with a record of every `generate` call (the requests it was asked)."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.model_id, self.revision = inner.name, inner.model_id, inner.revision
        self.calls: list[list] = []

    def generate(self, requests):
        self.calls.append(list(requests))
        return self.inner.generate(requests)

    def score_logprob(self, texts, *, prefix=""):
        return self.inner.score_logprob(texts, prefix=prefix)


class CountingLoader:
    """Stands in for `registry.load_backend`: loads each real backend once per test session and hands
    out a fresh CountingBackend around it on every load."""

    _real: dict[tuple, object] = {}

    def __init__(self, load):
        self.load = load
        self.loaded: list[CountingBackend] = []

    def __call__(self, name, model_id, *, revision="", **options):
        key = (name, model_id, revision, tuple(sorted((k, repr(v)) for k, v in options.items())))
        if key not in self._real:
            self._real[key] = self.load(name, model_id, revision=revision, **options)
        backend = CountingBackend(self._real[key])
        self.loaded.append(backend)
        return backend

    @property
    def requests(self) -> list:
        return [request for backend in self.loaded for call in backend.calls for request in call]


def count_model_calls(monkeypatch) -> CountingLoader:
    """Count every model call of this test (a Celery worker's kept models are dropped first, so that
    every backend is loaded, and counted, anew)."""
    from evaluation import tasks
    from generation.backends import registry

    tasks.WORKER_BACKENDS.clear()
    loader = CountingLoader(registry.load_backend)
    monkeypatch.setattr(registry, "load_backend", loader)
    return loader


# --- A separate worker process ------------------------------------------------------------------

def database_url(settings_dict: dict) -> str:
    """A DATABASE_URL naming the database this process uses (the test database during tests)."""
    engine = settings_dict["ENGINE"]
    if engine.endswith("sqlite3"):
        return f"sqlite:///{settings_dict['NAME']}"
    if "postgresql" in engine:
        user, password = settings_dict.get("USER") or "", settings_dict.get("PASSWORD") or ""
        auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
        return f"postgres://{auth}{settings_dict.get('HOST') or ''}:{settings_dict.get('PORT') or 5432}/" \
               f"{settings_dict['NAME']}"
    raise ValueError(f"no DATABASE_URL for {engine}")


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    import evaluation.benchmarks

    evaluation.benchmarks.get = lambda slug: TOY
    if argv[:1] == ["celery"]:
        from config.celery import app

        app.start(argv[1:])
    else:
        call_command(*argv)


if __name__ == "__main__":
    main(sys.argv[1:])
