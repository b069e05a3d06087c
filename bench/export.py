"""Export time and memory: a million predictions streamed to JSON Lines and Parquet by `evaluation.exports`.

    .venv/bin/python bench/export.py                                 # 1,000,000 predictions, SQLite
    .venv/bin/python bench/export.py --rows 100000 --formats csv,jsonl,parquet,hf
    .venv/bin/python bench/export.py --database-url postgres://postgres@127.0.0.1:5432/bench_export

What it does, in one command:

1. Makes a throwaway database: a SQLite file in a temporary directory by default, or with
   `--database-url` a PostgreSQL database that is dropped and recreated (its name must contain
   `bench`). It migrates it, creates a C-VQA version with `--items` items and `--runs` evaluation
   runs, and inserts `--rows` predictions spread over the runs (by default 10,000 a run: 1,000
   items x 2 variants x 5 samples) with plain SQL (`executemany` on SQLite, `COPY` on PostgreSQL),
   each shaped like a real one: a chat prompt with an image fingerprint, the inputs' order and
   policy, generation parameters, a few hundred characters of output, a parsed answer with every
   parser's reading, latency and token counts.
2. For each format (`--formats`, default `jsonl,parquet`) it starts a fresh Python process, so the
   insert does not count, which sets Django up and exports the predictions of every run through
   `exports.select("predictions", runs=...)` and `exports.write(...)`: the code behind
   `manage.py export_results` and the export job (`hf`: the Hugging Face dataset folder, Parquet files
   and a dataset card, with the JSON columns typed over every row in a first pass).
3. Prints per format the rows written, the wall time of the export, rows/s, the exporting process's
   peak resident memory (VmHWM from /proc/self/status; `ru_maxrss` where /proc is missing), the
   peak of its anonymous memory (RssAnon sampled every 20 ms: VmHWM also counts the pages of
   memory-mapped files that were read, such as the libraries' own), its resident memory
   before the export began (Django and the format's libraries loaded) and the output's size.
   Targets for JSON Lines: at most 60 s and 300 MB peak RSS. Exit status 1 when an export fails or
   writes the wrong number of rows; with `--strict`, 2 when a target is missed.

The temporary directory (database and outputs) and the PostgreSQL database are removed at the end
unless `--keep` is given.
"""

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 60.0
TARGET_RSS_MB = 300.0
INSERT_BATCH = 20_000
WORDS = ("the", "cup", "table", "left", "two", "person", "holds", "red", "because", "after", "video", "shows",
         "a", "dog", "runs", "towards", "ball", "then", "falls", "over", "counterfactually", "there", "would", "be")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--rows", type=int, default=1_000_000, help="predictions to create and export")
    p.add_argument("--runs", type=int, default=100,
                   help="evaluation runs the predictions are spread over (each item x 2 variants x samples)")
    p.add_argument("--items", type=int, default=1000, help="benchmark items the predictions refer to")
    p.add_argument("--formats", default="jsonl,parquet", help="comma-separated: csv, jsonl, parquet, hf")
    p.add_argument("--database-url", default="",
                   help="PostgreSQL URL of a database to drop and recreate (name must contain 'bench'); "
                        "default: a SQLite file in the temporary directory")
    p.add_argument("--chunk-size", type=int, default=2000, help="rows per database round trip while exporting")
    p.add_argument("--batch-rows", type=int, default=10_000, help="rows per Arrow record batch (parquet, hf)")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory and print its path")
    p.add_argument("--strict", action="store_true", help="exit 2 when a JSON Lines target is missed")
    p.add_argument("--child", nargs=2, metavar=("FORMAT", "WORKDIR"), help=argparse.SUPPRESS)
    return p.parse_args(argv)


def django_env(database_url: str, work: Path) -> dict:
    env = dict(os.environ)
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings", "DJANGO_DEBUG": "true", "DATABASE_URL": database_url,
                "PLATFORM_VAR_DIR": str(work / "var"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
                "HF_HOME": str(work / "hf"), "LOG_LEVEL": "WARNING", "CELERY_TASK_ALWAYS_EAGER": "true"})
    return env


def setup_django(env: dict) -> None:
    os.environ.update(env)
    import django

    django.setup()


def _postgres_admin(url: str) -> tuple[str, str]:
    """(the bench database's name, a URL of the server's `postgres` database)."""
    parts = urllib.parse.urlsplit(url)
    name = parts.path.lstrip("/")
    if not name.replace("_", "").isalnum() or "bench" not in name:
        # it is dropped: never a database that is not obviously the bench's own
        raise SystemExit(f"refusing to drop and recreate {name!r}: the bench database's name must contain 'bench'")
    return name, urllib.parse.urlunsplit(parts._replace(path="/postgres"))


def recreate_postgres(url: str) -> None:
    import psycopg

    name, admin = _postgres_admin(url)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_postgres(url: str) -> None:
    import psycopg

    name, admin = _postgres_admin(url)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# --- Filling the database ---------------------------------------------------------------------------

def make_results(n_items: int, n_runs: int) -> tuple[list[int], list[tuple[int, str]]]:
    from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion
    from evaluation.models import EvaluationRun

    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="bench-export")
    BenchmarkItem.objects.bulk_create(
        [BenchmarkItem(version=version, external_id=f"real-{n:05d}", payload={"n": n}) for n in range(n_items)])
    items = list(version.items.order_by("pk").values_list("pk", "external_id"))
    runs = [EvaluationRun.objects.create(
        version=version, model_id=f"org/vlm-{n}", model_revision="main", resolved_revision=f"{n:040x}",
        backend="transformers", prompting=("standard", "cot")[n % 2], seed=n,
        generation_params={"max_new_tokens": 128, "temperature": 0.0},
        status=EvaluationRun.Status.SUCCEEDED).pk for n in range(n_runs)]
    return runs, items


def prediction_rows(count: int, runs: list[int], items: list[tuple[int, str]], adapt_datetime):
    """Rows for the prediction table in `columns()` order, each shaped like a real prediction."""
    rng = random.Random(0)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    per_run = -(-count // len(runs))
    for n in range(count):
        run, m = runs[n // per_run], n % per_run  # within a run: every item, both variants, then the next sample
        item_pk, external_id = items[m % len(items)]
        variant = ("original", "counterfactual")[m // len(items) % 2]
        sample = m // (2 * len(items))
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 60)))
        answer = rng.choice(("A", "B", "C", "D", "two", "yes", "no"))
        prompt = [{"role": "system", "content": "Answer the question about the image."},
                  {"role": "user", "content": [
                      {"type": "image", "sha256": f"{item_pk:064x}", "width": 640, "height": 480},
                      {"type": "text", "text": f"If the cup were removed, how many objects would be on the table? "
                                               f"({external_id}, {variant})"}]}]
        unparsed = n % 17 == 0
        yield (run, f"{external_id}:{variant}", sample, item_pk, variant, json.dumps(prompt),
               json.dumps({"images": [f"{item_pk:064x}"], "order": [0], "policy": {"name": "as-is", "version": 1}}),
               json.dumps({"max_new_tokens": 128, "temperature": 0.0, "do_sample": False, "seed": 0}),
               f"{words}. Final answer: {answer}", None if unparsed else json.dumps({"answer": answer}),
               "unparsed" if unparsed else "ok",
               json.dumps({"authors": {"value": None, "status": "unparsed"} if unparsed else {"value": answer,
                                                                                             "status": "ok"}}),
               round(rng.uniform(0.05, 2.5), 4), rng.randint(300, 900),
               rng.randint(5, 120), n % 5 == 0, "", adapt_datetime(start + timedelta(milliseconds=n)))


def columns() -> list[str]:
    from evaluation.models import Prediction

    names = ["run", "request_id", "sample_index", "item", "variant", "prompt", "inputs", "params", "raw_output",
             "parsed_answer", "parse_status", "parses", "latency_s", "prompt_tokens", "completion_tokens", "from_cache",
             "error", "created_at"]
    return [Prediction._meta.get_field(name).column for name in names]


def insert_predictions(count: int, runs, items) -> float:
    from itertools import islice

    from django.db import connection, transaction

    from evaluation.models import Prediction

    table, cols = Prediction._meta.db_table, columns()
    rows = prediction_rows(count, runs, items, connection.ops.adapt_datetimefield_value)
    started = time.monotonic()
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f'COPY "{table}" ({", ".join(cols)}) FROM STDIN') as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            sql = f'INSERT INTO "{table}" ({", ".join(cols)}) VALUES ({", ".join(["%s"] * len(cols))})'
            while batch := list(islice(rows, INSERT_BATCH)):
                cursor.executemany(sql, batch)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return time.monotonic() - started


# --- One export in its own process -----------------------------------------------------------------

def memory_kb() -> dict:
    """Resident memory of this process in kB: now, at its peak, and now without file-backed pages."""
    status = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon"):
                status[key] = int(value.split()[0])
    except OSError:
        pass
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"rss": status.get("VmRSS", maxrss), "peak": status.get("VmHWM", maxrss), "ru_maxrss": maxrss,
            "anon": status.get("RssAnon", 0)}


class AnonPeak:
    """Samples RssAnon every 20 ms in a thread: the peak of memory that is not a mapped file.

    VmHWM also counts pages of memory-mapped files that were read; the kernel can drop those at any
    time, unlike anonymous memory."""

    def __init__(self):
        self.peak = memory_kb()["anon"]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self):
        while not self.stop.wait(0.02):
            self.peak = max(self.peak, memory_kb()["anon"])

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.peak = max(self.peak, memory_kb()["anon"])


def child(fmt: str, work: Path, chunk_size: int, batch_rows: int) -> None:
    import django

    django.setup()
    from evaluation import exports
    from evaluation.models import EvaluationRun

    if fmt in ("parquet", "hf"):
        import pyarrow.parquet  # noqa: F401  (loaded before the baseline, like a worker that has exported before)
    if fmt == "hf":
        import datasets  # noqa: F401
    runs = list(EvaluationRun.objects.values_list("pk", flat=True))
    before = memory_kb()
    out = work / ("predictions" + (exports.FORMATS[fmt] or ".hf"))
    with AnonPeak() as anon:
        started = time.monotonic()
        export = exports.select("predictions", runs=runs, chunk_rows=chunk_size)
        written = exports.write(export, fmt, out, batch_rows=batch_rows)
        seconds = time.monotonic() - started
    after = memory_kb()
    print(json.dumps({"format": fmt, "rows": written.rows, "expected": export.total, "seconds": seconds,
                      "bytes": written.bytes, "baseline_kb": before["rss"], "peak_kb": after["peak"],
                      "ru_maxrss_kb": after["ru_maxrss"], "anon_peak_kb": anon.peak}))


def run_child(fmt: str, work: Path, env: dict, args) -> dict:
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", fmt, str(work), "--chunk-size", str(args.chunk_size),
         "--batch-rows", str(args.batch_rows)],
        env=env, cwd=ROOT, capture_output=True, text=True)
    if completed.returncode != 0:
        return {"format": fmt, "error": completed.stderr.strip().splitlines()[-1:] or [f"exit {completed.returncode}"]}
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.child:
        fmt, work = args.child
        child(fmt, Path(work), args.chunk_size, args.batch_rows)
        return 0
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    unknown = sorted(set(formats) - {"csv", "jsonl", "parquet", "hf"})
    if unknown:
        raise SystemExit(f"unknown formats: {', '.join(unknown)}")
    work = Path(tempfile.mkdtemp(prefix="bench-export-"))
    try:
        if args.database_url:
            recreate_postgres(args.database_url)
            database_url = args.database_url
        else:
            database_url = f"sqlite:///{work / 'bench.sqlite3'}"
        env = django_env(database_url, work)
        setup_django(env)
        from django.core.management import call_command
        from django.db import connection

        started = time.monotonic()
        call_command("migrate", verbosity=0)
        print(f"database: {connection.vendor} ({'temporary file' if not args.database_url else args.database_url}), "
              f"migrated in {time.monotonic() - started:.1f} s")
        runs, items = make_results(args.items, args.runs)
        seconds = insert_predictions(args.rows, runs, items)
        print(f"inserted {args.rows:,} predictions over {len(runs)} runs and {len(items)} items in {seconds:.1f} s")
        connection.close()

        results = [run_child(fmt, work, env, args) for fmt in formats]
        failed = missed = False
        print(f"\n{'format':<9}{'rows':>11}{'seconds':>9}{'rows/s':>10}{'peak RSS MB':>13}{'anon peak MB':>14}"
              f"{'before MB':>11}{'size MB':>10}")
        for result in results:
            if "error" in result:
                failed = True
                print(f"{result['format']:<9} failed: {' '.join(result['error'])}")
                continue
            if result["rows"] != args.rows or result["expected"] != args.rows:
                failed = True
            print(f"{result['format']:<9}{result['rows']:>11,}{result['seconds']:>9.1f}"
                  f"{result['rows'] / max(result['seconds'], 1e-9):>10,.0f}{result['peak_kb'] / 1024:>13.0f}"
                  f"{result['anon_peak_kb'] / 1024:>14.0f}{result['baseline_kb'] / 1024:>11.0f}"
                  f"{result['bytes'] / 1e6:>10.1f}")
            if result["format"] == "jsonl":
                missed = result["seconds"] > TARGET_SECONDS or result["peak_kb"] / 1024 > TARGET_RSS_MB
        print(f"\ntargets for jsonl: <= {TARGET_SECONDS:.0f} s, <= {TARGET_RSS_MB:.0f} MB peak RSS"
              + (" (missed)" if missed else "" if "jsonl" in formats else " (jsonl not run)"))
        if failed:
            return 1
        return 2 if missed and args.strict else 0
    finally:
        if args.keep:
            print(f"kept {work}" + (f" and {args.database_url}" if args.database_url else ""))
        else:
            shutil.rmtree(work, ignore_errors=True)
            if args.database_url:
                drop_postgres(args.database_url)


if __name__ == "__main__":
    sys.exit(main())
