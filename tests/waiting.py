"""Waiting on another process (a Celery worker, a server) in tests: poll until a condition holds."""

import time


def poll(fetch, until, timeout: float = 30.0, interval: float = 0.02):
    """Call fetch() until until(value) holds; return the last value. AssertionError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    value = fetch()
    while not until(value):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting; last value: {value}")
        time.sleep(interval)
        value = fetch()
    return value
