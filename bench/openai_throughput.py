"""OpenAI-compatible backend throughput: one kept-alive connection per worker thread against one per request.

    .venv/bin/python bench/openai_throughput.py                     # 640 requests per batch, 1, 16, 64; HTTP, HTTPS
    .venv/bin/python bench/openai_throughput.py --tls               # HTTPS only (--transports http: HTTP only)
    .venv/bin/python bench/openai_throughput.py --requests 2000 --latency-ms 20 --levels 1,16,64,128

For each transport (HTTP, then HTTPS with a throwaway self-signed certificate made by the `openssl`
command and trusted through SSL_CERT_FILE in this process only, as a hosted API is reached) it
starts a stub OpenAI-compatible server in a subprocess (an asyncio HTTP/1.1 server on a free port
of 127.0.0.1, keep-alive, any number of concurrent connections) that answers every
POST /v1/chat/completions after a fixed delay (--latency-ms, a stand-in for a model server's work)
with `n` choices echoing the prompt, and counts the TCP connections it accepted. Then, in this
process, for each variant and each concurrency level it builds a backend with
`max_concurrency` = the level and sends it two batches of --requests text-only requests through
`generate` (so the backend's own worker threads keep `level` requests in flight): "cold", its
first, during which the after variant opens its connections, then "warm", its next, over the
connections the first one left open.

    before   the urllib implementation the backend had before the pooled client, read from the git
             history (`git show <--before-ref>:generation/backends/openai_chat.py`, loaded as a module
             of its own): a new connection for every request
    after    generation.backends.openai_chat.OpenAIChat as it is now: `level` worker threads, each with
             an httpx.Client of its own holding one kept-alive connection

The variants run the same requests with the same options (max_retries=0: a failure shows as an
error instead of being retried away). Only loopback traffic: proxies are bypassed for 127.0.0.1.

It prints per transport, variant, level and batch requests/s, p50/p95 latency (each request's
`latency_s`), the connections the server accepted, and the CPU milliseconds per request of the
client (this process, every thread) and of the stub server, then the after/before speed-up per
level (cold and warm) and whether the target (>= 2x at 64 concurrent) is met for each transport and
batch. Exit status 1 when a check fails (an error, an answer that does not match its request, the
server seeing another number of requests, the after backend opening more connections over its two
batches than its max_concurrency), 2 with --strict when the warm target is missed on a transport.
`--json FILE` writes every figure.
"""

import argparse
import asyncio
import json
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import types
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from generation.backends.base import ChatRequest, GenerationParams, Message, TextPart  # noqa: E402
from generation.backends.openai_chat import OpenAIChat  # noqa: E402

# The last commit whose backend used urllib (one connection per request).
BEFORE_REF = "2b441ff899facd1ae8704f2496b70d17321acdb7"
BACKEND_PATH = "generation/backends/openai_chat.py"
TRANSPORTS = ("http", "https")
# Each level runs two batches on one backend: "cold", its first (it opens its connections), then "warm".
BATCHES = ("cold", "warm")
TARGET_LEVEL = 64
TARGET_SPEEDUP = 2.0
PROMPT_TOKENS = 10
COMPLETION_TOKENS = 5


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--requests", type=int, default=640, help="requests per batch (two batches per variant and level)")
    p.add_argument("--levels", default="1,16,64", help="concurrency levels (max_concurrency), comma-separated")
    p.add_argument("--latency-ms", type=float, default=5.0, help="the stub server's delay before each answer")
    p.add_argument("--before-ref", default=BEFORE_REF, help="git commit whose urllib backend is 'before'")
    p.add_argument("--transports", default=",".join(TRANSPORTS),
                   help="http, https (a self-signed certificate made with openssl) or both, comma-separated")
    p.add_argument("--tls", action="store_true", help="HTTPS only (the same as --transports https)")
    p.add_argument("--json", type=Path, help="write every figure to this file")
    p.add_argument("--strict", action="store_true", help="exit 2 when the warm target is missed on a transport")
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the stub server's own process
    p.add_argument("--serve-cert", nargs=2, metavar=("CERT", "KEY"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        args.levels = [int(level) for level in str(args.levels).replace(" ", ",").split(",") if level]
    except ValueError:
        p.error(f"--levels takes whole numbers separated by commas, not {args.levels!r}")
    if not args.levels or min(args.levels) < 1:
        p.error("--levels needs at least one level, each at least 1")
    args.transports = ["https"] if args.tls else [
        t for t in dict.fromkeys(str(args.transports).lower().replace(" ", ",").split(",")) if t]
    unknown = [t for t in args.transports if t not in TRANSPORTS]
    if unknown or not args.transports:
        p.error(f"--transports takes http and/or https, not {', '.join(unknown) or 'nothing'}")
    if "https" in args.transports and not args.serve and not shutil.which("openssl"):
        p.error("HTTPS needs the openssl command to make a certificate; pass --transports http to skip it")
    if args.requests < 1:
        p.error("--requests must be at least 1")
    if args.latency_ms < 0:
        p.error("--latency-ms must not be negative")
    return args


# --- The stub server (its own process, so that its work does not share this process's GIL) --------

class StubServer:
    """A minimal HTTP/1.1 server: POST /v1/chat/completions answers, GET /stats its counters."""

    def __init__(self, latency_s: float, cert: tuple[str, str] | None = None):
        self.latency_s = latency_s
        self.cert = cert
        self.connections = 0  # connections that carried at least one chat request
        self.requests = 0
        self.open = 0
        self.max_open = 0

    def stats(self) -> dict:
        return {"connections": self.connections, "requests": self.requests, "max_open": self.max_open,
                "cpu_s": time.process_time()}

    def answer(self, body: bytes) -> dict:
        payload = json.loads(body or b"{}")
        prompt = ""
        for message in payload.get("messages") or []:
            for part in message.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "text":
                    prompt = part.get("text", "")
        n = int(payload.get("n") or 1)
        return {"id": f"chatcmpl-{self.requests}", "object": "chat.completion", "created": 0,
                "model": payload.get("model", ""),
                "choices": [{"index": i, "message": {"role": "assistant", "content": f"reply: {prompt}"},
                             "finish_reason": "stop"} for i in range(n)],
                "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS * n,
                          "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS * n}}

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        counted = False
        self.open += 1
        self.max_open = max(self.max_open, self.open)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return  # the client closed the connection (or sent garbage)
                lines = head.decode("latin-1").split("\r\n")
                method, target, version = (lines[0].split(" ", 2) + ["", ""])[:3]
                headers = {}
                for line in lines[1:]:
                    name, sep, value = line.partition(":")
                    if sep:
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                body = await reader.readexactly(length) if length else b""
                if method == "POST" and target.rstrip("/") == "/v1/chat/completions":
                    if not counted:
                        counted = True
                        self.connections += 1
                    self.requests += 1
                    if self.latency_s:
                        await asyncio.sleep(self.latency_s)
                    status, reply = "200 OK", self.answer(body)
                elif method == "GET" and target == "/stats":
                    status, reply = "200 OK", self.stats()
                else:
                    status, reply = "404 Not Found", {"error": {"message": f"no route {method} {target}"}}
                keep_alive = version.strip() == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
                data = json.dumps(reply).encode()
                writer.write(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                             f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n".encode() + data)
                await writer.drain()
                if not keep_alive:
                    return
        except ConnectionError:
            return
        finally:
            self.open -= 1
            writer.close()

    async def serve(self) -> None:
        context = None
        if self.cert:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*self.cert)
        server = await asyncio.start_server(self.handle, "127.0.0.1", 0, backlog=1024, ssl=context)
        print(server.sockets[0].getsockname()[1], flush=True)  # the port, for the parent
        async with server:
            await server.serve_forever()


def start_stub(latency_ms: float, cert: tuple[Path, Path] | None = None) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, __file__, "--serve", "--latency-ms", str(latency_ms)]
    if cert:
        command += ["--serve-cert", str(cert[0]), str(cert[1])]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline().strip()
    if not line.isdigit():
        process.kill()
        raise SystemExit(f"the stub server did not start (it printed {line!r})")
    return process, f"{'https' if cert else 'http'}://127.0.0.1:{line}"


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, trusted by this process (SSL_CERT_FILE) from now on."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                           "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                           "-keyout", str(key), "-out", str(cert)], capture_output=True, text=True, check=False)
    if made.returncode:
        raise SystemExit(f"--tls needs the openssl command to make a certificate: {made.stderr.strip()}")
    os.environ["SSL_CERT_FILE"] = str(cert)
    return cert, key


def stub_stats(root: str) -> dict:
    request = urllib.request.Request(f"{root}/stats", headers={"Connection": "close"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


# --- The client side -------------------------------------------------------------------------------

def before_backend(ref: str):
    """The backend class at `ref` (the urllib implementation), loaded as a module of its own."""
    shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{BACKEND_PATH}"],
                           capture_output=True, text=True, check=False)
    if shown.returncode:
        raise SystemExit(f"cannot read the previous backend from git ({ref}:{BACKEND_PATH}): "
                         f"{shown.stderr.strip() or 'git failed'}")
    if "urllib.request.urlopen" not in shown.stdout:
        raise SystemExit(f"{ref}:{BACKEND_PATH} is not the urllib implementation; pass --before-ref")
    module = types.ModuleType("openai_chat_before")
    module.__file__ = f"{ref[:12]}:{BACKEND_PATH}"
    sys.modules[module.__name__] = module
    exec(compile(shown.stdout, module.__file__, "exec"), module.__dict__)
    return module.OpenAIChat


def requests_for(count: int, tag: str) -> list[ChatRequest]:
    return [ChatRequest(messages=[Message("user", (TextPart(f"{tag} question {i}"),))],
                        params=GenerationParams(max_new_tokens=16), request_id=f"{tag}-{i}")
            for i in range(count)]


def run_batch(backend, root: str, level: int, count: int, tag: str, batch_name: str) -> dict:
    batch = requests_for(count, tag)
    before = stub_stats(root)
    cpu = time.process_time()
    started = time.perf_counter()
    results = backend.generate(batch)
    seconds = time.perf_counter() - started
    client_cpu = time.process_time() - cpu
    after = stub_stats(root)
    errors = [r.error for r in results if r.error]
    wrong = sum(1 for request, result in zip(batch, results, strict=True)
                if not result.error and result.texts != [f"reply: {request.messages[0].parts[0].text}"])
    latencies = sorted(r.latency_s for r in results)
    return {
        "level": level, "batch": batch_name, "requests": count, "errors": len(errors),
        "first_error": errors[0] if errors else "", "wrong_answers": wrong, "seconds": seconds,
        "requests_per_s": count / seconds, "p50_ms": 1000 * statistics.median(latencies),
        "p95_ms": 1000 * latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))],
        "connections": after["connections"] - before["connections"],
        "server_requests": after["requests"] - before["requests"],
        "client_cpu_ms_per_request": 1000 * client_cpu / count,
        "server_cpu_ms_per_request": 1000 * (after["cpu_s"] - before["cpu_s"]) / count,
    }


def run_level(backend_class, base_url: str, root: str, level: int, count: int, tag: str) -> list[dict]:
    """A new backend's first batch (cold: it opens its connections), then its next one (warm)."""
    backend = backend_class("bench-model", base_url=base_url, max_concurrency=level, max_retries=0, timeout=30.0)
    try:
        return [run_batch(backend, root, level, count, f"{tag}-{level}-{batch}", batch) for batch in BATCHES]
    finally:
        close = getattr(backend, "close", None)  # the urllib backend has nothing to close
        if close:
            close()


def bypass_proxies() -> None:
    for name in ("NO_PROXY", "no_proxy"):
        os.environ[name] = ",".join(filter(None, [os.environ.get(name, ""), "127.0.0.1"]))


def run_transport(transport: str, variants: dict, args) -> dict[str, list[dict]]:
    """Every variant at every level against a stub server of its own over `transport`: rows of both batches."""
    figures: dict[str, list[dict]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory(prefix="openai-bench-") as folder:
        cert = make_certificate(Path(folder)) if transport == "https" else None
        process, root = start_stub(args.latency_ms, cert)
        base_url = f"{root}/v1"
        try:
            for name, cls in variants.items():  # the first request of a process pays for imports
                run_level(cls, base_url, root, 1, 1, f"{name}-warmup")
            for level in args.levels:
                for name, cls in variants.items():
                    figures[name] += run_level(cls, base_url, root, level, args.requests, name)
        finally:
            process.kill()
            process.wait()
    return figures


def check(transport: str, figures: dict[str, list[dict]]) -> list[str]:
    problems = []
    for name, rows in figures.items():
        opened: dict[int, int] = {}
        for r in rows:
            where = f"{transport} {name} at {r['level']} ({r['batch']} batch)"
            if r["errors"]:
                problems.append(f"{where}: {r['errors']} errors, first: {r['first_error']}")
            if r["wrong_answers"]:
                problems.append(f"{where}: {r['wrong_answers']} answers do not match their requests")
            if r["server_requests"] != r["requests"]:
                problems.append(f"{where}: the server saw {r['server_requests']} requests")
            opened[r["level"]] = opened.get(r["level"], 0) + r["connections"]
        if name != "before":
            problems += [f"{transport} {name} at {level}: {count} connections for max_concurrency {level}"
                         for level, count in opened.items() if count > level]
    return problems


def speedups_of(figures: dict[str, list[dict]]) -> dict[str, dict[int, float]]:
    """after / before requests/s by batch and level."""
    out: dict[str, dict[int, float]] = {batch: {} for batch in BATCHES}
    for before, after in zip(figures["before"], figures["after"], strict=True):
        out[after["batch"]][after["level"]] = after["requests_per_s"] / before["requests_per_s"]
    return out


def report(transport: str, figures: dict[str, list[dict]], speedups: dict[str, dict[int, float]], args) -> None:
    """Print the table, the speed-ups and the target of one transport."""
    scheme = transport.upper()
    certificate = " (self-signed certificate)" if transport == "https" else ""
    print(f"== {scheme}{certificate}: stub server on 127.0.0.1, {args.latency_ms:g} ms per answer, keep-alive, "
          "in its own process")
    print(f"{'variant':<8}{'concurrency':>12}{'batch':>6}{'requests/s':>12}{'p50 ms':>9}{'p95 ms':>9}"
          f"{'connections':>13}{'client CPU ms/req':>19}{'server CPU ms/req':>19}{'errors':>8}")
    for index in range(len(figures["before"])):
        for name, rows in figures.items():
            r = rows[index]
            print(f"{name:<8}{r['level']:>12}{r['batch']:>6}{r['requests_per_s']:>12.1f}{r['p50_ms']:>9.1f}"
                  f"{r['p95_ms']:>9.1f}{r['connections']:>13}{r['client_cpu_ms_per_request']:>19.2f}"
                  f"{r['server_cpu_ms_per_request']:>19.2f}{r['errors']:>8}")
    for level in args.levels:
        print(f"{scheme} speed-up at {level} concurrent: {speedups['warm'][level]:.2f}x warm, "
              f"{speedups['cold'][level]:.2f}x cold (after / before requests/s)")
    if TARGET_LEVEL in args.levels:
        for batch in BATCHES:
            met = speedups[batch][TARGET_LEVEL] >= TARGET_SPEEDUP
            print(f"{scheme} target: >= {TARGET_SPEEDUP:g}x at {TARGET_LEVEL} concurrent, {batch}: "
                  f"{'met' if met else 'missed'}")
    print()


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.serve:
        asyncio.run(StubServer(args.latency_ms / 1000, tuple(args.serve_cert) if args.serve_cert else None).serve())
        return 0
    bypass_proxies()
    variants = {"before": before_backend(args.before_ref), "after": OpenAIChat}
    results = {transport: run_transport(transport, variants, args) for transport in args.transports}

    print(f"before: the urllib backend at {args.before_ref[:12]} (git history), a new connection per request")
    print("after:  generation.backends.openai_chat (httpx; one client and one kept-alive connection per worker thread)")
    print(f"{args.requests} text-only requests per generate() batch, a cold and a warm batch per variant and level, "
          "max_retries=0\n")
    problems: list[str] = []
    out = {}
    missed = False
    for transport, figures in results.items():
        speedups = speedups_of(figures)
        report(transport, figures, speedups, args)
        problems += check(transport, figures)
        met = {batch: speedups[batch][TARGET_LEVEL] >= TARGET_SPEEDUP if TARGET_LEVEL in args.levels else None
               for batch in BATCHES}
        missed = missed or met["warm"] is False
        out[transport] = {"figures": figures, "target_met": met,
                          "speedups": {batch: {str(k): v for k, v in by_level.items()}
                                       for batch, by_level in speedups.items()}}
    if args.json:
        args.json.write_text(json.dumps({"latency_ms": args.latency_ms, "requests": args.requests,
                                         "before_ref": args.before_ref, "target": {"level": TARGET_LEVEL,
                                                                                   "speedup": TARGET_SPEEDUP},
                                         "transports": out, "problems": problems}, indent=2))
    if problems:
        print("CHECK FAILED: " + "; ".join(problems))
        return 1
    return 2 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
