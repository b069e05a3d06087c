"""BlackSwanSuite release: `VAR_Data.json`, `mcq.json`, `yn.json` and `videos/<id>.mp4` (SPEC §1).

`VAR_Data.json` may sit at the top of the imported folder or below it; `mcq.json`, `yn.json` and
`videos/` are read next to it. `mcq.json` and `yn.json` are optional (a note says when one is
absent); a video is `videos/<id>.mp4` or another video extension with the same name.

Items:
- `video`, one per VAR_Data record, external id = the record's `id`. The payload is the record
  itself, every field under its own name (`task1_gt`, `task2_checkboxes`, `preevent_caption`, the
  +P/+PC captions `pc_preevent`, `pc_postevent`, `pc_comp`, …), with `id` as text and `preevent`,
  `event`, `postevent` as numbers: the start times in seconds of V_pre, V_main and V_post. They must
  increase, and V_post must start before the video ends (or before the record's own `end`).
- `mcq`, one per mcq.json row, external id `<video id>:mcq:<row index>`: `mcq_task` 1|2,
  `mcq_options` three texts, `mcq_label` 0–2.
- `yn`, one per yn.json row, external id `<video id>:yn:<row index>`: `def_task` 1|2, `exp` the
  hypothesis, `def_label` yes|no (case folded).

Every row names its video by `id`, which VAR_Data.json must hold; every item links the whole video
under role `video`. Numbers written as text ("2.5") are read as numbers; `source.record` keeps them
as they were.

Types (`VIDEO_FIELDS`, checked when present): `id` a text or whole number; `task1_gt` and
`task2_gt` lists of 3 texts (a `task2_gt` entry is empty where the forecast held); `task3_gt` a
text; `task2_checkboxes` and `task3_checkboxes` lists of 3 marks, "yes"/"no" as in the authors'
files or booleans; `multivideo` such a mark; the captions texts; `end` a number. Anything else is
refused with the file, the record and the field.
"""

from __future__ import annotations

from pathlib import Path

from annotation.importers.base import (
    ItemSpec,
    MediaRef,
    Problems,
    at_record,
    number,
    relative,
    source_record,
    text,
)
from annotation.importers.fields import ID, MARK, NUMBER, TEXT, WHOLE_NUMBER, check_fields, marks, texts
from annotation.importers.files import FileIndex, find_one, read_json_list
from generation.media_probe import VIDEO_EXTENSIONS

DATA_FILE = "VAR_Data.json"
ROW_FILES = {"mcq": "mcq.json", "yn": "yn.json"}
SPLIT_FIELDS = ("preevent", "event", "postevent")
REQUIRED = {
    "video": ("id", *SPLIT_FIELDS),
    "mcq": ("id", "mcq_task", "mcq_options", "mcq_label"),
    "yn": ("id", "def_task", "exp", "def_label"),
}
VIDEO_FIELDS = {
    "id": ID, "set_id": ID, "index": WHOLE_NUMBER, "frames_url": TEXT, "end": NUMBER,
    "task1_gt": texts(3), "task2_gt": texts(3), "task3_gt": TEXT,
    "task2_checkboxes": marks(3), "task3_checkboxes": marks(3), "multivideo": MARK, "difficulty": TEXT,
    "preevent_caption": TEXT, "pc_preevent": TEXT, "pc_postevent": TEXT, "pc_comp": TEXT,
}
LAYOUT = "a BlackSwanSuite release has VAR_Data.json, mcq.json, yn.json and videos/<id>.mp4"


def read(root: Path, problems: Problems) -> list[ItemSpec]:
    data_path = find_one(root, DATA_FILE, problems)
    if data_path is None:
        if not problems:
            problems.add(str(root), f"no {DATA_FILE} found ({LAYOUT})")
        return []
    base = data_path.parent
    records = read_json_list(data_path, root, problems)
    if records is None:
        return []
    videos = _VideoFinder(base, root)
    specs = []
    video_refs: dict[str, MediaRef] = {}  # the videos of valid records
    known = {text(record.get("id")) for record in records if isinstance(record, dict)} - {""}
    file = relative(data_path, root)
    for index, record in enumerate(records):
        spec = _video_item(record, file, index, videos, root, problems)
        if spec is not None:
            specs.append(spec)
            video_refs.setdefault(spec.payload["id"], spec.media["video"])
    for kind, name in ROW_FILES.items():
        path = base / name
        if not path.is_file():
            problems.note(f"{relative(base, root) if base != root else '.'}/{name} not found: no {kind} items")
            continue
        rows = read_json_list(path, root, problems)
        for index, row in enumerate(rows or []):
            spec = _row_item(kind, row, relative(path, root), index, video_refs, known, root, problems)
            if spec is not None:
                specs.append(spec)
    return specs


def check_media_facts(spec: ItemSpec, facts: dict, problems: Problems) -> None:
    """V_post must start before the video ends (or before the record's own `end`)."""
    if spec.payload.get("kind") != "video":
        return
    end = number(spec.payload.get("end")) or facts["video"].duration
    if spec.payload["postevent"] >= end:
        problems.add(spec.where, f"postevent {spec.payload['postevent']} s is not before the end of the video "
                                 f"({end:g} s)")


class _VideoFinder:
    def __init__(self, base: Path, root: Path):
        self.folder = base / "videos"
        self.index = FileIndex(self.folder) if self.folder.is_dir() else None
        self.root = root

    def ref(self, video_id: str) -> MediaRef:
        expected = f"{relative(self.folder, self.root)}/{video_id}.mp4"
        found = []
        if self.index is not None:
            found = sorted(self.index.by_stem(video_id, VIDEO_EXTENSIONS), key=lambda p: (p.suffix.lower() != ".mp4",
                                                                                           str(p)))
        return MediaRef(kind="video", path=found[0] if found else None, expected=expected)


def _missing(record: dict, fields: tuple[str, ...]) -> list[str]:
    return [name for name in fields if name not in record or record[name] is None or record[name] == ""]


def _video_item(record, file: str, index: int, videos: _VideoFinder, root: Path,
                problems: Problems) -> ItemSpec | None:
    where = at_record(file, index)
    if not isinstance(record, dict):
        problems.add(where, f"malformed record: a JSON object is needed, not a {type(record).__name__}")
        return None
    missing = _missing(record, REQUIRED["video"])
    if missing:
        problems.add(where, "missing field(s) " + ", ".join(f"'{name}'" for name in missing))
        return None
    times = {name: number(record[name]) for name in SPLIT_FIELDS}
    bad = [name for name, value in times.items() if value is None or value < 0]
    for name in bad:
        problems.add(where, f"field '{name}' must be a number of seconds (got {record[name]!r})")
    if not check_fields(record, VIDEO_FIELDS, where, problems) or bad:
        return None
    if not times["preevent"] < times["event"] < times["postevent"]:
        problems.add(where, "the split must increase: preevent < event < postevent "
                            f"(got {times['preevent']}, {times['event']}, {times['postevent']})")
        return None
    video_id = text(record["id"])
    media = {"video": videos.ref(video_id)}
    payload = {**record, "kind": "video", "id": video_id, **times,
               "source": source_record(file, record, root=root, media=media, index=index)}
    return ItemSpec(external_id=video_id, payload=payload, where=where, media=media)


def _row_item(kind: str, row, file: str, index: int, video_refs: dict[str, MediaRef], known: set[str], root: Path,
              problems: Problems) -> ItemSpec | None:
    where = at_record(file, index)
    if not isinstance(row, dict):
        problems.add(where, f"malformed row: a JSON object is needed, not a {type(row).__name__}")
        return None
    missing = _missing(row, REQUIRED[kind])
    if missing:
        problems.add(where, "missing field(s) " + ", ".join(f"'{name}'" for name in missing))
        return None
    if not check_fields(row, {"id": ID}, where, problems):
        return None
    video_id = text(row["id"])
    errors = []
    if video_id not in known:
        errors.append(f"names video {video_id!r}, which {DATA_FILE} does not hold")
    fields = _mcq_fields(row, errors) if kind == "mcq" else _yn_fields(row, errors)
    for message in errors:
        problems.add(where, message)
    if errors or video_id not in video_refs:  # a row of a faulty video record: that record's problem says why
        return None
    media = {"video": video_refs[video_id]}
    payload = {**row, "kind": kind, "id": video_id, **fields,
               "source": source_record(file, row, root=root, media=media, index=index)}
    return ItemSpec(external_id=f"{video_id}:{kind}:{index}", payload=payload, where=where, media=media)


def _task(row: dict, name: str, errors: list) -> int | None:
    value = number(row[name])
    if value not in (1, 2):
        errors.append(f"field '{name}' must be 1 (Detective) or 2 (Reporter) (got {row[name]!r})")
        return None
    return int(value)


def _mcq_fields(row: dict, errors: list) -> dict:
    options = row["mcq_options"]
    if not (isinstance(options, list) and len(options) == 3 and all(isinstance(o, str) and o.strip()
                                                                    for o in options)):
        errors.append(f"field 'mcq_options' must be a list of 3 texts (got {options!r})")
    label = number(row["mcq_label"])
    if label not in (0, 1, 2):
        errors.append(f"field 'mcq_label' must be 0, 1 or 2 (got {row['mcq_label']!r})")
    task = _task(row, "mcq_task", errors)
    return {} if errors else {"mcq_task": task, "mcq_options": list(options), "mcq_label": int(label)}


def _yn_fields(row: dict, errors: list) -> dict:
    hypothesis = row["exp"]
    if not (isinstance(hypothesis, str) and hypothesis.strip()):
        errors.append(f"field 'exp' must be the hypothesis text (got {hypothesis!r})")
    label = text(row["def_label"]).lower()
    if label not in ("yes", "no"):
        errors.append(f"field 'def_label' must be 'yes' or 'no' (got {row['def_label']!r})")
    task = _task(row, "def_task", errors)
    return {} if errors else {"def_task": task, "def_label": label}
