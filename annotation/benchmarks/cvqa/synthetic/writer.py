"""Writing a synthetic set as a C-VQA release folder: `<out>/C-VQA-Synthetic/` holding
`C-VQA-Synthetic_questions.csv` (the release's columns and wording), the pictures beside it and
`scenes.jsonl` (one scene per picture, in CSV order).

The folder is assembled under a temporary name inside `<out>` and renamed when complete, so a
failure leaves nothing behind; an existing `<out>/C-VQA-Synthetic` is never overwritten. The same
(per_template, seed) writes the same bytes.
"""

from __future__ import annotations

import csv
import json
import shutil
import tempfile
from pathlib import Path

from annotation.benchmarks.cvqa.exporter import RELEASE_COLUMNS
from annotation.benchmarks.cvqa.importer import FILES
from annotation.benchmarks.cvqa.synthetic.items import generate
from annotation.benchmarks.cvqa.synthetic.render import render

FOLDER = "C-VQA-Synthetic"
SCENES = "scenes.jsonl"
MAX_ITEMS = 999_999  # pictures are numbered with six digits


class SyntheticSetError(ValueError):
    """A request the generator refuses (bad count, an output folder already there)."""


def write_synthetic_set(out: Path, per_template: int, seed: int) -> Path:
    """Write the set; the folder written."""
    if per_template < 1 or 6 * per_template > MAX_ITEMS:
        raise SyntheticSetError(f"--per-template must be between 1 and {MAX_ITEMS // 6} (got {per_template}).")
    if out.exists() and not out.is_dir():
        raise SyntheticSetError(f"{out} exists and is not a folder.")
    target = out / FOLDER
    if target.exists():
        raise SyntheticSetError(f"{target} already exists; remove it or choose another --out.")
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{FOLDER}-", dir=out))
    try:
        _write(staging, per_template, seed)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _write(folder: Path, per_template: int, seed: int) -> None:
    with (folder / FILES["synthetic"]).open("w", encoding="utf-8", newline="") as questions, \
            (folder / SCENES).open("w", encoding="utf-8", newline="\n") as scenes:
        rows = csv.DictWriter(questions, fieldnames=RELEASE_COLUMNS, lineterminator="\n")
        rows.writeheader()
        for item in generate(per_template, seed):
            (folder / item.scene["img_path"]).write_bytes(render(item.scene))
            rows.writerow(item.row)
            scenes.write(json.dumps(item.scene, ensure_ascii=False) + "\n")
