"""A real local OpenAI-compatible HTTP server for backend tests.

    with openai_test_server() as server:
        server.script(Reply(status=429, retry_after="1"), Reply())   # then default successes
        backend = OpenAIChat("gpt-test", base_url=server.base_url)
        ...
        server.requests  # every request: path, headers, parsed JSON body
        server.connections, server.open_connections  # TCP connections accepted so far / open now

It listens on 127.0.0.1 on a free port (ThreadingHTTPServer in a thread, HTTP/1.1 with keep-alive:
one thread per connection, many requests per connection) and answers POST /v1/chat/completions.
Scripted replies are used first, in order; when none are left it answers with a default success:
`n` choices (or `Reply.choices`), each "reply <call>.<i>: <last user text>" (or
`server.responder(last user text)` when a test sets one), and usage counts prompt_tokens=10,
completion_tokens=5 per choice.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROMPT_TOKENS = 10
COMPLETION_TOKENS_PER_CHOICE = 5


@dataclass
class Reply:
    """One scripted reply. `body`: a dict (sent as JSON), a str (sent raw), or None for the default success."""

    status: int = 200
    body: dict | str | None = None
    delay: float = 0.0  # seconds to wait before answering (longer than the client timeout: a timeout)
    retry_after: str | None = None
    headers: dict = field(default_factory=dict)
    choices: int | None = None  # for the default success: how many choices (default: the request's n)
    drop_connection: bool = False  # close the connection after answering, without telling the client


@dataclass
class Recorded:
    path: str
    headers: dict
    body: dict | None
    raw: bytes
    at: float


def last_user_text(body: dict | None) -> str:
    for message in reversed((body or {}).get("messages") or []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text"]
        if texts:
            return texts[-1]
    return ""


class _QuietServer(ThreadingHTTPServer):
    def __init__(self, address, handler_class, on_close: Callable[[], None]):
        super().__init__(address, handler_class)
        self._on_close = on_close

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that hung up is no server error
            super().handle_error(request, client_address)

    def shutdown_request(self, request):
        try:
            super().shutdown_request(request)
        finally:
            self._on_close()  # counted once the socket is shut down, not when the handler returns


class OpenAITestServer:
    def __init__(self):
        self._lock = threading.Lock()
        self._replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = 0  # TCP connections accepted
        self.open_connections = 0  # TCP connections open now
        self.default_delay = 0.0  # a delay for every default success (to observe concurrency)
        # the content of every default success, from the last user text (a model the test writes)
        self.responder: Callable[[str], str] | None = None
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler_class(), self._connection_closed)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="openai-test-server", daemon=True
        )

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> int:
        return len(self.requests)

    @property
    def bodies(self) -> list[dict | None]:
        return [r.body for r in self.requests]

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def start(self) -> OpenAITestServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # --- Handling -------------------------------------------------------------------------------

    def _connection_closed(self) -> None:
        with self._lock:
            self.open_connections -= 1

    def _next(self) -> Reply | None:
        with self._lock:
            return self._replies.popleft() if self._replies else None

    def _record(self, path: str, headers, raw: bytes) -> tuple[int, dict | None]:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(Recorded(path, dict(headers.items()), body, raw, time.monotonic()))
            return len(self.requests), body

    def _success(self, call: int, body: dict | None, choices: int | None) -> dict:
        body = body or {}
        count = choices if choices is not None else int(body.get("n") or 1)
        prompt = last_user_text(body)
        return {
            "id": f"chatcmpl-test-{call}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [
                {"index": i, "message": {"role": "assistant", "content": (
                    self.responder(prompt) if self.responder else f"reply {call}.{i}: {prompt}")},
                 "finish_reason": "stop"}
                for i in range(count)
            ],
            "usage": {
                "prompt_tokens": PROMPT_TOKENS,
                "completion_tokens": COMPLETION_TOKENS_PER_CHOICE * count,
                "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS_PER_CHOICE * count,
            },
        }

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):  # quiet
                pass

            def setup(self):
                super().setup()
                with server._lock:
                    server.connections += 1
                    server.open_connections += 1

            def _send(self, status: int, payload, headers: dict) -> None:
                data = payload if isinstance(payload, bytes) else (
                    payload.encode() if isinstance(payload, str) else json.dumps(payload).encode())
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout test)
                    self.close_connection = True

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                call, body = server._record(self.path, self.headers, raw)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                    return
                reply = server._next() or Reply()
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    delay = reply.delay or (server.default_delay if reply.body is None and reply.status == 200 else 0)
                    if delay:
                        time.sleep(delay)
                finally:
                    with server._lock:
                        server.in_flight -= 1
                headers = dict(reply.headers)
                if reply.retry_after is not None:
                    headers["Retry-After"] = reply.retry_after
                if reply.body is not None:
                    payload = reply.body
                elif reply.status == 200:
                    payload = server._success(call, body, reply.choices)
                else:
                    payload = {"error": {"message": f"scripted status {reply.status}", "code": reply.status}}
                self._send(reply.status, payload, headers)
                if reply.drop_connection:
                    self.close_connection = True

        return Handler


@contextlib.contextmanager
def openai_test_server():
    """Start a server for the block and stop it after."""
    server = OpenAITestServer().start()
    try:
        yield server
    finally:
        server.stop()
