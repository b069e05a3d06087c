"""CVRR-ES export: `<dimension>/annotations_<dimension>.json`, the videos and the captions files.

QA records go back to the annotations file they came from, videos to where the import found them,
captions to their `captions_<dimension>.json` in the form they had (an object by VideoID or a list).

Curated items (QA pairs kept in curation, with no imported record) are written in the release
layout: `{VideoID, Q, A}` (and `question_kind` when the item has one) into
`CVRR-ES/<dimension>/annotations_<dimension>.json`, the video beside it as `<VideoID><extension of
the library file>` (whatever the library called it), and the caption, if any, into
`CVRR-ES/<dimension>/captions_<dimension>.json` in the object form `{VideoID: caption}`, so that
`import_benchmark cvrr` reads the same payloads and the same video bytes back. A caption belongs to
a video, not to a question: two items of one video with different captions cannot be written (the
export is refused, naming them), and an item without a caption whose video has one gets it back on
import. Only `qa` items are exported: a version holding `video` records under curation is refused.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import PurePosixPath

from annotation.exporters.base import ExportFailed, ReleaseWriter, copy_linked, record_of, source_of
from generation.media_probe import VIDEO_EXTENSIONS

RELEASE_FOLDER = "CVRR-ES"


def _record(payload: dict) -> dict:
    record = {"VideoID": payload["video_id"], "Q": payload["question"], "A": payload["answer"]}
    if payload.get("question_kind"):
        record["question_kind"] = payload["question_kind"]
    return record


def write(items, writer: ReleaseWriter) -> None:
    annotations: dict[str, list] = defaultdict(list)
    captions: dict[str, dict] = {}  # file → {"form": "key" | "index", "entries": {position: (record, item)}}
    for item in items:
        payload, source = item.payload, source_of(item)
        if payload.get("kind") != "qa":
            raise ExportFailed(f"item {item.external_id} is a {payload.get('kind')!r} record under curation; only "
                               "QA pairs are part of a CVRR-ES release")
        dimension = payload["dimension"]
        file = source.get("file") or f"{RELEASE_FOLDER}/{dimension}/annotations_{dimension}.json"
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
            kept = entries.setdefault(caption[form], (caption["record"], item))
            if kept[0] != caption["record"]:
                raise ExportFailed(f"items {kept[1].external_id} and {item.external_id} give video {video_id!r} "
                                   f"different captions; a release keeps one caption per video")
    for file, records in annotations.items():
        writer.write_json(file, records)
    for file, found in captions.items():
        entries = {position: record for position, (record, _) in found["entries"].items()}
        data = dict(entries) if found["form"] == "key" else [entries[index] for index in sorted(entries)]
        writer.write_json(file, data)
