"""Password guessing is throttled: every failed password check (the login page, the API token
endpoint, the admin's login) is counted per username and per client address, in Django's cache,
for `LOGIN_FAILURE_WINDOW_SECONDS`.

Once a username has `LOGIN_FAILURES_PER_USERNAME` failures, or an address
`LOGIN_FAILURES_PER_ADDRESS` (0 turns a limit off), further attempts fail until the window that
started with the first failure ends, even with the right password: the login page and the token
endpoint answer 429 with Retry-After, and `RefuseWhileThrottled` (the first authentication backend)
refuses every other password form. Successful logins are never counted, and one clears its
username's failures (not its address's: one good account must not reset a guesser's count). The
client address is REMOTE_ADDR, or the header named by `CLIENT_ADDRESS_HEADER` behind a proxy that
sets it (nginx's X-Real-IP in deploy/).

Failures are counted where Django reports them (the `user_login_failed` signal, connected in
`config.apps`). Counters live in the default cache: set `CACHE_URL` (Redis) so that every web
process shares them.
"""

import hashlib
import math
import time

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.core.exceptions import PermissionDenied

from config.client_address import client_address

PREFIX = "login-failures"
REFUSAL = "Too many failed sign-in attempts for this account or from this address."


def message(wait: int) -> str:
    return f"{REFUSAL} Try again in {wait} seconds."


def _counters(username: str, address: str) -> list[tuple[str, int]]:
    """(cache key, limit) of each counter a login attempt belongs to."""
    found = []
    for kind, value, limit in (("user", username.strip().lower(), settings.LOGIN_FAILURES_PER_USERNAME),
                               ("address", address, settings.LOGIN_FAILURES_PER_ADDRESS)):
        if limit > 0 and value:
            digest = hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()
            found.append((f"{PREFIX}:{kind}:{digest}", limit))
    return found


def retry_after(username: str, address: str) -> int:
    """Seconds until this username may try again from this address; 0 when it may now."""
    counters = _counters(username, address)
    keys = [key for key, _limit in counters]
    stored = cache.get_many(keys + [f"{key}:until" for key in keys])
    now = time.time()
    wait = 0
    for key, limit in counters:
        if stored.get(key, 0) >= limit:
            until = stored.get(f"{key}:until", now + settings.LOGIN_FAILURE_WINDOW_SECONDS)
            wait = max(wait, math.ceil(until - now), 1)
    return wait


def record_failure(username: str, address: str) -> None:
    window = settings.LOGIN_FAILURE_WINDOW_SECONDS
    for key, _limit in _counters(username, address):
        cache.add(f"{key}:until", time.time() + window, window)
        if cache.add(key, 1, window):
            continue
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr: a new window starts
            cache.set(key, 1, window)


def record_success(username: str) -> None:
    for key, _limit in _counters(username, ""):
        cache.delete_many([key, f"{key}:until"])


def count_failure(sender, credentials, request=None, **kwargs) -> None:
    """`user_login_failed` receiver: a failed password check of any login form counts."""
    if request is not None:
        record_failure(str(credentials.get("username") or ""), client_address(request))


class RefuseWhileThrottled(ModelBackend):
    """The first authentication backend: refuses a throttled username or address before any password
    is checked, and otherwise leaves authentication to the next backend (Django's ModelBackend). It
    inherits `get_user`, so that sessions made with it (the test client's `force_login`) work."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is not None and username and retry_after(str(username), client_address(request)):
            raise PermissionDenied(REFUSAL)
        return None
