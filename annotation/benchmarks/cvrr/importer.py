"""CVRR-ES release: one folder per dimension, `<dimension>/annotations_<dimension>.json` (SPEC §4).

The dimension folders may sit at the top of the imported folder (normally `CVRR-ES/`) or deeper.
Each annotations file is a list of `{VideoID, Q, A}`; the videos lie in the dimension's folder
(or below it), named by `VideoID` (which may carry its extension, "12.mp4", or not, "12").
An optional `captions_<dimension>.json` beside it gives a caption per video, either as an object
`{VideoID: caption}` or as a list of objects with `VideoID` and `caption`.

Items: kind `qa`, external id `<dimension>:<record index>`, with `dimension` (the folder name),
`video_id` (`VideoID` as written), `question`, `answer`, the video's `caption` when the captions
file has one, and `question_kind` (reasoning | robustness) when the record says so in a
`question_kind` or `type` field. The video under role `video`. The same question about the same
video twice in a dimension is a problem. Videos the release does not ship are reported; with
`--skip-missing-media` their questions are left out instead. `VideoID`, `Q` and `A` must be texts
(and `question_kind` / `type` too when present): anything else is refused with the file, the record
and the field.

`source` also holds `caption`: {file, key (object form) or index (list form), record} so an export
writes the captions file back; captions of videos without questions are not kept.
"""

from __future__ import annotations

from pathlib import Path

from annotation.importers.base import (
    ItemSpec,
    MediaRef,
    Problems,
    at_record,
    first_duplicate,
    relative,
    source_record,
    text,
)
from annotation.importers.fields import FILLED_TEXT, TEXT, check_fields
from annotation.importers.files import FileIndex, read_json
from generation.media_probe import VIDEO_EXTENSIONS

PREFIX = "annotations_"
REQUIRED = ("VideoID", "Q", "A")
FIELDS = {"VideoID": FILLED_TEXT, "Q": FILLED_TEXT, "A": FILLED_TEXT, "question_kind": TEXT, "type": TEXT}
CAPTION_KEYS = ("caption", "captions", "description")
QUESTION_KINDS = ("reasoning", "robustness")


def read(root: Path, problems: Problems) -> list[ItemSpec]:
    files = [path for path in find_annotation_files(root) if _dimension_of(path, root, problems)]
    if not files and not problems:
        problems.add(str(root), "no <dimension>/annotations_<dimension>.json found (a CVRR-ES release has one "
                                "folder per dimension with its annotations and videos)")
    dimensions: dict[str, str] = {}
    specs = []
    for path in files:
        dimension = path.parent.name
        repeated = first_duplicate(dimensions, dimension, relative(path, root))
        if repeated:
            problems.add(relative(path, root), f"dimension {dimension!r} appears twice (also {repeated})")
            continue
        specs.extend(_read_dimension(path, dimension, root, problems))
    return specs


def find_annotation_files(root: Path) -> list[Path]:
    return sorted({path for path in _json_files(root) if path.name.lower().startswith(PREFIX)})


def _json_files(root: Path) -> list[Path]:
    return [path for path in FileIndex(root).files if path.suffix.lower() == ".json"]


def _dimension_of(path: Path, root: Path, problems: Problems) -> bool:
    if path.name != f"{PREFIX}{path.parent.name}.json":
        problems.add(relative(path, root), f"an annotations file must be named after its folder "
                                           f"({PREFIX}{path.parent.name}.json)")
        return False
    return True


def _read_dimension(path: Path, dimension: str, root: Path, problems: Problems) -> list[ItemSpec]:
    file = relative(path, root)
    records = read_json(path, root, problems)
    if records is None:
        return []
    if not isinstance(records, list):
        problems.add(file, f"must hold a JSON list of {{VideoID, Q, A}} records, not a {type(records).__name__}")
        return []
    captions = _read_captions(path.parent, dimension, root, problems)
    videos = _VideoFinder(path.parent, root)
    specs = []
    seen: dict[tuple, str] = {}
    for index, record in enumerate(records):
        where = at_record(file, index)
        if not isinstance(record, dict):
            problems.add(where, f"malformed record: a JSON object is needed, not a {type(record).__name__}")
            continue
        missing = [name for name in REQUIRED if not text(record.get(name))]
        if missing:
            problems.add(where, "missing field(s) " + ", ".join(f"'{name}'" for name in missing))
            continue
        if not check_fields(record, FIELDS, where, problems):
            continue
        video_id, question = text(record["VideoID"]), text(record["Q"])
        repeated = first_duplicate(seen, (video_id, question), where)
        if repeated:
            problems.add(where, f"the same question about video {video_id!r} as {repeated}")
            continue
        media = {"video": videos.ref(video_id)}
        payload = {"kind": "qa", "dimension": dimension, "video_id": video_id, "question": question,
                   "answer": text(record["A"])}
        kind = text(record.get("question_kind") or record.get("type")).lower()
        if kind in QUESTION_KINDS:
            payload["question_kind"] = kind
        source = source_record(file, record, root=root, media=media, index=index)
        caption = captions.get(video_id) or captions.get(Path(video_id).stem)
        if caption is not None:
            payload["caption"], source["caption"] = caption
        payload["source"] = source
        specs.append(ItemSpec(external_id=f"{dimension}:{index}", payload=payload, where=where, media=media))
    return specs


def _caption_text(value) -> str:
    if isinstance(value, dict):
        for key in CAPTION_KEYS:
            for name, inner in value.items():
                if name.lower() == key and isinstance(inner, str):
                    return inner.strip()
        return ""
    return value.strip() if isinstance(value, str) else ""


def _read_captions(folder: Path, dimension: str, root: Path, problems: Problems) -> dict[str, tuple[str, dict]]:
    """VideoID (and its stem) → (caption text, source entry)."""
    path = folder / f"captions_{dimension}.json"
    if not path.is_file():
        return {}
    file = relative(path, root)
    data = read_json(path, root, problems)
    entries = []
    if isinstance(data, dict):
        entries = [(file, str(key), value, {"key": str(key)}) for key, value in data.items()]
    elif isinstance(data, list):
        for index, value in enumerate(data):
            video_id = text(value.get("VideoID")) if isinstance(value, dict) else ""
            if not video_id:
                problems.add(at_record(file, index), "a caption record needs 'VideoID' and 'caption'")
                continue
            entries.append((at_record(file, index), video_id, value, {"index": index}))
    elif data is not None:
        problems.add(file, "captions must be an object {VideoID: caption} or a list of {VideoID, caption}")
    captions = {}
    for where, video_id, value, position in entries:
        caption = _caption_text(value)
        if not caption:
            problems.add(where, f"no caption text for video {video_id!r}")
            continue
        entry = (caption, {"file": file, **position, "record": value})
        captions.setdefault(video_id, entry)
        captions.setdefault(Path(video_id).stem, entry)
    return captions


class _VideoFinder:
    def __init__(self, folder: Path, root: Path):
        self.folder, self.root = folder, root
        self.index = FileIndex(folder)

    def ref(self, video_id: str) -> MediaRef:
        has_extension = Path(video_id).suffix.lower() in VIDEO_EXTENSIONS
        if has_extension:
            found = self.index.by_trailing_path(video_id)
        else:
            found = sorted(self.index.by_stem(video_id, VIDEO_EXTENSIONS),
                           key=lambda path: (path.suffix.lower() != ".mp4", str(path)))
        expected = f"{relative(self.folder, self.root)}/{video_id if has_extension else video_id + '.mp4'}"
        return MediaRef(kind="video", path=found[0] if found else None, expected=expected)
