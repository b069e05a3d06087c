"""Evaluation throughput on CPU: batched vs batch-1 generation, and the cost of a fully cached rerun.

    .venv/bin/python bench/eval_throughput.py                       # 24 items (48 requests), batch 8 vs 1
    .venv/bin/python bench/eval_throughput.py --items 48 --batch-size 16 --model qwen2-vl

It works in a throwaway SQLite database and media folder (under a temporary directory), builds
the tiny model once into var/bench/tiny-models/ (`generation.tiny_models`, reused afterwards),
imports scikit-image's sample pictures and makes a frozen C-VQA (real) version whose items ask
about them (each item gives an original and a counterfactual request). Then, through the same
`evaluation.runs` code the `evaluate` command uses, with workers=local:

1. batch-1 run:   every request alone (batch size 1), the response cache emptied first;
2. batched run:   the same requests in batches of --batch-size, the cache emptied first;
3. cached rerun:  the batched run's settings again: every answer comes from the cache.

It prints samples/s of each, the batched/batch-1 speed-up, the cached rerun's time as a share of
the first run's (batch 1, the way a run goes without batching) and of the batched run's, the model
calls each run made, and the targets: batched >= 2x batch-1 on CPU, cached rerun < 5 % of the first
run's time. Exit status 1 when the runs disagree (a cached rerun
that called the model, predictions missing), 2 with --strict when a target is missed.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MODEL_CACHE = ROOT / "var" / "bench" / "tiny-models"
IMAGES = ["astronaut.png", "coffee.png", "chelsea.png", "coins.png", "rocket.jpg", "camera.png", "horse.png",
          "motorcycle_left.png"]
TARGET_SPEEDUP = 2.0
TARGET_CACHED_SHARE = 0.05


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--model", default="qwen2-vl", help="tiny model to build and run (generation.tiny_models)")
    p.add_argument("--items", type=int, default=24, help="C-VQA items (two requests each)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--models-dir", type=Path, default=MODEL_CACHE, help="where the tiny models are built and kept")
    p.add_argument("--strict", action="store_true", help="exit 2 when a target is missed")
    return p.parse_args(argv)


def setup_django(work: Path) -> None:
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "config.settings", "DJANGO_DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{work / 'bench.sqlite3'}",
        "PLATFORM_VAR_DIR": str(work / "var"), "HF_HUB_OFFLINE": "1", "LOG_LEVEL": "WARNING",
        "CELERY_TASK_ALWAYS_EAGER": "true",
    })
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def make_version(n_items: int):
    """A frozen C-VQA real version: counting, yes/no and indirect questions about sample pictures."""
    import skimage

    from annotation.bootstrap import ensure_benchmarks
    from annotation.media_import import import_files
    from annotation.models import Benchmark, BenchmarkVersion, Image
    from annotation.versions import add_item, freeze

    ensure_benchmarks()
    folder = Path(skimage.__file__).parent / "data"
    import_files([folder / name for name in IMAGES if (folder / name).exists()], probe_now=True)
    images = list(Image.objects.filter(status=Image.Status.READY).order_by("pk"))
    questions = [
        ("direct", "How many people are in the picture?", "1", "If one more person joined, how many people would "
         "be in the picture?", "2"),
        ("boolean", "Is there an animal in the picture?", "no", "If a cat were added, would there be an animal in "
         "the picture?", "yes"),
        ("indirect", "How many eyes can be seen?", "2", "If the person closed one eye, how many open eyes would be "
         "seen?", "1"),
    ]
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="bench")
    for index in range(n_items):
        kind, query, answer, new_query, new_answer = questions[index % len(questions)]
        add_item(version, f"bench-{index:04d}", {"kind": "real", "query": query, "answer": answer,
                                                  "new_query": new_query, "new_answer": new_answer, "type": kind},
                 media={"image": images[index % len(images)]})
    return freeze(version)


class CountingBackends:
    """Counts the generate calls every backend of this process makes (model calls, not cache hits)."""

    def __init__(self):
        from generation.backends import registry

        self.calls = 0
        self._original = registry.load_backend
        registry.load_backend = self._load

    def _load(self, *args, **kwargs):
        backend = self._original(*args, **kwargs)
        generate = backend.generate

        def counted(requests):
            self.calls += len(requests)
            return generate(requests)

        backend.generate = counted
        return backend


def timed_run(version, model_path: Path, *, batch_size: int, max_new_tokens: int, counter: CountingBackends,
              clear_cache: bool) -> dict:
    from evaluation import runs
    from evaluation.models import ResponseCache

    if clear_cache:
        ResponseCache.objects.all().delete()
    run = runs.create_run(version, model_id=str(model_path), backend="transformers", batch_size=batch_size,
                          chunk_size=10_000, generation_params={"max_new_tokens": max_new_tokens},
                          backend_options={"batch_size": batch_size})
    calls_before = counter.calls
    started = time.perf_counter()
    run = runs.start_run(run, workers="local")
    seconds = time.perf_counter() - started
    return {"run": run.pk, "status": run.status, "seconds": seconds, "predictions": run.completed_predictions,
            "expected": run.total_predictions, "from_cache": run.cached_predictions,
            "model_calls": counter.calls - calls_before, "samples_per_s": run.completed_predictions / seconds}


def main(argv=None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-eval-"))
    setup_django(work)
    from generation.tiny_models import build_tiny_models

    model_path = build_tiny_models(args.models_dir, [args.model])[args.model]
    version = make_version(args.items)
    print(f"tiny {args.model} from {model_path}; {version} with {version.item_count} items; "
          f"max_new_tokens={args.max_new_tokens}; work folder {work}")
    counter = CountingBackends()
    # one warm-up request so that the first timed run does not pay for imports and lazy initialisation
    timed_run(version, model_path, batch_size=1, max_new_tokens=args.max_new_tokens, counter=counter, clear_cache=True)
    single = timed_run(version, model_path, batch_size=1, max_new_tokens=args.max_new_tokens, counter=counter,
                       clear_cache=True)
    batched = timed_run(version, model_path, batch_size=args.batch_size, max_new_tokens=args.max_new_tokens,
                        counter=counter, clear_cache=True)
    cached = timed_run(version, model_path, batch_size=args.batch_size, max_new_tokens=args.max_new_tokens,
                       counter=counter, clear_cache=False)

    print(f"\n{'run':<14}{'seconds':>9}{'samples/s':>11}{'predictions':>13}{'from cache':>12}{'model calls':>13}")
    for name, r in (("batch 1", single), (f"batch {args.batch_size}", batched), ("cached rerun", cached)):
        print(f"{name:<14}{r['seconds']:>9.2f}{r['samples_per_s']:>11.2f}{r['predictions']:>13}"
              f"{r['from_cache']:>12}{r['model_calls']:>13}")
    speedup = batched["samples_per_s"] / single["samples_per_s"]
    share = cached["seconds"] / single["seconds"]
    print(f"\nbatched / batch-1 speed-up: {speedup:.2f}x (target >= {TARGET_SPEEDUP:.0f}x)")
    print(f"cached rerun: {share:.1%} of the first run's time (target < {TARGET_CACHED_SHARE:.0%}); "
          f"{cached['seconds'] / batched['seconds']:.1%} of the batched run's")

    problems = [f"{name}: {r['predictions']}/{r['expected']} predictions ({r['status']})"
                for name, r in (("batch 1", single), ("batched", batched), ("cached", cached))
                if r["predictions"] != r["expected"]]
    if cached["model_calls"]:
        problems.append(f"the cached rerun called the model {cached['model_calls']} times")
    if problems:
        print("CHECK FAILED: " + "; ".join(problems))
        return 1
    missed = [text for ok, text in ((speedup >= TARGET_SPEEDUP, "speed-up"), (share < TARGET_CACHED_SHARE,
                                                                               "cached rerun share")) if not ok]
    print("targets missed: " + ", ".join(missed) if missed else "all targets met")
    return 2 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
