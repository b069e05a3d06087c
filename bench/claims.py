"""Load test of the crowd work loop over HTTP: claim -> draft -> submit, N workers at once.

    .venv/bin/python bench/claims.py                        # both modes, 50 workers, 20 s each
    .venv/bin/python bench/claims.py --mode closed --workers 50 --duration 20
    .venv/bin/python bench/claims.py --mode paced --workers 50 --duration 20

It drops and recreates a PostgreSQL database (DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/bench_claims), migrates it, creates N annotator accounts with
their own API tokens and one open study per mode, serves config.wsgi with gunicorn on a free
port with production settings, drives the workers over HTTP (closed loop: no pause; paced: one
second between a worker's requests), prints throughput, latency per endpoint and errors, then
checks the invariants in the database. It exits 1 when a check fails (or with --strict when a
target is missed). See bench/README.md.
"""

import argparse
import asyncio
import json
import math
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/bench_claims"
ENDPOINTS = ("claim", "draft", "submit")
FORM = {"fields": [{"name": "label", "type": "single_choice", "label": "Is the statement true?",
                    "options": ["yes", "no", "unsure"]}]}
# closed loop needs >= 100 completed items/s, paced needs p95 < 100 ms on every endpoint
TARGET_CLOSED_ITEMS_PER_S = 100.0
TARGET_PACED_P95_MS = 100.0


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--mode", choices=["closed", "paced", "both"], default="both")
    p.add_argument("--workers", type=int, default=50, help="simulated crowd workers (one account and token each)")
    p.add_argument("--duration", type=float, default=20.0, help="measured seconds per mode")
    p.add_argument("--warmup", type=float, default=3.0,
                   help="seconds run before measuring (excluded from figures, included in the checks)")
    p.add_argument("--pace", type=float, default=1.0, help="paced mode: seconds a worker waits between requests")
    p.add_argument("--k", type=int, default=3, help="annotators per item")
    p.add_argument("--items", type=int, default=0,
                   help="items per study (0: enough that nobody runs out at 300 completions/s)")
    p.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE_URL),
                   help="PostgreSQL database to DROP and recreate (its name must contain 'bench'); "
                        "the platform's own DATABASE_URL is deliberately not read")
    p.add_argument("--gunicorn-workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=16, help="gunicorn threads per worker (gthread)")
    p.add_argument("--worker-class", default="gthread", help="gunicorn worker class")
    p.add_argument("--conn-max-age", type=int, default=60, help="DATABASE_CONN_MAX_AGE for the server")
    p.add_argument("--settings", default="config.settings", help="DJANGO_SETTINGS_MODULE (for experiments)")
    p.add_argument("--timeout", type=float, default=30.0, help="client timeout per request, seconds")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--strict", action="store_true", help="exit 2 when a performance target is missed")
    return p.parse_args(argv)


# --- Database and fixtures --------------------------------------------------------------------

def recreate_database(url: str) -> None:
    import psycopg

    parts = urllib.parse.urlsplit(url)
    name = parts.path.lstrip("/")
    if not name.replace("_", "").isalnum() or "bench" not in name:
        # it is dropped: never a database that is not obviously the bench's own
        raise SystemExit(f"refusing to drop and recreate {name!r}: the bench database's name must contain 'bench'")
    admin = urllib.parse.urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def server_env(args, var_dir: Path) -> dict:
    env = dict(os.environ)
    env.update({
        "DJANGO_SETTINGS_MODULE": args.settings,
        "DATABASE_URL": args.database_url,
        "DATABASE_CONN_MAX_AGE": str(args.conn_max_age),
        "DJANGO_DEBUG": "false",
        "DJANGO_SECRET_KEY": "bench-" + os.urandom(24).hex(),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "PLATFORM_VAR_DIR": str(var_dir),
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    })
    return env


def setup_django(env: dict) -> None:
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def create_workers(n: int) -> list[tuple[int, str]]:
    """N annotators with an API token each: [(user id, token key)]."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group
    from rest_framework.authtoken.models import Token

    from config.roles import ANNOTATOR

    user_model = get_user_model()
    password = make_password("bench-password")
    users = user_model.objects.bulk_create(
        [user_model(username=f"bench-worker-{i:04d}", password=password) for i in range(n)])
    Group.objects.get(name=ANNOTATOR).user_set.add(*users)
    tokens = Token.objects.bulk_create([Token(user=u, key=Token.generate_key()) for u in users])
    return [(t.user_id, t.key) for t in tokens]


def create_study(slug: str, k: int, n_items: int):
    from annotation.crowd.models import Study, StudyItem

    study = Study.objects.create(name=f"Bench {slug}", slug=slug, form_schema=FORM, state=Study.State.OPEN,
                                 annotators_per_item=k, lease_seconds=600)
    StudyItem.objects.bulk_create(
        [StudyItem(study=study, external_id=f"item-{i:06d}", payload={"statement": f"Statement number {i}."},
                   role=StudyItem.Role.REGULAR, open_slots=k) for i in range(n_items)],
        batch_size=2000)
    from django.db import connection

    with connection.cursor() as cursor:
        # a live database has statistics (autovacuum); without them the planner picks a nested-loop anti join
        cursor.execute("ANALYZE")
    return study


# --- Server -----------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(args, env: dict, port: int, log_path: Path) -> subprocess.Popen:
    gunicorn = Path(sys.executable).with_name("gunicorn")
    cmd = [str(gunicorn), "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
           "--workers", str(args.gunicorn_workers), "--worker-class", args.worker_class,
           "--threads", str(args.threads), "--keep-alive", "5", "--backlog", "2048", "--timeout", "120",
           "--log-level", "warning", "--chdir", str(ROOT)]
    if os.path.isdir("/dev/shm"):
        cmd += ["--worker-tmp-dir", "/dev/shm"]
    log = log_path.open("wb")
    return subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def wait_for_server(proc: subprocess.Popen, port: int, token: str, log_path: Path, timeout: float = 60) -> None:
    """Until every gunicorn worker has imported Django: a few authenticated requests answer 200."""
    async def probe():
        ok = 0
        while ok < 20:
            conn = Connection("127.0.0.1", port, token, timeout=5)
            try:
                status, _ = await conn.request("GET", "/api/auth/me/")
                ok = ok + 1 if status == 200 else 0
            except (TimeoutError, OSError, ConnectionError):
                ok = 0
                await asyncio.sleep(0.2)
            finally:
                conn.close()

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited with {proc.returncode}:\n{log_path.read_text()[-4000:]}")
        try:
            asyncio.run(asyncio.wait_for(probe(), timeout=10))
            return
        except TimeoutError:
            continue
    raise SystemExit(f"gunicorn did not answer within {timeout:.0f} s:\n{log_path.read_text()[-4000:]}")


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _process_stats():
    """(pid, parent pid, name, CPU seconds) of every process, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        yield int(entry), int(fields[1]), name, (int(fields[11]) + int(fields[12])) / tick


def process_cpu_seconds(root_pid: int) -> float:
    """CPU seconds (user + system) of a process and its direct children."""
    return sum(cpu for pid, ppid, _name, cpu in _process_stats() if root_pid in (pid, ppid))


def postgres_cpu_seconds() -> float:
    """CPU seconds of every PostgreSQL process on the machine (the bench's backends and any other)."""
    return sum(cpu for _pid, _ppid, name, cpu in _process_stats() if name == "postgres")


def machine_cpu() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


# --- HTTP client: one keep-alive connection per simulated worker, asyncio streams -------------

class Connection:
    def __init__(self, host: str, port: int, token: str, *, timeout: float):
        self.host, self.port, self.timeout = host, port, timeout
        self.head = f"Host: {host}:{port}\r\nAuthorization: Token {token}\r\nAccept: application/json\r\n"
        self.reader = self.writer = None
        self.reconnects = 0

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def request(self, method: str, path: str, body=None):
        payload = b"" if body is None else json.dumps(body).encode()
        head = f"{method} {path} HTTP/1.1\r\n{self.head}"
        if body is not None:
            head += "Content-Type: application/json\r\n"
        raw = (head + f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload
        for attempt in (1, 2):
            fresh = self.writer is None
            if fresh:
                self.reader, self.writer = await asyncio.wait_for(
                    asyncio.open_connection(self.host, self.port), self.timeout)
            try:
                self.writer.write(raw)
                return await asyncio.wait_for(self._response(), self.timeout)
            except (ConnectionError, asyncio.IncompleteReadError):
                # The server closed an idle keep-alive connection: reconnect once. Every request of
                # this loop is idempotent (claim returns the active claim, submit the first submission).
                self.close()
                if fresh or attempt == 2:
                    raise
                self.reconnects += 1
            except BaseException:
                self.close()
                raise
        raise AssertionError("unreachable")

    async def _response(self):
        line = await self.reader.readline()
        if not line:
            raise ConnectionResetError("connection closed")
        status = int(line.split(None, 2)[1])
        length, chunked, close = None, False, False
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding" and "chunked" in value:
                chunked = True
            elif name == "connection" and value == "close":
                close = True
        if chunked:
            data = b""
            while True:
                size = int((await self.reader.readline()).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readline()
                    break
                data += await self.reader.readexactly(size)
                await self.reader.readline()
        elif length is not None:
            data = await self.reader.readexactly(length)
        else:
            data = await self.reader.read()
            close = True
        if close:
            self.close()
        return status, data


class Recorder:
    def __init__(self):
        self.samples = defaultdict(list)   # endpoint -> [(t_end, seconds)] of answered requests
        self.statuses = defaultdict(Counter)  # endpoint -> status -> count
        self.failures = Counter()          # endpoint/exception -> count
        self.submitted = []                # t_end of each 201 submit
        self.ran_out = 0
        self.reconnects = 0
        self.examples = {}

    def add(self, endpoint, t_end, seconds, status, body=b""):
        self.samples[endpoint].append((t_end, seconds))
        self.statuses[endpoint][status] += 1
        if status >= 400 and (endpoint, status) not in self.examples:
            self.examples[(endpoint, status)] = body[:300].decode(errors="replace")


async def simulated_worker(index, token, port, slug, pace, stop, rec: Recorder, timeout):
    conn = Connection("127.0.0.1", port, token, timeout=timeout)
    rng = random.Random(index)
    loop = asyncio.get_running_loop()

    async def call(endpoint, method, path, body=None):
        start = loop.time()
        try:
            status, data = await conn.request(method, path, body)
        except (TimeoutError, OSError, ConnectionError, asyncio.IncompleteReadError, ValueError) as exc:
            rec.failures[f"{endpoint}: {type(exc).__name__}"] += 1
            return None, None
        end = loop.time()
        rec.add(endpoint, end, end - start, status, data)
        if endpoint == "submit" and status == 201:
            rec.submitted.append(end)
        if pace:
            await asyncio.sleep(pace)
        return status, data

    if pace:
        await asyncio.sleep(rng.uniform(0, pace))  # real workers do not start in lockstep
    try:
        while not stop.is_set():
            status, data = await call("claim", "POST", f"/api/studies/{slug}/claim/")
            if status not in (200, 201):
                await asyncio.sleep(0.05)
                continue
            claim = json.loads(data)
            if claim.get("claim", "") is None:
                rec.ran_out += 1
                return
            answer = {"label": rng.choice(["yes", "no", "unsure"])}
            await call("draft", "PUT", f"/api/claims/{claim['id']}/draft/",
                       {"data": answer, "active_seconds": 1.5})
            await call("submit", "POST", f"/api/claims/{claim['id']}/submit/", {"data": answer, "active_seconds": 1.0})
    finally:
        conn.close()
        rec.reconnects += conn.reconnects


async def drive(tokens, port, slug, *, pace, warmup, duration, timeout):
    rec = Recorder()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    tasks = [asyncio.create_task(simulated_worker(i, key, port, slug, pace, stop, rec, timeout))
             for i, (_uid, key) in enumerate(tokens)]
    t0 = loop.time()
    await asyncio.sleep(warmup)
    window_start = loop.time()
    await asyncio.sleep(duration)
    window_end = loop.time()
    stop.set()
    await asyncio.wait(tasks, timeout=timeout + pace * 3 + 5)
    for task in tasks:
        task.cancel()
    rec.window = (window_start, window_end)
    rec.t0 = t0
    return rec


# --- Figures and checks -----------------------------------------------------------------------

def percentile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def summarise(rec: Recorder, duration: float) -> dict:
    start, end = rec.window
    out = {"completed_items": sum(1 for t in rec.submitted if start <= t < end)}
    out["items_per_s"] = out["completed_items"] / duration
    out["endpoints"] = {}
    for endpoint in ENDPOINTS:
        values = sorted(s for t, s in rec.samples[endpoint] if start <= t < end)
        out["endpoints"][endpoint] = {
            "requests": len(values), "per_s": len(values) / duration,
            "p50_ms": percentile(values, 50) * 1000, "p95_ms": percentile(values, 95) * 1000,
            "p99_ms": percentile(values, 99) * 1000, "max_ms": (values[-1] * 1000) if values else float("nan"),
        }
    errors = {}
    for endpoint in ENDPOINTS:
        for status, count in rec.statuses[endpoint].items():
            if status >= 400:
                errors[f"{endpoint} HTTP {status}"] = count
    errors.update(rec.failures)
    out["errors"] = errors
    out["error_examples"] = {f"{e} {s}": body for (e, s), body in rec.examples.items()}
    out["ran_out"] = rec.ran_out
    out["reconnects"] = rec.reconnects
    out["client_submits_201"] = len(rec.submitted)
    return out


def check_database(study, client_submits: int, transport_errors: int) -> dict:
    """The invariants, read back from the database after the run."""
    from django.db.models import Count, F, Q

    from annotation.crowd.models import Claim, StudyItem, Submission

    k = study.annotators_per_item
    holds = Q(claims__status__in=Claim.HOLDS_SLOT)
    items = StudyItem.objects.filter(study=study).annotate(
        holding=Count("claims", filter=holds),
        subs=Count("claims__submission"),
    )
    over_k = items.filter(holding__gt=k).count()
    slot_mismatch = items.exclude(open_slots=k - F("holding")).count()
    completed_mismatch = items.exclude(completed_count=F("subs")).count()
    twice = (Claim.objects.filter(study=study).values("item_id", "worker_id").annotate(n=Count("id"))
             .filter(n__gt=1).count())
    two_active = (Claim.objects.filter(study=study, status=Claim.Status.ACTIVE).values("worker_id")
                  .annotate(n=Count("id")).filter(n__gt=1).count())
    finished = Claim.objects.filter(study=study, status__in=[Claim.Status.SUBMITTED, Claim.Status.APPROVED,
                                                             Claim.Status.REJECTED]).count()
    submissions = Submission.objects.filter(claim__study=study).count()
    orphan = Submission.objects.filter(claim__study=study).exclude(
        claim__status__in=[Claim.Status.SUBMITTED, Claim.Status.APPROVED, Claim.Status.REJECTED]).count()
    fully_done = items.filter(subs__gte=k).count()
    checks = {
        f"no item held by more than k={k} claims": over_k == 0,
        "open_slots == k - claims holding a slot, every item": slot_mismatch == 0,
        "no worker got an item twice": twice == 0,
        "at most one active claim per worker": two_active == 0,
        "submissions == completed claims (and none on an unfinished claim)": submissions == finished and orphan == 0,
        "completed_count == submissions, every item": completed_mismatch == 0,
    }
    if transport_errors == 0:
        checks["submissions in the database == 201 answers the clients saw"] = submissions == client_submits
    return {
        "checks": checks,
        "counts": {"claims": Claim.objects.filter(study=study).count(), "submissions": submissions,
                   "completed_claims": finished, "items_over_k": over_k, "slot_mismatches": slot_mismatch,
                   "duplicate_item_worker": twice, "items_with_k_submissions": fully_done,
                   "expert_sampled": Submission.objects.filter(claim__study=study, review_queue="expert_sample")
                   .count()},
    }


def print_report(mode, args, summary, db, cpu):
    pace_note = f", pace {args.pace:.1f} s" if mode == "paced" else ""
    print(f"\n=== {mode} loop: {args.workers} workers, {args.duration:.0f} s measured "
          f"(after {args.warmup:.0f} s warm-up){pace_note} ===")
    print(f"completed items/s: {summary['items_per_s']:.1f}  ({summary['completed_items']} submissions in window; "
          f"{db['counts']['items_with_k_submissions']} items reached k)")
    print(f"{'endpoint':<8} {'requests':>8} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for endpoint, e in summary["endpoints"].items():
        print(f"{endpoint:<8} {e['requests']:>8} {e['per_s']:>7.1f} {e['p50_ms']:>8.1f} {e['p95_ms']:>8.1f} "
              f"{e['p99_ms']:>8.1f} {e['max_ms']:>8.1f}")
    errors = summary["errors"]
    print("errors: " + (", ".join(f"{k}: {v}" for k, v in sorted(errors.items())) if errors else "none"))
    for key, body in summary["error_examples"].items():
        print(f"  e.g. {key}: {body}")
    if summary["ran_out"]:
        print(f"workers who ran out of items: {summary['ran_out']}")
    print(f"CPU during the window: machine {cpu['machine_busy_pct']:.0f}% of {os.cpu_count()} cores; "
          f"gunicorn {cpu['gunicorn_cores']:.2f} cores, PostgreSQL {cpu['postgres_cores']:.2f}, "
          f"load generator {cpu['loadgen_cores']:.2f}, other processes {cpu['other_cores']:.2f}")
    answered = sum(e["requests"] for e in summary["endpoints"].values())
    if answered and summary["completed_items"]:
        print(f"CPU per request: gunicorn {1000 * cpu['gunicorn_cores'] * args.duration / answered:.1f} ms, "
              f"PostgreSQL {1000 * cpu['postgres_cores'] * args.duration / answered:.1f} ms")
    print("database checks:")
    for name, ok in db["checks"].items():
        print(f"  [{'ok' if ok else 'FAIL'}] {name}")
    print("  counts: " + ", ".join(f"{k}={v}" for k, v in db["counts"].items()))


def run_mode(mode, args, tokens, port, server, n_items):
    study = create_study(f"bench-{mode}", args.k, n_items)
    pace = args.pace if mode == "paced" else 0.0

    async def measured():
        loop = asyncio.get_running_loop()
        marks = {}

        async def sample_cpu():
            await asyncio.sleep(args.warmup)
            marks["start"] = (loop.time(), machine_cpu(), process_cpu_seconds(server.pid), time.process_time(),
                              postgres_cpu_seconds())
            await asyncio.sleep(args.duration)
            marks["end"] = (loop.time(), machine_cpu(), process_cpu_seconds(server.pid), time.process_time(),
                            postgres_cpu_seconds())

        sampler = asyncio.create_task(sample_cpu())
        rec = await drive(tokens, port, study.slug, pace=pace, warmup=args.warmup, duration=args.duration,
                          timeout=args.timeout)
        await sampler
        return rec, marks

    rec, marks = asyncio.run(measured())
    (t1, (busy1, tot1), g1, l1, p1), (t2, (busy2, tot2), g2, l2, p2) = marks["start"], marks["end"]
    wall = t2 - t1
    machine_cores = (busy2 - busy1) / max(1, tot2 - tot1) * os.cpu_count()
    cpu = {"machine_busy_pct": 100 * (busy2 - busy1) / max(1, tot2 - tot1),
           "gunicorn_cores": (g2 - g1) / wall, "loadgen_cores": (l2 - l1) / wall, "postgres_cores": (p2 - p1) / wall}
    cpu["other_cores"] = max(0.0, machine_cores - cpu["gunicorn_cores"] - cpu["loadgen_cores"]
                             - cpu["postgres_cores"])
    summary = summarise(rec, args.duration)
    transport = sum(rec.failures.values())
    db = check_database(study, summary["client_submits_201"], transport)
    print_report(mode, args, summary, db, cpu)
    return {"mode": mode, "summary": summary, "database": db, "cpu": cpu}


def main(argv=None) -> int:
    args = parse_args(argv)
    modes = ["closed", "paced"] if args.mode == "both" else [args.mode]
    n_items = args.items or max(1000, math.ceil(300 * (args.duration + args.warmup) / args.k) + args.workers)
    var_dir = Path(tempfile.mkdtemp(prefix="bench-claims-"))
    (var_dir / "static").mkdir()
    env = server_env(args, var_dir)
    recreate_database(args.database_url)
    print(f"database {args.database_url} (dropped and recreated); {n_items} items per study, k={args.k}")
    setup_django(env)
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    tokens = create_workers(args.workers)
    port = free_port()
    log_path = var_dir / "gunicorn.log"
    print(f"gunicorn config.wsgi on 127.0.0.1:{port}: {args.gunicorn_workers} x {args.worker_class}, "
          f"{args.threads} threads, DATABASE_CONN_MAX_AGE={args.conn_max_age}, DEBUG off")
    from django.db import connections

    connections.close_all()
    server = start_server(args, env, port, log_path)
    results = []
    try:
        wait_for_server(server, port, tokens[0][1], log_path)
        for mode in modes:
            results.append(run_mode(mode, args, tokens, port, server, n_items))
            connections.close_all()
    finally:
        stop_server(server)
    log_tail = log_path.read_text(errors="replace").strip()
    if log_tail:
        print("\ngunicorn log (tail):\n" + log_tail[-3000:])
    failed = [f"{r['mode']}: {name}" for r in results for name, ok in r["database"]["checks"].items() if not ok]
    missed = []
    for r in results:
        if r["mode"] == "closed" and args.workers >= 50 and r["summary"]["items_per_s"] < TARGET_CLOSED_ITEMS_PER_S:
            missed.append(f"closed: {r['summary']['items_per_s']:.1f} items/s < {TARGET_CLOSED_ITEMS_PER_S:.0f}")
        if r["mode"] == "paced":
            worst = max(e["p95_ms"] for e in r["summary"]["endpoints"].values())
            if not worst < TARGET_PACED_P95_MS:
                missed.append(f"paced: p95 {worst:.1f} ms >= {TARGET_PACED_P95_MS:.0f} ms")
    if args.json:
        config = {k: v for k, v in vars(args).items() if k != "json"}
        Path(args.json).write_text(json.dumps({"config": config, "items": n_items, "results": results,
                                               "failed_checks": failed, "missed_targets": missed},
                                              indent=2, default=str))
    print()
    if missed:
        print("targets missed: " + "; ".join(missed))
    if failed:
        print("CORRECTNESS CHECK FAILED: " + "; ".join(failed))
        return 1
    print("all database checks passed")
    return 2 if (missed and args.strict) else 0


if __name__ == "__main__":
    sys.exit(main())
