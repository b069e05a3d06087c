"""C-VQA-Synthetic made by `manage.py cvqa_make_synthetic`: the release's CSV layout and wording, byte-identical
output for a seed, balanced answer letters, and every answer recomputed here from `scenes.jsonl` with this
file's own geometry (winding numbers, distances to the sides), never with the generator's code."""

import csv
import hashlib
import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from PIL import Image

from tests.release_fixtures import run_import

HEADER = ["img_path", "query", "answer", "new query", "new answer", "type"]
LETTERS = "ABCD"
OPTIONS = re.compile(r"^(?P<question>.+\?) Select the correct answer:A:(\d+)  B:(\d+)  C:(\d+)  D:(\d+)$")
COLOR = r"(?P<color>[a-z]+)"
# (original, counterfactual) wording of each template, as in the authors' C-VQA-Synthetic_questions.csv
WORDING = {
    "abs_counting_1": (rf"How many flowers are outside the {COLOR} polygons\?",
                       rf"How many flowers would be outside the {COLOR} polygons if all polygons were "
                       r"(?P<all>[a-z]+)\?"),
    "abs_counting_2": (rf"How many flowers are inside the {COLOR} polygons\?",
                       rf"How many flowers would be inside {COLOR} polygons if we removed (?P<n>\d+) flowers in "
                       r"(?P<same>[a-z]+) polygons\?"),
    "abs_counting_3": (rf"How many flowers are inside the {COLOR} polygons\?",
                       rf"How many flowers would be inside {COLOR} polygons if all flowers in (?P<other>[a-z]+) "
                       r"polygons were removed\?"),
    "abs_counting_4": (r"How many dots are there in all the circles together\?",
                       r"How many dots would there be in all the circles together if (?P<n>\d+) dots were removed "
                       r"from the circles\?"),
    "abs_counting_5": (r"How many dots are there in the top three circles together\?",
                       r"How many dots would there be in the top three circles together if the two rightmost circles "
                       r"and dots in them were removed from the circles\?"),
    "abs_counting_6": (r"How many dots do a circle contain at most\?",
                       r"How many dots would a circle contain at most if one of the circles with most dots were "
                       r"removed\?"),
}
HEART, DOT = (250, 190, 40), (20, 20, 20)  # the colours a flower's heart and a dot are drawn in
OUTLINE = 3  # pixels a polygon's drawn side may cover beside its line (drawn 3 pixels wide)
SCENE_KEYS = ["img_path", "type", "width", "height", "polygons", "flowers", "circles"]


def make(out: Path, per_template: int, seed: int, command: str = "cvqa_make_synthetic") -> Path:
    call_command(command, "--per-template", str(per_template), "--seed", str(seed), "--out", str(out))
    return out / "C-VQA-Synthetic"


def read_set(folder: Path) -> tuple[list[dict], dict[str, dict]]:
    with (folder / "C-VQA-Synthetic_questions.csv").open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == HEADER
        rows = list(reader)
    scenes = [json.loads(line) for line in (folder / "scenes.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [scene["img_path"] for scene in scenes] == [row["img_path"] for row in rows]
    return rows, {scene["img_path"]: scene for scene in scenes}


@pytest.fixture(scope="module")
def large_set(tmp_path_factory):
    """600 items: 100 per template."""
    return read_set(make(tmp_path_factory.mktemp("synthetic"), 100, 2024))


# --- this file's own geometry ------------------------------------------------------------------------

def winding_number(x: float, y: float, points: list) -> int:
    """How many times the polygon winds around (x, y); non-zero means inside (the polygons do not cross themselves)."""
    winding = 0
    for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1], strict=True):
        side = (x2 - x1) * (y - y1) - (x - x1) * (y2 - y1)
        if y1 <= y < y2 and side > 0:
            winding += 1
        elif y2 <= y < y1 and side < 0:
            winding -= 1
    return winding


def distance_to_side(x: float, y: float, a, b) -> float:
    """Shortest distance from (x, y) to the side a–b: to the foot of the perpendicular when it falls on the
    side, else to the nearer end."""
    ax, ay, bx, by = *a, *b
    along = (x - ax) * (bx - ax) + (y - ay) * (by - ay)
    length2 = (bx - ax) ** 2 + (by - ay) ** 2
    if along <= 0 or length2 == 0:
        return math.hypot(x - ax, y - ay)
    if along >= length2:
        return math.hypot(x - bx, y - by)
    return abs((bx - ax) * (y - ay) - (by - ay) * (x - ax)) / math.sqrt(length2)


def sides_cross(p, q, r, s) -> bool:
    def turn(a, b, c):
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    return turn(p, q, r) * turn(p, q, s) < 0 and turn(r, s, p) * turn(r, s, q) < 0


def in_polygons(flower: dict, scene: dict) -> set[str]:
    return {polygon["color"] for polygon in scene["polygons"]
            if winding_number(flower["x"], flower["y"], polygon["points"]) != 0}


def check_scene(scene: dict) -> None:
    """What the scene promises: flowers (their disc and the drawn side's width) clear of every side, apart and
    in the picture; simple polygons; dots inside their circles."""
    width, height = scene["width"], scene["height"]
    for polygon in scene["polygons"]:
        points = polygon["points"]
        assert len(points) >= 3 and all(0 <= x <= width and 0 <= y <= height for x, y in points)
        sides = list(zip(points, points[1:] + points[:1], strict=True))
        apart = [(i, j) for i in range(len(sides)) for j in range(i + 2, len(sides))
                 if (i, j) != (0, len(sides) - 1)]
        assert not any(sides_cross(*sides[i], *sides[j]) for i, j in apart), scene["img_path"]
    for flower in scene["flowers"]:
        x, y, r = flower["x"], flower["y"], flower["r"]
        assert r > 0 and r <= x <= width - r and r <= y <= height - r
        for polygon in scene["polygons"]:
            points = polygon["points"]
            for a, b in zip(points, points[1:] + points[:1], strict=True):
                assert distance_to_side(x, y, a, b) > r + OUTLINE, (scene["img_path"], flower, polygon["color"])
    assert all(math.hypot(f["x"] - g["x"], f["y"] - g["y"]) >= f["r"] + g["r"]
               for i, f in enumerate(scene["flowers"]) for g in scene["flowers"][i + 1:])
    for circle in scene["circles"]:
        assert all(math.hypot(x - circle["x"], y - circle["y"]) < circle["r"] for x, y in circle["dots"])


def expected_answers(kind: str, scene: dict, original: re.Match, counterfactual: re.Match) -> tuple[int, int]:
    """(original, counterfactual) answer, worked out from the scene and the question's parameters."""
    inside = [in_polygons(flower, scene) for flower in scene["flowers"]]
    colors = {polygon["color"] for polygon in scene["polygons"]}
    circles = scene["circles"]
    dots = [len(circle["dots"]) for circle in circles]
    if kind == "abs_counting_1":
        color = original["color"]
        assert color in colors and counterfactual["color"] == counterfactual["all"] == color
        return sum(color not in found for found in inside), sum(not found for found in inside)
    if kind == "abs_counting_2":
        color = original["color"]
        assert color in colors and counterfactual["color"] == counterfactual["same"] == color
        count = sum(color in found for found in inside)
        removed = int(counterfactual["n"])
        assert 1 <= removed <= count
        return count, count - removed
    if kind == "abs_counting_3":
        color, other = original["color"], counterfactual["other"]
        assert {color, other} == colors and counterfactual["color"] == color
        return sum(color in found for found in inside), sum(color in found and other not in found for found in inside)
    if kind == "abs_counting_4":
        removed = int(counterfactual["n"])
        assert 1 <= removed <= sum(dots)
        return sum(dots), sum(dots) - removed
    if kind == "abs_counting_5":
        by_height = sorted(circles, key=lambda c: c["y"])
        assert by_height[2]["y"] < by_height[3]["y"]  # "the top three" is not a tie
        by_x = sorted(circles, key=lambda c: -c["x"])
        assert by_x[1]["x"] > by_x[2]["x"]  # nor "the two rightmost"
        left = sorted(by_x[2:], key=lambda c: c["y"])
        assert left[2]["y"] < left[3]["y"]
        return sum(len(c["dots"]) for c in by_height[:3]), sum(len(c["dots"]) for c in left[:3])
    most = max(dots)
    assert dots.count(most) == 1, "the circle with most dots is unique"
    return most, max(count for count in dots if count != most)


def check_row(row: dict, scene: dict) -> tuple[str, str]:
    kind = row["type"]
    assert scene["type"] == kind
    parsed = []
    for field, answer_field, wording in zip(("query", "new query"), ("answer", "new answer"), WORDING[kind],
                                            strict=True):
        options = OPTIONS.match(row[field])
        assert options, row[field]
        question = re.fullmatch(wording, options["question"])
        assert question, (kind, options["question"])
        values = [int(value) for value in options.groups()[1:]]
        assert len(set(values)) == 4 and min(values) >= 0
        assert row[answer_field] in LETTERS
        parsed.append((question, values[LETTERS.index(row[answer_field])]))
    (original, answer), (counterfactual, new_answer) = parsed
    assert (answer, new_answer) == expected_answers(kind, scene, original, counterfactual), row
    assert answer != new_answer
    return row["answer"], row["new answer"]


# --- the tests -----------------------------------------------------------------------------------------

def test_every_answer_follows_from_its_scene(large_set):
    rows, scenes = large_set
    assert len(rows) == 600
    assert Counter(row["type"] for row in rows) == {f"abs_counting_{n}": 100 for n in range(1, 7)}
    assert [row["img_path"] for row in rows] == [f"abs_counting_{n:06d}.png" for n in range(1, 601)]
    for row in rows:
        scene = scenes[row["img_path"]]
        assert list(scene) == SCENE_KEYS and (scene["width"], scene["height"]) == (512, 512)
        flowers = row["type"] in ("abs_counting_1", "abs_counting_2", "abs_counting_3")
        if flowers:
            assert len(scene["polygons"]) == 2 and scene["flowers"] and scene["circles"] == []
            assert len({polygon["color"] for polygon in scene["polygons"]}) == 2
        else:
            assert len(scene["circles"]) == 6 and scene["polygons"] == [] == scene["flowers"]
        check_scene(scene)
        check_row(row, scene)


def test_the_correct_letters_are_balanced(large_set):
    rows, _ = large_set
    for field in ("answer", "new answer"):
        shares = Counter(row[field] for row in rows)
        assert all(abs(shares[letter] / len(rows) - 0.25) <= 0.05 for letter in LETTERS), (field, shares)
    both = Counter(row[field] for row in rows for field in ("answer", "new answer"))
    assert all(abs(both[letter] / (2 * len(rows)) - 0.25) <= 0.05 for letter in LETTERS), both


def test_the_four_flower_regions_are_all_used(large_set):
    """Both polygons overlap and every region (inside both, one, neither) holds flowers in every scene."""
    rows, scenes = large_set
    for row in rows[:300]:
        scene = scenes[row["img_path"]]
        regions = {frozenset(in_polygons(flower, scene)) for flower in scene["flowers"]}
        assert len(regions) == 4, row["img_path"]


def test_the_pictures_show_their_scenes(tmp_path):
    """A flower's heart is drawn at its centre and every dot at its place; no pixel of a polygon's side (its colour
    read at a corner) lies on a flower; no text chunk or timestamp."""
    folder = make(tmp_path, 2, 2024)
    rows, scenes = read_set(folder)
    for row in rows:
        scene = scenes[row["img_path"]]
        with Image.open(folder / row["img_path"]) as picture:
            assert picture.format == "PNG" and picture.size == (scene["width"], scene["height"])
            assert not set(picture.info) - {"dpi", "gamma", "srgb"}
            pixels = picture.convert("RGB").load()
            assert all(pixels[f["x"], f["y"]] == HEART for f in scene["flowers"])
            sides = {pixels[tuple(polygon["points"][0])] for polygon in scene["polygons"]}
            for f in scene["flowers"]:
                disc = [(f["x"] + dx, f["y"] + dy) for dx in range(-f["r"], f["r"] + 1)
                        for dy in range(-f["r"], f["r"] + 1) if dx * dx + dy * dy <= f["r"] ** 2]
                assert not sides & {pixels[point] for point in disc}, (row["img_path"], f)
            assert all(pixels[x, y] == DOT for circle in scene["circles"] for x, y in circle["dots"])


def test_the_same_seed_writes_the_same_bytes(tmp_path):
    first, other = make(tmp_path / "a", 2, 5), make(tmp_path / "c", 2, 6)
    second = make(tmp_path / "b", 2, 5, command="make_cvqa_synthetic")  # the command's old name, an alias

    def files(folder):
        return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}

    assert files(first) == files(second)
    assert sorted(files(first)) == sorted(["C-VQA-Synthetic_questions.csv", "scenes.jsonl",
                                           *(f"abs_counting_{n:06d}.png" for n in range(1, 13))])
    assert files(first)["scenes.jsonl"] != files(other)["scenes.jsonl"]
    # a larger set made with the same seed starts with the same scenes, template by template
    larger = read_set(make(tmp_path / "d", 3, 5))[1]
    smaller = read_set(first)[1]
    strip = [{key: value for key, value in scene.items() if key != "img_path"} for scene in smaller.values()]
    kept = [{key: value for key, value in scene.items() if key != "img_path"} for scene in larger.values()]
    assert strip == [scene for index, scene in enumerate(kept) if index % 3 != 2]


def test_bad_requests_are_refused_and_write_nothing(tmp_path):
    with pytest.raises(CommandError, match="--per-template must be between 1"):
        make(tmp_path / "zero", 0, 1)
    assert not (tmp_path / "zero").exists()
    taken = make(tmp_path / "taken", 1, 1)
    before = sorted(path.name for path in taken.iterdir())
    with pytest.raises(CommandError, match="already exists"):
        make(tmp_path / "taken", 1, 2)
    assert sorted(path.name for path in taken.iterdir()) == before
    assert sorted(path.name for path in (tmp_path / "taken").iterdir()) == ["C-VQA-Synthetic"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(CommandError, match="is not a folder"):
        make(tmp_path / "file", 1, 1)


@pytest.mark.django_db
def test_the_set_imports_as_a_c_vqa_release(tmp_path, media_root):
    folder = make(tmp_path / "release", 2, 11)
    rows, _ = read_set(folder)
    version = run_import("cvqa", tmp_path / "release", "synthetic")

    assert version.frozen and version.item_count == 12
    items = {item.payload["img_path"]: item for item in version.items.prefetch_related("media__image")}
    assert sorted(items) == [row["img_path"] for row in rows]
    for row in rows:
        payload = items[row["img_path"]].payload
        assert payload["kind"] == "synthetic"
        assert [payload[key] for key in ("query", "answer", "new_query", "new_answer", "type")] == [
            row["query"], row["answer"], row["new query"], row["new answer"], row["type"]]
        image = items[row["img_path"]].media.get().image
        assert image.checksum == hashlib.sha256((folder / row["img_path"]).read_bytes()).hexdigest()
