"""NL-EYE release: `test_set.csv` and `images/<sample_id>/{premise,hypothesis1,hypothesis2}.png` (SPEC §3).

`test_set.csv` may sit anywhere under the imported folder; `images/` is read next to it (each image
as .png or another image extension of the same name). Required columns: `sample_id`, `premise`,
`hypothesis1`, `hypothesis2` (the three scene descriptions) and `label`; optional: `explanation`,
`reasoning_category`, `domain`, `time_direction`, `time_duration`. Common header spellings are
accepted (`ALIASES`: "Hypothesis 1", "gold_label", "category", …).

Validated human explanations (the judge's references beside the gold explanation, seeds/002 §4.3), when
the release carries them, in any of these forms (headers in any case, spaces or underscores):
- one column `human_explanations` (also `validated_human_explanations`, `human_references`,
  `human_explanation`) holding a JSON list of texts (`["…", "…"]`; in a JSON table also a plain list),
  or a single text that is not a JSON list;
- numbered columns `human_explanation_1`, `human_explanation_2`, … (also `human_explanation1`,
  `validated_human_explanation_1`), read in their number's order; empty cells are skipped.
The list column comes first, then the numbered ones; a text given twice is kept once. A list column
that starts with "[" but is not a JSON list of texts is a problem of its row.

Items: kind `triplet`, external id = `sample_id`, with the scene descriptions under `premise`,
`hypothesis1`, `hypothesis2`, `label` as 1 or 2 (the more plausible hypothesis; "2", "2.0",
"hypothesis2" and "h2" all read as 2), the optional columns the file has, as written, and
`human_explanations` (a list of texts) when a row has any. Images under roles `premise`,
`hypothesis1`, `hypothesis2`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from annotation.importers.base import ItemSpec, MediaRef, Problems, first_duplicate, source_record, text
from annotation.importers.files import FileIndex, find_one, normalise_header, read_table
from config import json_text
from generation.media_probe import IMAGE_EXTENSIONS

DATA_FILE = "test_set.csv"
ROLES = ("premise", "hypothesis1", "hypothesis2")
REQUIRED = ("sample_id", *ROLES, "label")
OPTIONAL = ("explanation", "reasoning_category", "domain", "time_direction", "time_duration")
ALIASES = {
    "sample_id": ("id", "sample", "sample_number", "triplet_id", "example_id"),
    "premise": ("premise_text", "premise_description", "premise_scene", "context"),
    "hypothesis1": ("hypothesis_1", "hyp1", "hyp_1", "hypothesis1_text", "first_hypothesis"),
    "hypothesis2": ("hypothesis_2", "hyp2", "hyp_2", "hypothesis2_text", "second_hypothesis"),
    "label": ("gold_label", "gold", "answer", "correct_hypothesis", "plausible_hypothesis", "more_plausible"),
    "explanation": ("gold_explanation", "rationale", "reason"),
    "reasoning_category": ("category", "reasoning", "reasoning_type"),
    "domain": ("topic",),
    "time_direction": ("temporal_direction", "direction"),
    "time_duration": ("temporal_duration", "duration"),
}
_LABEL = re.compile(r"^(?:h|hyp|hypothesis)?\s*_?\s*([12])(?:\.0+)?$")
HUMAN_EXPLANATIONS = "human_explanations"
HUMAN_LIST_COLUMNS = (HUMAN_EXPLANATIONS, "validated_human_explanations", "human_references", "human_explanation")
_HUMAN_NUMBERED = re.compile(r"^(?:validated_)?human_explanation_?(\d+)$")


def parse_label(value) -> int | None:
    """1 or 2 from '1', '2.0', 'hypothesis2', 'h1', …; None for anything else."""
    match = _LABEL.match(text(value).lower())
    return int(match.group(1)) if match else None


def human_explanations(record: dict) -> tuple[list[str], str]:
    """The validated human explanations of a row (see the module docstring) and a problem ("" if none)."""
    listed, numbered = [], []
    for column, value in record.items():
        name = normalise_header(str(column))
        numbered_match = _HUMAN_NUMBERED.match(name)
        if numbered_match:
            numbered.append((int(numbered_match.group(1)), text(value)))
        elif name in HUMAN_LIST_COLUMNS:
            found, problem = _listed(value)
            if problem:
                return [], f"'{column}' {problem}"
            listed.extend(found)
    texts = listed + [value for _, value in sorted(numbered, key=lambda pair: pair[0])]
    return list(dict.fromkeys(value for value in texts if value)), ""


def _listed(value) -> tuple[list[str], str]:
    if isinstance(value, list):
        items = value
    else:
        written = text(value)
        if not written.startswith("["):
            return ([written] if written else []), ""
        try:
            items = json_text.loads(written)
        except json.JSONDecodeError as exc:
            return [], f"is not a JSON list of texts ({exc.msg} at column {exc.colno})"
        if not isinstance(items, list):
            return [], "is not a JSON list of texts"
    if not all(isinstance(item, str) for item in items):
        return [], "must list texts only"
    return [item.strip() for item in items if item.strip()], ""


def read(root: Path, problems: Problems) -> list[ItemSpec]:
    path = find_one(root, DATA_FILE, problems)
    if path is None:
        if not problems:
            problems.add(str(root), f"no {DATA_FILE} found (an NL-EYE release has {DATA_FILE} and "
                                    "images/<sample_id>/premise.png, hypothesis1.png, hypothesis2.png)")
        return []
    table = read_table(path, root, problems, aliases=ALIASES, required=REQUIRED)
    if table is None:
        return []
    images_folder = path.parent / "images"
    images = FileIndex(images_folder) if images_folder.is_dir() else None
    specs = []
    seen: dict[str, str] = {}
    for row in table.rows:
        values = {name: text(row.fields[name]) for name in REQUIRED}
        errors = [f"empty '{table.name(name)}'" for name, value in values.items() if not value]
        label = parse_label(row.fields["label"])
        if values["label"] and label is None:
            errors.append(f"'{table.name('label')}' must be 1 or 2 (got {row.fields['label']!r})")
        humans, problem = human_explanations(row.record)
        if problem:
            errors.append(problem)
        sample_id = values["sample_id"]
        repeated = first_duplicate(seen, sample_id, row.where) if sample_id else None
        if repeated:
            errors.append(f"duplicate sample_id {sample_id!r} (first at {repeated})")
        for message in errors:
            problems.add(row.where, message)
        if errors:
            continue
        media = {role: _image(images, images_folder, sample_id, role, root) for role in ROLES}
        optional = {name: text(row.fields[name]) for name in OPTIONAL if name in row.fields}
        if humans:
            optional[HUMAN_EXPLANATIONS] = humans
        payload = {"kind": "triplet", **values, "label": label, **optional,
                   "source": source_record(table.file, row.record, root=root, media=media, columns=table.columns,
                                           **row.position)}
        specs.append(ItemSpec(external_id=sample_id, payload=payload, where=row.where, media=media))
    return specs


def _image(images: FileIndex | None, folder: Path, sample_id: str, role: str, root: Path) -> MediaRef:
    expected = (folder / sample_id / f"{role}.png").relative_to(root).as_posix()
    found = []
    if images is not None:
        found = [path for path in images.by_stem(role, IMAGE_EXTENSIONS)
                 if path.parent.relative_to(folder).as_posix().lower() == sample_id.lower()]
        found.sort(key=lambda path: (path.suffix.lower() != ".png", str(path)))
    return MediaRef(kind="image", path=found[0] if found else None, expected=expected)
