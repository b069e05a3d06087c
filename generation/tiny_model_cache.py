"""A persistent cache of the tiny models (`generation.tiny_models`), shared by processes and sessions.

The models are built once into `<root>/<key>/`, where the key hashes what decides the bytes a build writes:
the builder code (`generation/tiny_models.py`) and the versions of the libraries that write the files. A new
key means a fresh folder, so a cached folder is never stale and two checkouts with different builders do not
share one. Processes that need the models at the same time (the test workers of `pytest -n`) take a file lock
for the build: the first builds what is missing, the others wait and then find it there.

The root is `$TINY_MODELS_DIR`, else `$XDG_CACHE_HOME/vlbench-platform/tiny-models` (`~/.cache/...`).
Folders of other keys unused for `STALE_AFTER_DAYS` are removed when the cache is used (only folders it made).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import time
from collections.abc import Iterable
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

from generation import tiny_models

# The libraries whose versions change what a build writes (configs, tokenizer files, weights).
LIBRARIES = ("torch", "transformers", "tokenizers", "diffusers", "safetensors", "huggingface-hub")
STALE_AFTER_DAYS = 30


def build_key() -> str:
    """A short hash of the builder code and the versions of the libraries it writes with."""
    digest = hashlib.sha256(Path(tiny_models.__file__).read_bytes())
    for library in LIBRARIES:
        try:
            version = metadata.version(library)
        except metadata.PackageNotFoundError:
            version = "-"
        digest.update(f"\n{library}=={version}".encode())
    return digest.hexdigest()[:16]


def default_root() -> Path:
    """`$TINY_MODELS_DIR` when set, else the user's cache folder."""
    configured = os.environ.get("TINY_MODELS_DIR", "").strip()
    if configured:
        return Path(configured).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(cache) / "vlbench-platform" / "tiny-models"


@contextmanager
def _locked(path: Path):
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _is_key_folder(folder: Path) -> bool:
    """A folder this cache made: named by a key, with its lock file beside it (nothing else in root is touched)."""
    return folder.is_dir() and re.fullmatch(r"[0-9a-f]{16}", folder.name) is not None and \
        (folder.parent / f"{folder.name}.lock").is_file()


def _prune(root: Path, keep: str) -> None:
    """Remove other keys' folders nobody used for STALE_AFTER_DAYS (their use touches them)."""
    cutoff = time.time() - STALE_AFTER_DAYS * 86400
    for folder in root.iterdir():
        if _is_key_folder(folder) and folder.name != keep and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            (root / f"{folder.name}.lock").unlink(missing_ok=True)


def cache_folder(root: str | Path | None = None) -> Path:
    """The folder of this build key under `root` (the default root when None); the models are its subfolders."""
    return (Path(root) if root is not None else default_root()) / build_key()


def cached_tiny_models(names: Iterable[str] | None = None, root: str | Path | None = None) -> dict[str, Path]:
    """The tiny models `names` (all by default) from the cache, built there first when missing: {name: folder}."""
    folder = cache_folder(root)
    root, key = folder.parent, folder.name
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / f"{key}.lock"):
        built = tiny_models.build_tiny_models(folder, names)
        os.utime(folder)
        _prune(root, keep=key)
    return built
