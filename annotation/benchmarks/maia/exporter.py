"""MAIA export: `data.json` (or `data_20%.json`) or the `gen` / `mc` row files, with the videos.

By default items go back to the layout they came from. Items imported from the JSON layout go back
into their video records (`source.parent`, the question lists rebuilt in their positions) in the
file they came from; items imported from rows go back to their gen file and their statement pairs
to their mc files, with the header as written. Curated items go to `dataset/data.json`, grouped by
video (in video number order), into `question_categories_A` or `_B` after their category's suffix,
with their videos at `dataset/videos/<n>.mp4`. Imported videos are copied to where the import found
them.

`export_benchmark maia --layout <layout>` writes every item in one layout, built from its fields:
- `data`: `dataset/data.json` as above (items imported from the JSON layout keep their record and
  video record), videos at `dataset/videos/<n>.mp4`;
- `gen`: `gen.csv` rows (`id, video_id, file_name, question_category, question, answer1` …
  `answer8`), videos at `videos/<n>.mp4` (`file_name` `<n>.mp4`); the statements are left out;
- `mc`: the same `gen.csv` and `mc.csv` with one row per statement pair (`id, video_id, file_name,
  question_category, pool_pos, answer1, answer2, target`), `pool_pos` the answer's position from 0,
  the true statement as answer1 or answer2 in a fixed order drawn from the question (so the A/B
  position tells nothing), `target` 1 or 2 naming it. The mc rows are read back only beside their
  gen rows.
An item keeps its row `id` when it has one; the others are numbered after them. Rows carry no
`link`.

A video is named by its number (`video1` → `dataset/videos/1.mp4`): a curated item whose `video`
has no number, two questions of one video and category, true statements without false ones (or the
reverse), or two different videos with one number are refused, naming the items.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict

from annotation.exporters.base import (
    ExportFailed,
    ReleaseWriter,
    asset_for,
    copy_linked,
    position_key,
    source_of,
    suffix,
)

DEFAULT_FILE = "dataset/data.json"
GEN_FILE, MC_FILE = "gen.csv", "mc.csv"
LAYOUTS = ("data", "gen", "mc")
N_ANSWERS = 8
ANSWERS = [f"answer{n}" for n in range(1, N_ANSWERS + 1)]
GEN_COLUMNS = ["id", "video_id", "file_name", "question_category", "question", *ANSWERS]
MC_COLUMNS = ["id", "video_id", "file_name", "question_category", "pool_pos", "answer1", "answer2", "target"]


def write(items, writer: ReleaseWriter) -> None:
    if writer.layout in ("gen", "mc"):
        _write_rows(items, writer, with_statements=writer.layout == "mc")
    else:
        _write_release(items, writer, everything_in_data=writer.layout == "data")


# --- JSON layout (and the default) ----------------------------------------------------------------

def _write_release(items, writer: ReleaseWriter, *, everything_in_data: bool) -> None:
    videos: dict[str, dict] = {}  # file → {video key: {"parent": …, "lists": {name: {pos: entry}}}}
    gen_rows: dict[str, list] = defaultdict(list)
    mc_rows: dict[str, list] = defaultdict(list)
    columns: dict[str, list] = defaultdict(list)
    built = [item for item in items if everything_in_data or not source_of(item)]
    _check_unique(built)
    for item in items:
        payload, source = item.payload, source_of(item)
        if everything_in_data:
            number = _number_of(item)
            _copy_video(item, writer, f"dataset/videos/{number}")
            parent = source.get("parent") or _parent(payload)
            entry = source["record"] if "parent" in source else _entry(payload)
            _place(videos, DEFAULT_FILE, (int(number), payload["video"]), parent, _list_name(payload), None, entry)
        elif source:
            stem = f"dataset/videos/{_number(payload['video'])}"
            copy_linked(item, writer, "video", lambda ext, stem=stem: stem + ext)
            if "parent" in source:
                index, name, position = source["index"]
                _place(videos, source["file"], (0, index), source["parent"], name, position, source["record"])
                continue
            _add_row(gen_rows, columns, source)
            for entry in source.get("mc", []):
                _add_row(mc_rows, columns, entry)
        else:
            number = _number_of(item)
            _copy_video(item, writer, f"dataset/videos/{number}")
            _place(videos, DEFAULT_FILE, (1, int(number), payload["video"]), _parent(payload), _list_name(payload),
                   None, _entry(payload))
    for file, records in videos.items():
        writer.write_json(file, [_video_record(found) for _key, found in sorted(records.items())])
    for rows in (gen_rows, mc_rows):
        for file, entries in rows.items():
            entries.sort(key=position_key)
            writer.write_table(file, columns[file], [entry["record"] for entry in entries])


def _number(video: str) -> str | None:
    match = re.search(r"(\d+)$", video)
    return str(int(match.group(1))) if match else None


def _number_of(item) -> str:
    number = _number(item.payload["video"])
    if number is None:
        raise ExportFailed(f"item {item.external_id}: video {item.payload['video']!r} has no number; a MAIA release "
                           "names its videos by number (video1 → dataset/videos/1.mp4)")
    return number


def _copy_video(item, writer: ReleaseWriter, stem: str) -> str:
    """Copy the item's video to `stem` + its suffix; the file name written ("" without a video)."""
    asset = asset_for(item, "video")
    if asset is None:
        return ""
    relative = stem + suffix(asset, ".mp4")
    try:
        writer.copy_media(asset, relative)
    except ExportFailed:
        raise ExportFailed(f"item {item.external_id}: another item's video of number {_number_of(item)} "
                           f"is a different file; both would be written to {relative}") from None
    return relative.rsplit("/", 1)[-1]


def _check_unique(items) -> None:
    """One question per video and category, and statements both true and false or neither."""
    seen: dict[tuple, str] = {}
    for item in items:
        given = [name for name in ("true_statements", "false_statements") if item.payload.get(name) is not None]
        if len(given) == 1:
            raise ExportFailed(f"item {item.external_id} has {given[0].replace('_', ' ')} without their counterpart; "
                               "a release question has both or neither")
        key = (_number_of(item), item.payload["category"])
        if key in seen:
            raise ExportFailed(f"items {seen[key]} and {item.external_id} are both the {key[1]} question of video "
                               f"{item.payload['video']!r}; a release holds one question per video and category")
        seen[key] = item.external_id


def _list_name(payload: dict) -> str:
    return "question_categories_B" if payload["category"].endswith("_B") else "question_categories_A"


def _parent(payload: dict) -> dict:
    return {"video": payload["video"], **({"link": payload["link"]} if payload.get("link") else {})}


def _entry(payload: dict) -> dict:
    entry = {"category": payload["category"], "question": payload["question"], "answer": payload["answers"]}
    if payload.get("true_statements") is not None:
        entry["true_statement"] = payload["true_statements"]
        entry["false_statement"] = payload["false_statements"]
    return entry


def _place(videos, file, key, parent, name, position, entry) -> None:
    found = videos.setdefault(file, {}).setdefault(key, {"parent": parent, "lists": defaultdict(dict)})
    entries = found["lists"][name]
    entries[len(entries) if position is None else position] = entry


# The order `data.json` records are written in: the release's fields first, any others after them in
# name order, so that a record reads the same whichever database kept it (PostgreSQL's JSON does not
# keep the order of keys).
VIDEO_KEYS = ("video", "link", "question_categories_A", "question_categories_B")
ENTRY_KEYS = ("category", "question", "answer", "true_statement", "false_statement")


def _in_order(record: dict, keys: tuple[str, ...]) -> dict:
    known = [key for key in keys if key in record]
    return {key: record[key] for key in [*known, *sorted(set(record) - set(known))]}


def _video_record(found: dict) -> dict:
    record = dict(found["parent"])
    for name, entries in sorted(found["lists"].items()):
        record[name] = [_in_order(entries[position], ENTRY_KEYS) if isinstance(entries[position], dict)
                        else entries[position] for position in sorted(entries)]
    return _in_order(record, VIDEO_KEYS)


def _add_row(rows: dict, columns: dict, entry: dict) -> None:
    file = entry["file"]
    rows[file].append(entry)
    for column in entry.get("columns") or entry["record"]:
        if column not in columns[file]:
            columns[file].append(column)


# --- Row layouts ----------------------------------------------------------------------------------

def _write_rows(items, writer: ReleaseWriter, *, with_statements: bool) -> None:
    _check_unique(items)
    ids = _row_ids(items)
    gen, mc = [], []
    for item in items:
        payload = item.payload
        number = _number_of(item)
        file_name = _copy_video(item, writer, f"videos/{number}")
        common = {"video_id": payload["video"], "file_name": file_name, "question_category": payload["category"]}
        gen.append({"id": ids[item.pk], **common, "question": payload["question"],
                    **dict(zip(ANSWERS, payload["answers"], strict=True))})
        if not with_statements or payload.get("true_statements") is None:
            continue
        pairs = zip(payload["true_statements"], payload["false_statements"], strict=True)
        for position, (true, false) in enumerate(pairs):
            true_second = _true_second(payload, position)
            mc.append({"id": str(len(mc) + 1), **common, "pool_pos": position,
                       "answer1": false if true_second else true, "answer2": true if true_second else false,
                       "target": 2 if true_second else 1})
    writer.write_table(GEN_FILE, GEN_COLUMNS, gen)
    if with_statements:
        writer.write_table(MC_FILE, MC_COLUMNS, mc)


def _row_ids(items) -> dict:
    """Each item's gen row id: its own where it has one, else the next free whole number."""
    taken = {str(item.payload["id"]) for item in items if item.payload.get("id") not in (None, "")}
    ids, counter = {}, 0
    for item in items:
        if item.payload.get("id") not in (None, ""):
            ids[item.pk] = str(item.payload["id"])
            continue
        counter += 1
        while str(counter) in taken:
            counter += 1
        ids[item.pk] = str(counter)
        taken.add(str(counter))
    return ids


def _true_second(payload: dict, position: int) -> bool:
    """Whether the pair's true statement is answer2: fixed by the question, about half of the pairs."""
    seed = f"{payload['video']}\n{payload['category']}\n{payload['question']}\n{position}"
    return hashlib.sha256(seed.encode("utf-8")).digest()[0] % 2 == 1
