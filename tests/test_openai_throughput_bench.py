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

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "openai_throughput.py"
# variant, concurrency, requests/s, p50 ms, p95 ms, connections, client and server CPU ms/req, errors[, pool]
NUMBER = r"\s+[\d.]+"
ROW = re.compile(rf"^(before|after|per-thread)\s+(\d+){NUMBER * 3}\s+(\d+){NUMBER * 2}\s+(\d+)\b", re.M)


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


@pytest.mark.parametrize("extra", [(), ("--tls", "--pool-cost", "--per-thread-pools")], ids=["http", "https-all"])
def test_bench_prints_its_figures(tmp_path, extra):
    if "--tls" in extra and not shutil.which("openssl"):
        pytest.skip("--tls needs the openssl command")
    stdout, figures = run_bench(tmp_path, *extra)

    rows = {(m.group(1), int(m.group(2))): (int(m.group(3)), int(m.group(4))) for m in ROW.finditer(stdout)}
    variants = ["before", "after"] + (["per-thread"] if "--per-thread-pools" in extra else [])
    assert set(rows) == {(variant, level) for variant in variants for level in (1, 4)}, stdout
    assert rows[("before", 1)] == (20, 0) and rows[("before", 4)] == (20, 0)  # (connections, errors)
    for pooled in variants[1:]:
        assert rows[(pooled, 1)] == (1, 0)
        assert 1 <= rows[(pooled, 4)][0] <= 4 and rows[(pooled, 4)][1] == 0
    assert "speed-up at 1 concurrent:" in stdout and "speed-up at 4 concurrent:" in stdout
    assert "before: the urllib backend at 2b441ff899fa (git history)" in stdout
    assert ("HTTPS" in stdout) == ("--tls" in extra)
    assert ("pool CPU ms/req" in stdout) == ("--pool-cost" in extra)

    assert figures["problems"] == []
    assert list(figures["figures"]) == variants
    for variant in variants:
        assert [r["level"] for r in figures["figures"][variant]] == [1, 4]
        for row in figures["figures"][variant]:
            assert row["requests"] == row["server_requests"] == 20
            assert row["errors"] == row["wrong_answers"] == 0
            assert row["requests_per_s"] > 0 and row["p95_ms"] >= row["p50_ms"] > 0
    if "--pool-cost" in extra:
        assert all(row["pool_calls_per_request"] >= 2 for row in figures["figures"]["after"])


def test_bench_refuses_bad_levels():
    done = subprocess.run([sys.executable, str(BENCH), "--levels", "one,two"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2 and "--levels takes whole numbers" in done.stderr
