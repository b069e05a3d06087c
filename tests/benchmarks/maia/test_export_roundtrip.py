"""A frozen MAIA version built by curation (`question` items made with the ORM, their videos library
videos with arbitrary file names under role `video`) exports in the release layout `dataset/data.json`
+ `dataset/videos/<n>.mp4`, or with `--layout gen|mc` as the hosted row files, and `import_benchmark
maia` reads back the same payloads and the same video bytes; exporting again gives the same files."""

import csv
import hashlib
import json
import shutil

import pytest
from django.core.management import CommandError, call_command

from annotation import versions
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, ItemMedia
from tests.conftest import ingest_path
from tests.release_fixtures import run_import

pytestmark = pytest.mark.django_db


def statements(kind: str, topic: str) -> list[str]:
    return [f"{kind} {n}: {topic} è così." for n in range(1, 9)]


# external id → payload, in the order curation made them
PAYLOADS = {
    "maia-q-1": {"kind": "question", "video": "video12", "category": "Incertezza_A",
                 "question": "Dove sta andando il ciclista?",
                 "answers": [f"Verso il traguardo ({n})" for n in range(8)],
                 "true_statements": statements("Vero", "il ciclista va al traguardo"),
                 "false_statements": statements("Falso", "il ciclista torna indietro"),
                 "link": "https://example.org/maia/bikes"},
    "maia-q-2": {"kind": "question", "video": "video3", "category": "SpazialeTotale_A",
                 "question": "Dove si trova il coniglio?", "answers": [f"Sul prato, risposta {n}" for n in range(8)],
                 "true_statements": statements("Vero", "il coniglio è sul prato"),
                 "false_statements": statements("Falso", "il coniglio è sull'albero")},
    "maia-q-3": {"kind": "question", "video": "video3", "category": "SpazialeTotale_B",
                 "question": "Che cosa c'è a destra del coniglio?",
                 "answers": [f"Un \"albero\" — risposta {n}" for n in range(8)],
                 "true_statements": statements("Vero", "a destra c'è un albero"),
                 "false_statements": statements("Falso", "a destra c'è un fiume")},
    "maia-q-4": {"kind": "question", "video": "video12", "category": "Controfattuale_B",
                 "question": "Che cosa succederebbe se piovesse?",
                 "answers": [f"Rallenterebbe, risposta {n}" for n in range(8)], "link": "https://example.org/maia/bikes"},
}


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files_of(folder) -> dict:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file()}


@pytest.fixture
def library_videos(tmp_path, bigbuckbunny, bikes, curator):
    """video key → (library Video, original file), the files named as a curator's library names them."""
    folder = tmp_path / "library"
    folder.mkdir()
    found = {}
    for video, (sample, name) in {"video3": (bigbuckbunny, "Bunny FINAL (2).MP4"),
                                  "video12": (bikes, "bikes take 4.mp4")}.items():
        path = folder / name
        shutil.copyfile(sample, path)
        found[video] = (ingest_path(path, user=curator, probe=False), path)
    return found


def curated_version(label: str, payloads: dict, videos: dict) -> BenchmarkVersion:
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label=label)
    for external_id, payload in payloads.items():
        item = BenchmarkItem.objects.create(version=version, external_id=external_id, payload=payload)
        ItemMedia.objects.create(item=item, role="video", video=videos[payload["video"]][0])
    return versions.freeze(version)


def imported_payloads(version) -> dict:
    """(video, category) → (payload without source, video checksum) of a version's items."""
    found = {}
    for item in version.items.prefetch_related("media__video"):
        payload = {key: value for key, value in item.payload.items() if key != "source"}
        (link,) = item.media.all()
        assert link.role == "video"
        with link.video.file.open("rb") as handle:
            found[(payload["video"], payload["category"])] = (payload, hashlib.sha256(handle.read()).hexdigest())
    return found


def test_a_curated_version_exports_as_data_json_and_imports_back(library_videos, tmp_path):
    curated = curated_version("curated-1", PAYLOADS, library_videos)
    out = tmp_path / "export"

    call_command("export_benchmark", "maia", "--version", "curated-1", str(out))

    assert sorted(files_of(out)) == ["dataset/data.json", "dataset/videos/12.mp4", "dataset/videos/3.mp4"]
    records = json.loads((out / "dataset" / "data.json").read_text(encoding="utf-8"))
    q1, q2, q3, q4 = (PAYLOADS[f"maia-q-{n}"] for n in range(1, 5))
    assert records == [  # by video number, video3 before video12
        {"video": "video3",
         "question_categories_A": [{"category": "SpazialeTotale_A", "question": q2["question"], "answer": q2["answers"],
                                    "true_statement": q2["true_statements"],
                                    "false_statement": q2["false_statements"]}],
         "question_categories_B": [{"category": "SpazialeTotale_B", "question": q3["question"], "answer": q3["answers"],
                                    "true_statement": q3["true_statements"],
                                    "false_statement": q3["false_statements"]}]},
        {"video": "video12", "link": q1["link"],
         "question_categories_A": [{"category": "Incertezza_A", "question": q1["question"], "answer": q1["answers"],
                                    "true_statement": q1["true_statements"],
                                    "false_statement": q1["false_statements"]}],
         "question_categories_B": [{"category": "Controfattuale_B", "question": q4["question"],
                                    "answer": q4["answers"]}]}]
    for video, (_, original) in library_videos.items():
        assert (out / "dataset" / "videos" / f"{video[5:]}.mp4").read_bytes() == original.read_bytes()

    again = run_import("maia", out, "reimported")

    assert again.frozen and again.item_count == curated.item_count == 4
    found = imported_payloads(again)
    assert set(found) == {(payload["video"], payload["category"]) for payload in PAYLOADS.values()}
    for payload in PAYLOADS.values():
        imported, checksum = found[(payload["video"], payload["category"])]
        assert imported == payload
        assert checksum == sha256(library_videos[payload["video"]][1])
    assert {item.external_id for item in again.items.all()} == {
        "video12:Incertezza_A", "video3:SpazialeTotale_A", "video3:SpazialeTotale_B", "video12:Controfattuale_B"}
    # two questions of one video share one library video
    assert len({item.media.get().video_id for item in again.items.all()}) == 2

    # a second export of the curated version, the re-imported version's export and `--layout data`
    # write the same files, byte for byte
    for label, layout in (("curated-1", ()), ("reimported", ()), ("curated-1", ("--layout", "data")),
                          ("reimported", ("--layout", "data"))):
        other = tmp_path / f"export-{label}-{len(layout)}"
        call_command("export_benchmark", "maia", "--version", label, *layout, str(other))
        assert files_of(other) == files_of(out), (label, layout)


def test_the_mc_layout_writes_gen_and_mc_rows_that_import_back(library_videos, tmp_path):
    curated_version("curated-1", PAYLOADS, library_videos)
    out = tmp_path / "rows"

    call_command("export_benchmark", "maia", "--version", "curated-1", "--layout", "mc", str(out))

    assert sorted(files_of(out)) == ["gen.csv", "mc.csv", "videos/12.mp4", "videos/3.mp4"]
    with (out / "gen.csv").open(encoding="utf-8", newline="") as handle:
        gen = list(csv.DictReader(handle))
    assert [(row["id"], row["video_id"], row["file_name"], row["question_category"]) for row in gen] == [
        ("1", "video12", "12.mp4", "Incertezza_A"), ("2", "video3", "3.mp4", "SpazialeTotale_A"),
        ("3", "video3", "3.mp4", "SpazialeTotale_B"), ("4", "video12", "12.mp4", "Controfattuale_B")]
    assert [gen[1][f"answer{n}"] for n in range(1, 9)] == PAYLOADS["maia-q-2"]["answers"]
    with (out / "mc.csv").open(encoding="utf-8", newline="") as handle:
        mc = list(csv.DictReader(handle))
    assert len(mc) == 3 * 8  # maia-q-4 has no statements
    targets = {row["target"] for row in mc}
    assert targets == {"1", "2"}  # the true statement is not always answer1
    first = mc[0]
    true = first["answer1"] if first["target"] == "1" else first["answer2"]
    assert (first["video_id"], first["question_category"], first["pool_pos"]) == ("video12", "Incertezza_A", "0")
    assert true == PAYLOADS["maia-q-1"]["true_statements"][0]

    again = run_import("maia", out, "from-rows")

    found = imported_payloads(again)
    for number, payload in enumerate(PAYLOADS.values(), start=1):
        imported, checksum = found[(payload["video"], payload["category"])]
        expected = {key: value for key, value in payload.items() if key != "link"}  # rows carry no link
        assert imported == {**expected, "id": str(number)}
        assert checksum == sha256(library_videos[payload["video"]][1])

    second = tmp_path / "rows-2"
    call_command("export_benchmark", "maia", "--version", "curated-1", "--layout", "mc", str(second))
    assert files_of(second) == files_of(out)
    # the re-imported rows go back to their files as read, and keep their ids in the mc layout
    for layout in ((), ("--layout", "mc")):
        again_out = tmp_path / f"rows-again-{len(layout)}"
        call_command("export_benchmark", "maia", "--version", "from-rows", *layout, str(again_out))
        assert files_of(again_out) == files_of(out), layout


def test_the_gen_layout_leaves_the_statements_out(library_videos, tmp_path):
    curated_version("curated-1", PAYLOADS, library_videos)
    out = tmp_path / "gen"

    call_command("export_benchmark", "maia", "--version", "curated-1", "--layout", "gen", str(out))

    assert sorted(files_of(out)) == ["gen.csv", "videos/12.mp4", "videos/3.mp4"]
    found = imported_payloads(run_import("maia", out, "from-gen"))
    for number, payload in enumerate(PAYLOADS.values(), start=1):
        kept = {key: value for key, value in payload.items() if key not in ("link", "true_statements",
                                                                            "false_statements")}
        assert found[(payload["video"], payload["category"])][0] == {**kept, "id": str(number)}


@pytest.mark.parametrize(("change", "message"), [
    ({"maia-q-2": {"video": "bunny"}}, "item maia-q-2: video 'bunny' has no number"),
    ({"maia-q-3": {"category": "SpazialeTotale_A"}},
     "items maia-q-2 and maia-q-3 are both the SpazialeTotale_A question of video 'video3'"),
    ({"maia-q-4": {"video": "video3"}}, "item maia-q-4: another item's video of number 3 is a different file"),
    ({"maia-q-2": {"false_statements": None}}, "item maia-q-2 has true statements without their counterpart"),
])
@pytest.mark.parametrize("layout", [(), ("--layout", "mc")])
def test_a_version_the_release_cannot_hold_is_refused(library_videos, tmp_path, change, message, layout):
    payloads = {key: {**payload, **change.get(key, {})} for key, payload in PAYLOADS.items()}
    videos = {**library_videos, "bunny": library_videos["video3"]}
    if "maia-q-4" in change:  # video3's number, the bikes clip
        videos = {**videos, "video3-bikes": library_videos["video12"]}
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label="bad")
    for external_id, payload in payloads.items():
        item = BenchmarkItem.objects.create(version=version, external_id=external_id, payload=payload)
        key = "video3-bikes" if external_id == "maia-q-4" and "maia-q-4" in change else payload["video"]
        ItemMedia.objects.create(item=item, role="video", video=videos[key][0])
    out = tmp_path / "out"  # left unfrozen: freezing would refuse statements without their counterpart

    with pytest.raises(CommandError, match=message):
        call_command("export_benchmark", "maia", "--version", "bad", *layout, str(out))

    assert not out.exists()
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".out-")] == []


def test_an_unknown_layout_is_refused(library_videos, tmp_path):
    curated_version("curated-1", PAYLOADS, library_videos)
    with pytest.raises(CommandError, match="maia has no layout 'parquet'; its layouts: data, gen, mc, hf$"):
        call_command("export_benchmark", "maia", "--version", "curated-1", "--layout", "parquet", str(tmp_path / "o"))
    with pytest.raises(CommandError, match="cvrr has no layout 'mc'; its layouts: hf$"):
        call_command("export_benchmark", "cvrr", "--version", "x", "--layout", "mc", str(tmp_path / "o"))
    assert not (tmp_path / "o").exists()
