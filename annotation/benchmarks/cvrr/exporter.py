"""CVRR-ES export: `<dimension>/annotations_<dimension>.json`, the videos and the captions files.

QA records go back to the annotations file they came from, videos to where the import found them,
captions to their `captions_<dimension>.json` in the form they had (an object by VideoID or a list).
Curated items are written as `{VideoID, Q, A}` into `<dimension>/annotations_<dimension>.json`, with
the video beside it and their caption, if any, in the object form.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import PurePosixPath

from annotation.exporters.base import ReleaseWriter, copy_linked, record_of, source_of
from generation.media_probe import VIDEO_EXTENSIONS


def _record(payload: dict) -> dict:
    return {"VideoID": payload["video_id"], "Q": payload["question"], "A": payload["answer"]}


def write(items, writer: ReleaseWriter) -> None:
    annotations: dict[str, list] = defaultdict(list)
    captions: dict[str, dict] = {}  # file → {"key" or "index": {position: record}}
    for item in items:
        payload, source = item.payload, source_of(item)
        dimension = payload["dimension"]
        file = source.get("file") or f"{dimension}/annotations_{dimension}.json"
        annotations[file].append(record_of(item, _record))
        folder = PurePosixPath(file).parent
        video_id = payload["video_id"]
        copy_linked(item, writer, "video", lambda ext, folder=folder, video_id=video_id: str(
            folder / (video_id if PurePosixPath(video_id).suffix.lower() in VIDEO_EXTENSIONS else video_id + ext)))
        caption = source.get("caption")
        if caption is None and payload.get("caption"):
            caption = {"file": str(folder / f"captions_{dimension}.json"), "key": video_id,
                       "record": payload["caption"]}
        if caption is not None:
            form = "key" if "key" in caption else "index"
            entries = captions.setdefault(caption["file"], {"form": form, "entries": {}})["entries"]
            entries.setdefault(caption[form], caption["record"])
    for file, records in annotations.items():
        writer.write_json(file, records)
    for file, found in captions.items():
        entries = found["entries"]
        data = dict(entries) if found["form"] == "key" else [entries[index] for index in sorted(entries)]
        writer.write_json(file, data)
