"""MAIA export: `data.json` (or `data_20%.json`) or the `gen` / `mc` row files, with the videos.

Items imported from the JSON layout go back into their video records (`source.parent`, the question
lists rebuilt in their positions) in the file they came from; items imported from rows go back to
their gen file and their statement pairs to their mc files, with the header as written. Curated
items go to `dataset/data.json`, grouped by video, into `question_categories_A` or `_B` after their
category's suffix. Videos are copied to where the import found them (`dataset/videos/<n>.mp4` for
curated items).
"""

from __future__ import annotations

import re
from collections import defaultdict

from annotation.exporters.base import ReleaseWriter, copy_linked, position_key, source_of

DEFAULT_FILE = "dataset/data.json"


def write(items, writer: ReleaseWriter) -> None:
    videos: dict[str, dict] = {}  # file → {video key: {"order": …, "parent": …, "lists": {name: {pos: entry}}}}
    gen_rows: dict[str, list] = defaultdict(list)
    mc_rows: dict[str, list] = defaultdict(list)
    columns: dict[str, list] = defaultdict(list)
    for item in items:
        payload, source = item.payload, source_of(item)
        copy_linked(item, writer, "video", lambda ext, video=payload["video"]: f"dataset/videos/{_number(video)}{ext}")
        if "parent" in source:
            index, name, position = source["index"]
            _place(videos, source["file"], (0, index), source["parent"], name, position, source["record"])
        elif source:
            _add_row(gen_rows, columns, source)
            for entry in source.get("mc", []):
                _add_row(mc_rows, columns, entry)
        else:
            name = "question_categories_B" if payload["category"].endswith("_B") else "question_categories_A"
            parent = {"video": payload["video"], **({"link": payload["link"]} if payload.get("link") else {})}
            _place(videos, DEFAULT_FILE, (1, payload["video"]), parent, name, None, _entry(payload))
    for file, records in videos.items():
        writer.write_json(file, [_video_record(found) for _key, found in sorted(records.items())])
    for rows in (gen_rows, mc_rows):
        for file, entries in rows.items():
            entries.sort(key=position_key)
            writer.write_table(file, columns[file], [entry["record"] for entry in entries])


def _number(video: str) -> str:
    match = re.search(r"(\d+)$", video)
    return match.group(1) if match else video


def _entry(payload: dict) -> dict:
    entry = {"category": payload["category"], "question": payload["question"], "answer": payload["answers"]}
    if "true_statements" in payload:
        entry["true_statement"] = payload["true_statements"]
        entry["false_statement"] = payload["false_statements"]
    return entry


def _place(videos, file, key, parent, name, position, entry) -> None:
    found = videos.setdefault(file, {}).setdefault(key, {"parent": parent, "lists": defaultdict(dict)})
    entries = found["lists"][name]
    entries[len(entries) if position is None else position] = entry


def _video_record(found: dict) -> dict:
    record = dict(found["parent"])
    for name, entries in sorted(found["lists"].items()):
        record[name] = [entries[position] for position in sorted(entries)]
    return record


def _add_row(rows: dict, columns: dict, entry: dict) -> None:
    file = entry["file"]
    rows[file].append(entry)
    for column in entry.get("columns") or entry["record"]:
        if column not in columns[file]:
            columns[file].append(column)
