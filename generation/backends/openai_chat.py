"""A backend for any OpenAI-compatible chat-completions API.

One class talks to hosted models (GPT-4o; Gemini and Claude through their OpenAI-compatible
endpoints) and to local servers (vLLM, SGLang) alike: it POSTs to `{base_url}/chat/completions`.

- Images, and each frame of a video in order, are sent as JPEG base64 data URLs
  (`{"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,..."}}`).
- A batch runs on the backend's `max_concurrency` worker threads (`client_threads.ClientThreads`);
  results keep the batch order. Each worker thread has an `httpx.Client` of its own, made when the
  thread first needs it, holding one connection kept alive between requests and batches (the
  threads live as long as the backend; a connection idle for httpx's keep-alive expiry, 5 s, is
  dropped and opened again when needed): at most `max_concurrency` connections in all, a batch does
  not open a connection per request, and no pool of connections is shared, locked or walked
  between threads on each request. The clients are closed by `close()`, at the end of a `with`
  block, when the backend is garbage collected, or when `evaluation.runner.BackendPool` drops it;
  a closed backend refuses to generate (BackendError) rather than answer with errors, and the
  requests of a batch still waiting when it is closed fail with an error that says so.
- 408, 409, 429, 500, 502, 503, 504, timeouts and transport errors (connect, read, write,
  protocol, proxy: a kept-alive connection the server closed meanwhile is one) are retried with
  exponential backoff and jitter (a `Retry-After` header wins over the backoff); any other
  4xx is not retried. A request that still fails gives a `ChatResult` with `error` set: the HTTP
  status and its standard reason, or the kind of transport error, and the attempts made; never the
  server's response body nor the URL (they go to the log, the key redacted), so a stored error tells
  nothing about what answered. One failed request never raises, and never turns into an empty or
  made-up answer.
- `generate(requests, stop=event)`: once the event is set no further attempt or call is made, and a
  wait before a retry (backoff or `Retry-After`) ends at once; the requests not yet answered fail
  with an error that says they were stopped. A cancelled run sets it (`evaluation.runner`).
- When `n > 1` and the server returns fewer choices than asked (several providers ignore `n`),
  further calls ask for the rest until `n` texts are collected. A follow-up call uses
  `seed + k` (k = 1, 2, ...), since a seeded provider would otherwise repeat the same sample.
  If a later call fails for good, the result is an error (the texts collected so far are dropped,
  and the message says how many there were): a result never has fewer than `n` texts silently.
- `latency_s` is the wall time of the whole request (all calls and retries); `prompt_tokens` and
  `completion_tokens` are the `usage` counts summed over its calls (None when the server sent none).

Who may set what: `OPTIONS` are the options people may pass; `ADMIN_OPTIONS` pick where requests go
and what is sent with them (the endpoint, the key's variable, extra payload fields such as another
`model`), so only an admin sets them, on the model's registry entry (`generation.model_registry`).

The API key is read from the environment variable named by `api_key_env` at construction; it is
sent only in the Authorization header, and never logged or put into an error message. Without
one (a local vLLM server needs none), no Authorization header is sent.

Proxies come from the environment as usual (HTTPS_PROXY for a hosted API; NO_PROXY for a local
server; read when a worker thread makes its client), and certificates are checked against the
system's trust store (or SSL_CERT_FILE / SSL_CERT_DIR), as Python's own `ssl` does. HTTP goes
through httpx, JPEG encoding through Pillow.
"""

from __future__ import annotations

import base64
import email.utils
import functools
import http
import io
import json
import logging
import os
import random
import ssl
import threading
import time
import weakref
from collections import OrderedDict
from datetime import UTC, datetime

import httpx

from generation.backends.base import BackendError, ChatRequest, ChatResult, ImagePart, TextPart, VideoPart
from generation.backends.client_threads import ClientThreads, ClientThreadsClosed

logger = logging.getLogger(__name__)

OPTIONS = ("timeout", "max_concurrency", "max_retries", "backoff_base", "backoff_cap", "max_retry_after",
           "max_tokens_field", "jpeg_quality")
ADMIN_OPTIONS = ("base_url", "api_key_env", "extra_body")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
BODY_EXCERPT_CHARS = 500


class _RequestFailed(Exception):
    """One call that failed for good (after retries, or at once for a non-retryable status)."""


class _Retryable(Exception):
    """One attempt that failed in a way worth retrying."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a `Retry-After` header: delay-seconds or an HTTP date; None if absent/invalid."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


def _excerpt(text: str, limit: int = BODY_EXCERPT_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def status_text(status: int) -> str:
    """"HTTP 503 Service Unavailable": the status and its standard reason phrase, nothing the server wrote."""
    try:
        return f"HTTP {status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


class OpenAIChat:
    """Chat completions over HTTP. See the module docstring for behaviour.

    Options:
        base_url: API root, e.g. "http://localhost:8000/v1" (default: $OPENAI_BASE_URL, else OpenAI's).
        api_key_env: name of the environment variable holding the API key (default "OPENAI_API_KEY").
        timeout: seconds per HTTP call (connect, each write and each read).
        max_concurrency: worker threads over a batch, each with one kept-alive connection (so the most open).
        max_retries: retries after the first attempt of a call (so at most max_retries + 1 attempts).
        backoff_base, backoff_cap: the k-th retry waits about min(cap, base * 2**k) seconds, jittered
            to between half and all of it.
        max_retry_after: upper bound in seconds on a server's `Retry-After`.
        extra_body: a dict merged into every request payload (provider-specific fields; it overrides
            the standard ones on a clash).
        max_tokens_field: payload key for max_new_tokens ("max_tokens"; newer OpenAI reasoning models
            want "max_completion_tokens").
        jpeg_quality: JPEG quality of images and frames sent.
    """

    name = "openai"
    accepts_stop = True  # `generate` takes a stop event (`registry.generate`)

    def __init__(
        self,
        model_id: str,
        revision: str = "",
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_concurrency: int = 4,
        max_retries: int = 5,
        backoff_base: float = 1.0,
        backoff_cap: float = 60.0,
        max_retry_after: float = 300.0,
        extra_body: dict | None = None,
        max_tokens_field: str = "max_tokens",
        jpeg_quality: int = 90,
    ):
        if not model_id:
            raise BackendError("openai: a model name (model_id) is required")
        if max_concurrency < 1:
            raise BackendError("openai: max_concurrency must be at least 1")
        if max_retries < 0:
            raise BackendError("openai: max_retries must not be negative")
        if timeout <= 0:
            raise BackendError("openai: timeout must be positive")
        if max_tokens_field not in MAX_TOKENS_FIELDS:
            raise BackendError(f"openai: max_tokens_field is one of {', '.join(MAX_TOKENS_FIELDS)}")
        self.model_id = model_id
        self.revision = revision or ""
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        try:
            self._url = httpx.URL(self.url)  # parsed once, not on every request
        except httpx.InvalidURL as exc:
            raise BackendError(f"openai: base_url {self.base_url!r} is not a valid URL: {exc}") from None
        if self._url.scheme not in ("http", "https") or not self._url.host:
            raise BackendError(f"openai: base_url {self.base_url!r} must be an http:// or https:// URL with a host")
        self.api_key_env = api_key_env
        self._api_key = (os.environ.get(api_key_env, "") if api_key_env else "").strip()
        if self._api_key and not (self._api_key.isascii() and self._api_key.isprintable()):
            raise BackendError(f"openai: the API key in ${api_key_env} has characters an HTTP header cannot carry")
        self.timeout = float(timeout)
        self.max_concurrency = int(max_concurrency)
        self.max_retries = int(max_retries)
        self.backoff_base = float(backoff_base)
        self.backoff_cap = float(backoff_cap)
        self.max_retry_after = float(max_retry_after)
        self.extra_body = dict(extra_body or {})
        self.max_tokens_field = max_tokens_field
        self.jpeg_quality = int(jpeg_quality)
        self._image_cache: OrderedDict[tuple, str] = OrderedDict()
        self._image_cache_size = 256
        self._cache_lock = threading.Lock()
        # One client per worker thread, each with a single kept-alive connection. The factory refers
        # to nothing of the backend's, so that the threads do not keep it from being garbage collected.
        make_client = functools.partial(
            httpx.Client,
            headers=self._headers(),
            # the system's CAs, not the bundle httpx ships (certifi); one context shared by every client
            verify=ssl.create_default_context(),
            # a client's only connection is its thread's: there is never a wait for the pool
            timeout=httpx.Timeout(self.timeout, pool=None),
            limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        )
        try:  # the environment's proxy settings are checked now rather than in the middle of a batch
            make_client().close()
        except (ValueError, ImportError, httpx.InvalidURL) as exc:
            raise BackendError(f"openai: cannot make an HTTP client with this environment's proxy settings: "
                               f"{type(exc).__name__}: {exc}") from None
        self._threads = ClientThreads(self.max_concurrency, make_client, name="openai-chat")
        # Closes the connections when the backend is garbage collected (or at exit) without close().
        self._finalizer = weakref.finalize(self, self._threads.close)

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIChat(model_id={self.model_id!r}, base_url={self.base_url!r})"

    # --- Lifetime -------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def close(self) -> None:
        """Close the kept-alive connections. Later `generate` calls raise BackendError."""
        self._finalizer()

    def __enter__(self) -> OpenAIChat:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # --- The Backend interface ------------------------------------------------------------------

    def generate(self, requests: list[ChatRequest], *, stop: threading.Event | None = None) -> list[ChatResult]:
        if self.closed:
            raise BackendError(f"openai backend ({self.model_id}) is closed; load a new one")
        if not requests:
            return []
        try:
            return self._threads.map(functools.partial(self._generate_one, stop=stop), requests)
        except ClientThreadsClosed:  # closed by another thread since the check above
            raise BackendError(f"openai backend ({self.model_id}) is closed; load a new one") from None

    def score_logprob(self, texts: list[str], *, prefix: str = "") -> list[float]:
        # Chat-completions APIs return log-probabilities only of tokens the model *generates*
        # (`logprobs`/`top_logprobs`), not of a given text; scoring a fixed text would need
        # prompt-logprob echo, which hosted providers do not offer (and vLLM only off the chat route).
        raise BackendError(
            f"openai backend ({self.model_id}) does not score log-probabilities: chat-completions APIs "
            "only report log-probabilities of generated tokens, not of a given text; use a local "
            "causal_lm or transformers backend for scoring"
        )

    # --- One request ----------------------------------------------------------------------------

    def _generate_one(self, request: ChatRequest, stop: threading.Event | None = None) -> ChatResult:
        started = time.monotonic()
        label = f" [{request.request_id}]" if request.request_id else ""
        try:
            messages = self._messages(request)
        except Exception as exc:  # a bad image must fail this request, not the batch
            return ChatResult(texts=[], latency_s=time.monotonic() - started,
                              error=f"openai{label}: could not encode the prompt: {type(exc).__name__}: {exc}")

        params = request.params
        wanted = max(1, int(params.n))
        texts: list[str] = []
        prompt_tokens: int | None = None
        completion_tokens: int | None = None
        call = 0
        error = ""
        # Each successful call adds at least one text, so `wanted` calls always suffice.
        while len(texts) < wanted and call < wanted:
            payload = {
                "model": self.model_id,
                "messages": messages,
                self.max_tokens_field: params.max_new_tokens,
                "temperature": params.temperature,
                "top_p": params.top_p,
                "n": wanted - len(texts),
                "seed": params.seed + call,
            }
            payload.update(self.extra_body)
            call += 1
            try:
                data = self._post(payload, label, stop)
            except _RequestFailed as exc:
                error = str(exc)
                break
            choices = data.get("choices") or []
            if not choices:
                logger.warning("openai%s: a response from %s had no choices: %s", label, self.url,
                               _excerpt(self._redact(json.dumps(data))))
                error = f"openai{label}: the response had no choices"
                break
            texts.extend(self._choice_text(c) for c in choices[: wanted - len(texts)])
            usage = data.get("usage") or {}
            if isinstance(usage.get("prompt_tokens"), int):
                prompt_tokens = (prompt_tokens or 0) + usage["prompt_tokens"]
            if isinstance(usage.get("completion_tokens"), int):
                completion_tokens = (completion_tokens or 0) + usage["completion_tokens"]

        if error and texts:
            error = f"{error} (after {len(texts)} of {wanted} texts)"
        return ChatResult(
            texts=texts if not error else [],
            latency_s=time.monotonic() - started,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            error=error,
        )

    @staticmethod
    def _choice_text(choice: dict) -> str:
        content = (choice.get("message") or {}).get("content")
        if content is None:
            return ""
        if isinstance(content, list):  # some servers answer with content parts
            return "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return str(content)

    # --- Payload --------------------------------------------------------------------------------

    def _messages(self, request: ChatRequest) -> list[dict]:
        out = []
        for message in request.messages:
            content = []
            for part in message.parts:
                if isinstance(part, TextPart):
                    content.append({"type": "text", "text": part.text})
                elif isinstance(part, ImagePart):
                    content.append(self._image_content(part.image, (part.fingerprint,)))
                elif isinstance(part, VideoPart):
                    for i, frame in enumerate(part.frames):
                        content.append(self._image_content(frame, (part.fingerprint, i)))
                else:
                    raise TypeError(f"unsupported message part {type(part).__name__}")
            out.append({"role": message.role, "content": content})
        return out

    def _image_content(self, image, key: tuple) -> dict:
        return {"type": "image_url", "image_url": {"url": self._data_url(image, key)}}

    def _data_url(self, image, key: tuple) -> str:
        cache_key = key if key and key[0] else None  # no fingerprint: no caching
        if cache_key is not None:
            with self._cache_lock:
                url = self._image_cache.get(cache_key)
                if url is not None:
                    self._image_cache.move_to_end(cache_key)
                    return url
        if image.mode != "RGB":
            image = image.convert("RGB")
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=self.jpeg_quality)
        url = "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
        if cache_key is not None:
            with self._cache_lock:
                self._image_cache[cache_key] = url
                while len(self._image_cache) > self._image_cache_size:
                    self._image_cache.popitem(last=False)
        return url

    # --- HTTP -----------------------------------------------------------------------------------

    def _headers(self) -> dict:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def _post(self, payload: dict, label: str, stop: threading.Event | None = None) -> dict:
        """POST with retries; the parsed JSON body, or _RequestFailed with a clear message. With `stop`
        set, no (further) attempt is made and a wait before a retry ends at once."""
        body = json.dumps(payload).encode("utf-8")
        attempts = self.max_retries + 1
        last = ""
        for attempt in range(1, attempts + 1):
            if stop is not None and stop.is_set():
                raise _RequestFailed(f"openai{label}: cancelled before attempt {attempt}"
                                     + (f"; the last one: {last}" if last else ""))
            try:
                return self._attempt(body)
            except _Retryable as exc:
                last = str(exc)
                if attempt == attempts:
                    break
                delay = self._delay(attempt, exc.retry_after)
                logger.warning("openai%s: %s calling %s; retry %d of %d in %.2fs",
                               label, last, self.url, attempt, self.max_retries, delay)
                if stop is None:
                    time.sleep(delay)
                elif stop.wait(delay):
                    raise _RequestFailed(f"openai{label}: cancelled while waiting to retry; "
                                         f"the last attempt: {last}") from None
            except _RequestFailed as exc:
                raise _RequestFailed(f"openai{label}: {exc} (not retried; attempt {attempt})") from None
        noun = "attempt" if attempts == 1 else "attempts"
        raise _RequestFailed(f"openai{label}: {last} (gave up after {attempts} {noun})")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        ceiling = min(self.backoff_cap, self.backoff_base * (2 ** (attempt - 1)))
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def _attempt(self, body: bytes) -> dict:
        try:
            response = self._threads.client().post(self._url, content=body)
        except httpx.TimeoutException as exc:
            raise _Retryable(self._transport_message("timed out", exc)) from None
        except httpx.UnsupportedProtocol as exc:
            raise _RequestFailed(self._transport_message("unsupported URL", exc)) from None
        except httpx.RequestError as exc:  # connect/read/write/protocol/proxy errors, a body that cannot be decoded
            if self._threads.closed:  # the connection was closed under the call
                raise _RequestFailed("the backend was closed during the call") from None
            raise _Retryable(self._transport_message("connection error", exc)) from None
        except RuntimeError:  # closed by another thread while this batch ran (ClientThreadsClosed is one)
            if self._threads.closed:
                raise _RequestFailed("the backend was closed during the call") from None
            raise
        status = response.status_code
        text = response.content.decode("utf-8", "replace")
        if not 200 <= status < 300:
            self._log_body(status, text)
            if status in RETRY_STATUSES:
                raise _Retryable(status_text(status), parse_retry_after(response.headers.get("Retry-After")))
            raise _RequestFailed(status_text(status))
        try:
            data = json.loads(text)
        except ValueError:
            # A proxy's HTML page or a cut-off body: worth another try.
            self._log_body(status, text)
            raise _Retryable(f"{status_text(status)} with a body that is not JSON") from None
        if not isinstance(data, dict):
            self._log_body(status, text)
            raise _Retryable(f"{status_text(status)} with JSON that is not an object")
        if data.get("error") and not data.get("choices"):
            self._log_body(status, text)
            raise _RequestFailed(f"{status_text(status)} with an error instead of choices")
        return data

    def _log_body(self, status: int, text: str) -> None:
        """The server's answer, for the people who run the platform (never stored with a result)."""
        logger.warning("openai: HTTP %d from %s: %s", status, self.url, _excerpt(self._redact(text)) or "(empty body)")

    def _transport_message(self, kind: str, exc: Exception) -> str:
        logger.warning("openai: %s calling %s: %s: %s", kind, self.url, type(exc).__name__, self._redact(str(exc)))
        return f"{kind} ({type(exc).__name__}, timeout {self.timeout:g}s)"
