"""The media probes of the test set-up, remembered by the checksum of the bytes they read.

`tests.conftest.ingest_path` puts the same few sample files into a fresh library for test after test (the
`video` and `image` fixtures, many tests' own set-up). The upload check decodes the start and the end of a
video, its probe job reads the metadata and decodes a poster frame, an image is fully decoded for its
thumbnail: the same bytes give the same results, so each is computed once per test process. The library
rows, the stored files and the probe jobs are still made for every test, by the platform's own code; only
the decoding is skipped. Failures are not remembered, and a probe function a test replaced (monkeypatch) is
called as it is, since results are kept per function.
"""

import copy
import hashlib
import importlib
from contextlib import ExitStack, contextmanager
from functools import wraps
from unittest import mock

# (module, name) of the probe functions the ingest path and the probe jobs call
PROBES = (
    ("annotation.media", "check_video"),
    ("annotation.media", "check_image"),
    ("annotation.media_jobs", "probe_video"),
    ("annotation.media_jobs", "poster_jpeg"),
    ("annotation.media_jobs", "thumbnail_jpeg"),
)

_results: dict = {}


def checksum(source) -> str:
    """SHA-256 of a path's bytes, or of a file object's (read from the start; its position is put back)."""
    digest = hashlib.sha256()
    if hasattr(source, "read"):
        position = source.tell()
        source.seek(0)
        for chunk in iter(lambda: source.read(1 << 20), b""):
            digest.update(chunk)
        source.seek(position)
    else:
        with open(source, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def remembered(function):
    """`function(source, ...)` whose result is kept per (function, checksum of source, other arguments)."""

    @wraps(function)
    def cached(source, *args, **kwargs):
        key = (function, checksum(source), args, tuple(sorted(kwargs.items())))
        if key not in _results:
            _results[key] = function(source, *args, **kwargs)
        return copy.deepcopy(_results[key])

    return cached


@contextmanager
def cached_probes():
    """Within the block, the probe functions answer from (and fill) the cache."""
    with ExitStack() as stack:
        for module_name, name in PROBES:
            module = importlib.import_module(module_name)
            stack.enter_context(mock.patch.object(module, name, remembered(getattr(module, name))))
        yield
