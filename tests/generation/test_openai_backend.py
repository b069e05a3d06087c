"""The OpenAI-compatible chat backend against a real local HTTP server (no internet)."""

import base64
import email.utils
import gc
import io
import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from PIL import Image

from evaluation.runner import BackendPool, BackendSpec
from generation.backends.base import (
    BackendError,
    ChatRequest,
    ChatResult,
    GenerationParams,
    ImagePart,
    Message,
    TextPart,
    VideoPart,
)
from generation.backends.openai_chat import OpenAIChat, parse_retry_after
from generation.backends.registry import load_backend
from tests.openai_test_server import (
    COMPLETION_TOKENS_PER_CHOICE,
    PROMPT_TOKENS,
    Reply,
    last_user_text,
    openai_test_server,
)

FAST = {"backoff_base": 0.001, "backoff_cap": 0.01, "timeout": 5.0}


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    """The backend honours proxy variables; the local server must be reached directly."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                 "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server():
    with openai_test_server() as running:
        yield running


def backend(server, **options) -> OpenAIChat:
    return OpenAIChat("gpt-test", base_url=server.base_url, **{**FAST, **options})


def ask(text: str = "What is shown?", **params) -> ChatRequest:
    return ChatRequest(messages=[Message("user", (TextPart(text),))], params=GenerationParams(**params))


def wait_for(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def decode_data_url(url: str) -> Image.Image:
    prefix = "data:image/jpeg;base64,"
    assert url.startswith(prefix)
    image = Image.open(io.BytesIO(base64.b64decode(url[len(prefix):])))
    assert image.format == "JPEG"
    return image


# --- Payload --------------------------------------------------------------------------------------

def test_payload_messages_images_params_and_auth(server, monkeypatch):
    monkeypatch.setenv("VLB_TEST_KEY", "sk-test-123")
    image = Image.new("RGBA", (64, 48), (255, 0, 0, 255))
    frames = (Image.new("RGB", (32, 16), "blue"), Image.new("L", (20, 10)), Image.new("RGB", (8, 24)))
    request = ChatRequest(
        messages=[
            Message("system", (TextPart("Be brief."),)),
            Message("user", (TextPart("Look:"), ImagePart(image, "img-1"),
                             VideoPart(frames, "vid-1", frame_indices=(0, 5, 10)), TextPart("Which colour?"))),
        ],
        params=GenerationParams(max_new_tokens=77, temperature=0.7, top_p=0.9, n=2, seed=42),
    )
    chat = backend(server, api_key_env="VLB_TEST_KEY", extra_body={"top_k": 20})
    [result] = chat.generate([request])

    assert result.ok, result.error
    assert result.texts == ["reply 1.0: Which colour?", "reply 1.1: Which colour?"]
    assert server.calls == 1
    recorded = server.requests[0]
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["Authorization"] == "Bearer sk-test-123"
    assert recorded.headers["Content-Type"] == "application/json"
    body = recorded.body
    assert body["model"] == "gpt-test"
    assert {k: body[k] for k in ("max_tokens", "temperature", "top_p", "n", "seed")} == {
        "max_tokens": 77, "temperature": 0.7, "top_p": 0.9, "n": 2, "seed": 42}
    assert body["top_k"] == 20

    system, user = body["messages"]
    assert system == {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}
    assert user["role"] == "user"
    kinds = [part["type"] for part in user["content"]]
    assert kinds == ["text", "image_url", "image_url", "image_url", "image_url", "text"]
    assert user["content"][0] == {"type": "text", "text": "Look:"}
    sizes = [decode_data_url(part["image_url"]["url"]).size for part in user["content"] if part["type"] == "image_url"]
    assert sizes == [(64, 48), (32, 16), (20, 10), (8, 24)]  # the image, then the frames in order
    assert "sk-test-123" not in repr(chat)


def test_no_key_sends_no_authorization_and_base_url_from_env(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url + "/")
    chat = OpenAIChat("gpt-test", **FAST)
    assert chat.base_url == server.base_url
    assert chat.model_id == "gpt-test" and chat.revision == "" and chat.name == "openai"
    [result] = chat.generate([ask("hi")])
    assert result.texts == ["reply 1.0: hi"]
    assert "Authorization" not in server.requests[0].headers


def test_max_tokens_field_option(server):
    backend(server, max_tokens_field="max_completion_tokens").generate([ask(max_new_tokens=9)])
    body = server.bodies[0]
    assert body["max_completion_tokens"] == 9 and "max_tokens" not in body


def test_usage_recorded(server):
    [result] = backend(server).generate([ask()])
    assert result.prompt_tokens == PROMPT_TOKENS
    assert result.completion_tokens == COMPLETION_TOKENS_PER_CHOICE
    assert result.latency_s > 0


# --- Retries --------------------------------------------------------------------------------------

def test_429_retried_and_retry_after_honoured(server):
    server.script(Reply(status=429, retry_after="1"))
    started = time.monotonic()
    [result] = backend(server).generate([ask("again")])
    elapsed = time.monotonic() - started
    assert result.ok and result.error == ""
    assert result.texts == ["reply 2.0: again"]
    assert server.calls == 2
    assert elapsed >= 1.0  # the backoff alone would be milliseconds
    assert server.requests[1].at - server.requests[0].at >= 1.0


def test_500_and_503_then_success(server):
    server.script(Reply(status=500), Reply(status=503))
    [result] = backend(server).generate([ask()])
    assert result.ok
    assert server.calls == 3
    assert server.bodies[0] == server.bodies[2]  # the same request each time


def test_timeout_then_success(server):
    server.script(Reply(delay=1.0))
    started = time.monotonic()
    [result] = backend(server, timeout=0.3).generate([ask("slow")])
    assert result.ok, result.error
    assert result.texts == ["reply 2.0: slow"]
    assert server.calls == 2
    assert time.monotonic() - started < 1.0


def test_invalid_json_body_is_retried(server):
    server.script(Reply(body="<html>bad gateway</html>"))
    [result] = backend(server).generate([ask()])
    assert result.ok and server.calls == 2


def test_exhausted_retries_give_an_error_result(server, monkeypatch):
    monkeypatch.setenv("VLB_TEST_KEY", "sk-secret-xyz")
    server.script(*[Reply(status=503, body={"error": {"message": "model overloaded"}})] * 3)
    [result] = backend(server, max_retries=2, api_key_env="VLB_TEST_KEY").generate([ask()])
    assert isinstance(result, ChatResult)
    assert not result.ok and result.texts == []
    assert result.error == "openai: HTTP 503 Service Unavailable (gave up after 3 attempts)"
    assert "sk-secret-xyz" not in result.error
    assert server.calls == 3


def test_400_is_not_retried(server):
    server.script(Reply(status=400, body={"error": {"message": "unsupported parameter: seed"}}))
    [result] = backend(server).generate([ask()])
    assert server.calls == 1
    assert not result.ok and result.texts == []
    assert result.error == "openai: HTTP 400 Bad Request (not retried; attempt 1)"


@pytest.mark.parametrize("reply", [
    Reply(status=404, body="<html>nginx on 10.0.0.7: /internal/admin not found</html>"),
    Reply(status=500, body={"error": {"message": "postgres://app:hunter2@db/app refused"}}),
    Reply(status=200, body={"error": {"message": "quota of team internal-42 exceeded"}}),
    Reply(status=200, body={"id": "x", "object": "chat.completion", "internal_host": "10.0.0.7", "choices": []}),
])
def test_errors_hold_the_status_and_a_reason_never_the_response_body(server, reply):
    server.script(reply)
    [result] = backend(server, max_retries=0).generate([ask()])
    assert not result.ok and result.error.startswith("openai: ")
    for leaked in ("nginx", "10.0.0.7", "hunter2", "postgres", "internal", "quota", server.base_url, "127.0.0.1"):
        assert leaked not in result.error
    assert f"HTTP {reply.status}" in result.error or "no choices" in result.error


def test_transport_errors_name_their_kind_not_the_address():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    [result] = OpenAIChat("gpt-test", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, **FAST).generate([ask()])
    assert result.error == "openai: connection error (ConnectError, timeout 5s) (gave up after 1 attempt)"


def test_a_stop_event_ends_the_wait_for_a_retry_at_once(server):
    server.script(*[Reply(status=429, retry_after="60")] * 5)
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    started = time.monotonic()
    [result] = backend(server, max_retries=5).generate([ask()], stop=stop)
    assert time.monotonic() - started < 3  # not the 60 s the server asked to wait
    assert server.calls == 1
    assert result.texts == [] and "cancelled while waiting to retry" in result.error
    assert "HTTP 429 Too Many Requests" in result.error


def test_a_set_stop_event_sends_nothing(server):
    stop = threading.Event()
    stop.set()
    results = backend(server).generate([ask("a"), ask("b")], stop=stop)
    assert server.calls == 0
    assert all(r.texts == [] and "cancelled before attempt 1" in r.error for r in results)


def test_connection_refused_gives_an_error_result():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    chat = OpenAIChat("gpt-test", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, **FAST)
    [result] = chat.generate([ask()])
    assert not result.ok and "connection error" in result.error and "2 attempts" in result.error


def test_one_failure_does_not_fail_the_batch(server):
    server.script(Reply(status=401, body={"error": {"message": "bad key"}}))
    results = backend(server, max_concurrency=1).generate([ask("a"), ask("b")])
    assert "401" in results[0].error
    assert results[1].ok and results[1].texts == ["reply 2.0: b"]


# --- n, concurrency, registry ---------------------------------------------------------------------

def test_n_collected_over_several_calls_when_server_ignores_n(server):
    server.script(*[Reply(choices=1)] * 3)
    [result] = backend(server).generate([ask("sample", n=3, temperature=1.0, seed=7)])
    assert result.ok
    assert server.calls == 3
    assert result.texts == ["reply 1.0: sample", "reply 2.0: sample", "reply 3.0: sample"]
    assert [b["n"] for b in server.bodies] == [3, 2, 1]
    assert [b["seed"] for b in server.bodies] == [7, 8, 9]
    assert result.prompt_tokens == 3 * PROMPT_TOKENS
    assert result.completion_tokens == 3 * COMPLETION_TOKENS_PER_CHOICE


def test_batch_runs_concurrently_and_keeps_order(server):
    server.default_delay = 0.3
    requests = [ask(f"question {i}") for i in range(8)]
    started = time.monotonic()
    results = backend(server, max_concurrency=4).generate(requests)
    elapsed = time.monotonic() - started
    assert [r.ok for r in results] == [True] * 8
    assert [r.texts[0].split(": ", 1)[1] for r in results] == [f"question {i}" for i in range(8)]
    assert server.calls == 8
    assert 2 <= server.max_in_flight <= 4
    assert elapsed < 8 * 0.3  # not one after another


def test_through_the_registry(server):
    chat = load_backend("openai", "gpt-test", base_url=server.base_url, **FAST)
    assert isinstance(chat, OpenAIChat)
    assert (chat.name, chat.model_id, chat.revision) == ("openai", "gpt-test", "")
    assert load_backend("openai", "gpt-test", revision="2024-08-06", base_url=server.base_url).revision == "2024-08-06"
    [result] = chat.generate([ask("via registry")])
    assert result.texts == ["reply 1.0: via registry"]
    assert server.bodies[0]["model"] == "gpt-test"


def test_score_logprob_is_not_supported(server):
    with pytest.raises(BackendError, match="does not score log-probabilities"):
        backend(server).score_logprob(["a"])
    assert server.calls == 0


def test_parse_retry_after():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past


def test_a_failed_follow_up_call_fails_the_request(server):
    server.script(Reply(choices=1), Reply(status=400))
    [result] = backend(server).generate([ask(n=2, temperature=1.0)])
    assert server.calls == 2
    assert result.texts == [] and "400" in result.error and "after 1 of 2 texts" in result.error


# --- Pooled, kept-alive connections ---------------------------------------------------------------

def test_sequential_requests_reuse_one_connection(server):
    results = backend(server, max_concurrency=1).generate([ask(f"question {i}") for i in range(20)])
    assert [r.texts for r in results] == [[f"reply {i + 1}.0: question {i}"] for i in range(20)]
    assert server.calls == 20
    assert server.connections == 1


def test_worker_threads_keep_at_most_max_concurrency_connections_across_batches(server):
    server.default_delay = 0.05
    chat = backend(server, max_concurrency=4)
    for batch, size in enumerate((20, 20, 1, 7)):
        results = chat.generate([ask(f"batch {batch} question {i}") for i in range(size)])
        assert [r.texts[0].split(": ", 1)[1] for r in results] == [f"batch {batch} question {i}" for i in range(size)]
    assert server.calls == 48
    assert 2 <= server.max_in_flight <= 4
    # one connection per worker thread, kept alive across requests and across batches
    assert 2 <= server.connections <= 4
    assert server.open_connections == server.connections
    chat.close()
    assert wait_for(lambda: server.open_connections == 0)  # every thread's connection is closed


def test_retry_after_http_date_honoured_on_the_kept_alive_connection(server):
    later = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=2), usegmt=True)
    server.script(Reply(status=503, retry_after=later))
    [result] = backend(server).generate([ask("later")])
    assert result.ok and result.texts == ["reply 2.0: later"]
    assert server.calls == 2
    assert server.requests[1].at - server.requests[0].at >= 0.9  # the backoff alone would be milliseconds
    assert server.connections == 1


def test_a_connection_the_server_dropped_is_replaced(server):
    server.script(Reply(drop_connection=True))
    chat = backend(server, max_concurrency=1, max_retries=0)
    results = chat.generate([ask("first")])
    assert wait_for(lambda: server.open_connections == 0)
    results += chat.generate([ask("second")])
    assert [r.texts for r in results] == [["reply 1.0: first"], ["reply 2.0: second"]]
    assert server.connections == 2


def test_n_topped_up_over_pooled_connections(server):
    server.script(*[Reply(choices=1)] * 8)
    results = backend(server, max_concurrency=4).generate(
        [ask(f"sample {i}", n=2, temperature=1.0, seed=10 * i) for i in range(4)])
    assert server.calls == 8 and server.connections <= 4
    for i, result in enumerate(results):
        assert result.ok and len(result.texts) == 2
        assert all(text.endswith(f": sample {i}") for text in result.texts)
        assert result.completion_tokens == 2 * COMPLETION_TOKENS_PER_CHOICE
        calls = [b for b in server.bodies if last_user_text(b) == f"sample {i}"]
        assert [(b["n"], b["seed"]) for b in calls] == [(2, 10 * i), (1, 10 * i + 1)]


def test_a_closed_backend_is_not_reused(server):
    with backend(server) as chat:
        [result] = chat.generate([ask("open")])
        assert result.ok and not chat.closed
        assert server.open_connections == 1  # kept alive after the request
    assert chat.closed
    assert wait_for(lambda: server.open_connections == 0)
    with pytest.raises(BackendError, match="is closed"):
        chat.generate([ask("after close")])
    chat.close()  # closing twice is harmless
    assert server.calls == 1


def test_connections_closed_and_threads_ended_when_the_backend_is_garbage_collected(server):
    existing = set(threading.enumerate())
    chat = backend(server, max_concurrency=3)
    assert all(r.ok for r in chat.generate([ask(f"question {i}") for i in range(6)]))
    workers = [t for t in threading.enumerate() if t not in existing and t.name.startswith("openai-chat")]
    assert 1 <= len(workers) <= 3  # the worker threads outlive the batch: they hold the connections
    assert not wait_for(lambda: server.open_connections == 0, seconds=0.2)  # kept alive while the backend lives
    del chat
    gc.collect()
    assert wait_for(lambda: server.open_connections == 0)
    assert wait_for(lambda: not any(t.is_alive() for t in workers))


def test_backend_pool_closes_the_backends_it_drops(server):
    options = {"base_url": server.base_url, **FAST}
    pool = BackendPool(max_loaded=1)
    first = pool.get(BackendSpec.make("openai", "gpt-a", options=options))
    assert first.generate([ask()])[0].ok
    second = pool.get(BackendSpec.make("openai", "gpt-b", options=options))
    assert first.closed and not second.closed
    with pytest.raises(BackendError, match="is closed"):
        first.generate([ask()])
    pool.clear()
    assert second.closed
    assert wait_for(lambda: server.open_connections == 0)


def test_proxy_from_the_environment_and_no_proxy(server, monkeypatch):
    with openai_test_server() as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        [proxied] = backend(server, max_retries=0).generate([ask("via the proxy")])
        assert proxy.calls == 1 and server.calls == 0
        assert proxy.requests[0].path == f"{server.base_url}/chat/completions"  # a proxy's absolute-form target
        assert not proxied.ok and "404" in proxied.error
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        [direct] = backend(server).generate([ask("direct")])
        assert direct.ok and server.calls == 1 and proxy.calls == 1


def test_bad_base_url_and_api_key_are_refused(monkeypatch):
    with pytest.raises(BackendError, match="http:// or https://"):
        OpenAIChat("gpt-test", base_url="ftp://example.org/v1")
    with pytest.raises(BackendError, match="http:// or https://"):
        OpenAIChat("gpt-test", base_url="localhost:8000/v1")
    monkeypatch.setenv("VLB_TEST_KEY", "sk-bad\u00e9key")
    with pytest.raises(BackendError, match="VLB_TEST_KEY") as refused:
        OpenAIChat("gpt-test", base_url="http://127.0.0.1:9/v1", api_key_env="VLB_TEST_KEY")
    assert "sk-bad" not in str(refused.value)


@pytest.mark.parametrize("proxy, error", [("ftp://proxy.example:21", "ValueError"),
                                          ("http://[::1", "InvalidURL")])
def test_bad_proxy_settings_are_refused_when_the_backend_is_made(monkeypatch, proxy, error):
    monkeypatch.setenv("HTTPS_PROXY", proxy)
    with pytest.raises(BackendError, match=f"proxy settings: {error}"):
        OpenAIChat("gpt-test", base_url="https://api.example.org/v1")


def test_api_key_whitespace_is_stripped(server, monkeypatch):
    monkeypatch.setenv("VLB_TEST_KEY", "  sk-test-456\n")
    [result] = backend(server, api_key_env="VLB_TEST_KEY").generate([ask()])
    assert result.ok
    assert server.requests[0].headers["Authorization"] == "Bearer sk-test-456"


def test_closing_during_a_batch_fails_the_rest_of_it(server):
    server.default_delay = 0.3
    chat = backend(server, max_concurrency=1)
    closer = threading.Timer(0.1, chat.close)
    closer.start()
    results = chat.generate([ask(f"question {i}") for i in range(4)])
    closer.join()
    answered = 0  # answers can only come before the close (normally none: it lands in the first call)
    while answered < len(results) and results[answered].ok:
        assert results[answered].texts == [f"reply {answered + 1}.0: question {answered}"]
        answered += 1
    failed = results[answered:]
    assert len(failed) >= 2
    for result in failed:
        assert result.texts == [] and "the backend was closed" in result.error and "not retried" in result.error


def test_closing_during_a_concurrent_batch_fails_what_is_in_flight_and_queued(server):
    server.default_delay = 0.3
    chat = backend(server, max_concurrency=4)
    closer = threading.Timer(0.1, chat.close)
    closer.start()
    results = chat.generate([ask(f"question {i}") for i in range(12)])
    closer.join()
    assert server.calls <= 4  # the queued requests were never sent
    assert len(results) == 12
    for result in results:
        assert result.texts == [] and "the backend was closed" in result.error
    assert wait_for(lambda: server.open_connections == 0)
