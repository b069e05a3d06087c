"""A smoke run of bench/openai_throughput.py with tiny numbers: it runs, checks itself and prints its figures.
(No timing is asserted: the speed targets live in the benchmark, not in the tests.)"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "openai_throughput.py"
# variant, concurrency, batch, requests/s, p50 ms, p95 ms, connections, client and server CPU ms/req, errors
NUMBER = r"\s+[\d.]+"
ROW = re.compile(rf"^(before|after)\s+(\d+)\s+(cold|warm){NUMBER * 3}\s+(\d+){NUMBER * 2}\s+(\d+)\s*$", re.M)


def run_bench(tmp_path: Path, *extra: str) -> tuple[str, dict]:
    out = tmp_path / "figures.json"
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    done = subprocess.run(
        [sys.executable, str(BENCH), "--requests", "20", "--levels", "1,4", "--latency-ms", "1", "--json", str(out),
         *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, json.loads(out.read_text())


@pytest.fixture(autouse=True)
def _before_in_history():
    shown = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", "2b441ff899facd1ae8704f2496b70d17321acdb7"],
                           capture_output=True, check=False)
    if shown.returncode:
        pytest.skip("the urllib backend's commit is not in this checkout's history (a shallow clone?)")


def sections(stdout: str) -> dict[str, dict]:
    """Each transport's rows {(variant, level, batch): (connections, errors)}, by the transport's heading."""
    found = {}
    for part in re.split(r"^== ", stdout, flags=re.M)[1:]:
        transport = part.split(maxsplit=1)[0].rstrip(":").lower()
        found[transport] = {(m.group(1), int(m.group(2)), m.group(3)): (int(m.group(4)), int(m.group(5)))
                            for m in ROW.finditer(part)}
    return found


@pytest.mark.parametrize("extra, transports", [((), ["http", "https"]), (("--transports", "http"), ["http"]),
                                               (("--tls",), ["https"])], ids=["default-both", "http", "tls"])
def test_bench_prints_its_figures(tmp_path, extra, transports):
    if "https" in transports and not shutil.which("openssl"):
        pytest.skip("HTTPS needs the openssl command")
    stdout, figures = run_bench(tmp_path, *extra)

    found = sections(stdout)
    assert list(found) == transports, stdout
    for transport in transports:
        rows = found[transport]
        assert set(rows) == {(variant, level, batch) for variant in ("before", "after") for level in (1, 4)
                             for batch in ("cold", "warm")}, stdout
        for level in (1, 4):
            # (connections, errors): the urllib backend opens one per request, every batch
            assert rows[("before", level, "cold")] == rows[("before", level, "warm")] == (20, 0)
            assert f"{transport.upper()} speed-up at {level} concurrent:" in stdout
        # the pooled backend opens at most one connection per worker thread, over both batches: its one
        # thread's in the first batch at concurrency 1, and at 4 the next batch opens only what the first
        # batch's threads did not (when fewer than 4 threads sufficed for it)
        assert rows[("after", 1, "cold")] == (1, 0) and rows[("after", 1, "warm")] == (0, 0)
        cold, warm = rows[("after", 4, "cold")], rows[("after", 4, "warm")]
        assert cold[0] >= 1 and cold[0] + warm[0] <= 4 and cold[1] == warm[1] == 0
    assert "before: the urllib backend at 2b441ff899fa (git history)" in stdout
    assert "target:" not in stdout  # no level 64 was run

    assert figures["problems"] == []
    assert list(figures["transports"]) == transports
    for transport in transports:
        measured = figures["transports"][transport]
        assert measured["target_met"] == {"cold": None, "warm": None}
        assert {batch: list(levels) for batch, levels in measured["speedups"].items()} == {
            "cold": ["1", "4"], "warm": ["1", "4"]}
        assert list(measured["figures"]) == ["before", "after"]
        for variant in ("before", "after"):
            rows = measured["figures"][variant]
            assert [(r["level"], r["batch"]) for r in rows] == [(1, "cold"), (1, "warm"), (4, "cold"), (4, "warm")]
            for row in rows:
                assert row["requests"] == row["server_requests"] == 20
                assert row["errors"] == row["wrong_answers"] == 0
                assert row["requests_per_s"] > 0 and row["p95_ms"] >= row["p50_ms"] > 0


def test_bench_states_the_target_per_transport_and_batch(tmp_path):
    stdout, figures = run_bench(tmp_path, "--transports", "http", "--levels", "64", "--requests", "64")
    measured = figures["transports"]["http"]
    for batch in ("cold", "warm"):
        met = measured["target_met"][batch]
        assert met == (measured["speedups"][batch]["64"] >= 2)
        assert f"HTTP target: >= 2x at 64 concurrent, {batch}: {'met' if met else 'missed'}" in stdout
    cold, warm = measured["figures"]["after"]
    assert cold["connections"] >= 1 and cold["connections"] + warm["connections"] <= 64


@pytest.mark.parametrize("argv, message", [(["--levels", "one,two"], "--levels takes whole numbers"),
                                           (["--transports", "ftp"], "--transports takes http and/or https")])
def test_bench_refuses_bad_options(argv, message):
    done = subprocess.run([sys.executable, str(BENCH), *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2 and message in done.stderr
