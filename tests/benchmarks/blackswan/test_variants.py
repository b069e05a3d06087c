"""BlackSwanSuite task variants from annotated videos (annotation.benchmarks.blackswan.variants and .versions).

Records are written by hand; each test works out from them which MCQs and Y/N rows must come out, with
which answers, distractors and labels. Fallback distractors run through `generation.proposals` on a
scripted backend whose replies the tests choose.
"""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.benchmarks.blackswan import splits, staged, variants, versions
from annotation.crowd import assignment, review
from annotation.crowd.models import Submission
from annotation.models import BenchmarkVersion
from config.roles import ANNOTATOR
from evaluation.benchmarks.base import RequestOptions
from evaluation.benchmarks.blackswan import benchmark as blackswan
from generation import proposals
from generation.backends import registry
from generation.backends.base import ChatResult, VideoPart
from generation.models import Job, Proposal
from tests.conftest import ingest_path, make_user
from tests.generation.test_splitting import make_stamped_clip
from tests.release_fixtures import place

pytestmark = pytest.mark.django_db

SPLIT = {"preevent": 0.2, "event": 1.0, "postevent": 1.8}  # the sample clips last 2.4 s
YES, NO = "yes", "no"


def record(video_id: str, step2: list, step3: list, **extra) -> dict:
    """A record: forecasts "<id> forecast i"; the Detective keeps a validated forecast and writes
    "<id> new i" for an invalidated one; the Reporter's caption is "<id> caption"."""
    forecasts = [f"{video_id} forecast {i}" for i in range(3)]
    detective = [forecast if mark == YES else f"{video_id} new {i}"
                 for i, (forecast, mark) in enumerate(zip(forecasts, step2, strict=True))]
    return {"id": video_id, **SPLIT, "task1_gt": forecasts, "task2_checkboxes": list(step2), "task2_gt": detective,
            "task3_checkboxes": list(step3), "task3_gt": f"{video_id} caption", **extra}


VALID = record("valid", [YES, YES, YES], [YES, NO, NO])  # every forecast validated in step 2
INVALID = record("invalid", [NO, NO, NO], [NO, NO, NO])  # every forecast invalidated; hard (step 3 all no)
MIXED = record("mixed", [YES, NO, NO], [NO, YES, NO])
ONE_SHORT = record("short", [YES, YES, NO], [YES, NO, NO], preevent_caption="A man stands by a red door.")


@pytest.fixture
def videos(media, curator):
    """Four distinct real 2.4 s clips in the library, one per record above."""
    return {name: ingest_path(media.clip(n), user=curator)
            for n, name in enumerate(("valid", "invalid", "mixed", "short"))}


def pairs(videos, *records):
    return [(r, videos[r["id"]]) for r in records]


def build(videos, *records, seed=0, rules="paper"):
    return variants.build_variants(pairs(videos, *records), seed=seed, mcq_rules=rules)


def rows(result, kind):
    return [item for item in result.items if item["payload"]["kind"] == kind]


def mcqs_of(result, video_id, task):
    return [item["payload"] for item in rows(result, "mcq")
            if item["payload"]["id"] == video_id and item["payload"]["mcq_task"] == task]


def answer_and_distractors(payload):
    options = payload["mcq_options"]
    return options[payload["mcq_label"]], set(options) - {options[payload["mcq_label"]]}


# --- The variants ----------------------------------------------------------------------------------

def test_mcq_and_yes_no_rows_for_valid_invalid_and_mixed_forecasts(videos):
    result = build(videos, VALID, INVALID, MIXED)

    assert result.problems == []
    counts = result.counts()
    # Detective MCQs, one per Detective hypothesis: "valid" has no invalidated forecast to use as a
    # distractor, so its 3 wait for fallback distractors; "invalid" and "mixed" have 3 each.
    # Reporter MCQs, the caption plus each hypothesis validated in step 3: 2 + 1 + 2.
    # Y/N: 3 forecasts and 3 Detective hypotheses per video.
    assert counts["variants"] == {"forecaster_gen": 3, "detective_gen": 3, "reporter_gen": 3, "detective_mcq": 6,
                                  "reporter_mcq": 5, "detective_yn": 9, "reporter_yn": 5}
    assert counts["pending"] == {"detective_mcq": 3, "reporter_mcq": 0}
    assert counts["hard"] == {"videos": 1, "detective_mcq": 3, "reporter_mcq": 1}
    assert result.hard_videos == ["invalid"]

    # "valid": the Reporter's caption and the forecast validated in step 3 are right; the other two wrong
    assert [answer_and_distractors(p) for p in mcqs_of(result, "valid", 2)] == [
        ("valid caption", {"valid forecast 1", "valid forecast 2"}),
        ("valid forecast 0", {"valid forecast 1", "valid forecast 2"})]
    assert [(p["task"], p["answer"], p["lacking"], p["fallback_state"]) for p in result.pending] == [
        ("detective", f"valid forecast {i}", 2, variants.CAPTION_NEEDED) for i in range(3)]

    # "invalid": the new hypotheses are right, two of the three forecasts are drawn as distractors
    detective = [answer_and_distractors(p) for p in mcqs_of(result, "invalid", 1)]
    assert [answer for answer, _ in detective] == ["invalid new 0", "invalid new 1", "invalid new 2"]
    for _, distractors in detective:
        assert len(distractors) == 2 and distractors < {f"invalid forecast {i}" for i in range(3)}
    (reporter,) = [answer_and_distractors(p) for p in mcqs_of(result, "invalid", 2)]
    assert reporter[0] == "invalid caption" and reporter[1] < {f"invalid new {i}" for i in range(3)}

    # "mixed": Detective hypotheses forecast 0, new 1, new 2; forecasts 1 and 2 were invalidated in step 2;
    # step 3 validated only new 1
    assert [answer_and_distractors(p) for p in mcqs_of(result, "mixed", 1)] == [
        ("mixed forecast 0", {"mixed forecast 1", "mixed forecast 2"}),
        ("mixed new 1", {"mixed forecast 1", "mixed forecast 2"}),
        ("mixed new 2", {"mixed forecast 1", "mixed forecast 2"})]
    assert [answer_and_distractors(p) for p in mcqs_of(result, "mixed", 2)] == [
        ("mixed caption", {"mixed forecast 0", "mixed new 2"}),
        ("mixed new 1", {"mixed forecast 0", "mixed new 2"})]

    yes_no = [(p["id"], p["def_task"], p["exp"], p["def_label"]) for p in (i["payload"] for i in rows(result, "yn"))]
    assert yes_no == [
        ("valid", 1, "valid forecast 0", YES), ("valid", 1, "valid forecast 1", YES),
        ("valid", 1, "valid forecast 2", YES),
        ("invalid", 1, "invalid forecast 0", NO), ("invalid", 1, "invalid forecast 1", NO),
        ("invalid", 1, "invalid forecast 2", NO),
        ("invalid", 2, "invalid new 0", NO), ("invalid", 2, "invalid new 1", NO), ("invalid", 2, "invalid new 2", NO),
        ("mixed", 1, "mixed forecast 0", YES), ("mixed", 1, "mixed forecast 1", NO),
        ("mixed", 1, "mixed forecast 2", NO),
        ("mixed", 2, "mixed new 1", YES), ("mixed", 2, "mixed new 2", NO)]

    # ids as the importer numbers mcq.json / yn.json rows: across the version, in row order
    assert [i["external_id"] for i in rows(result, "mcq")] == (
        ["valid:mcq:0", "valid:mcq:1"] + [f"invalid:mcq:{n}" for n in range(2, 6)]
        + [f"mixed:mcq:{n}" for n in range(6, 11)])
    assert [i["external_id"] for i in rows(result, "yn")][::6] == ["valid:yn:0", "invalid:yn:6", "mixed:yn:12"]
    assert all(i["media"] == {"video": videos[i["payload"]["id"]].pk} for i in result.items)


def test_the_seeded_draw_and_shuffle_are_reproducible_and_recorded(videos):
    first = build(videos, INVALID, MIXED, seed=7)
    again = build(videos, INVALID, MIXED, seed=7)
    other = build(videos, INVALID, MIXED, seed=8)

    assert first.as_preview() == again.as_preview()
    mcqs = [item["payload"] for item in rows(first, "mcq")]
    assert [p["mcq_options"] for p in mcqs] != [p["mcq_options"] for p in (i["payload"] for i in rows(other, "mcq"))]
    assert len({p["mcq_label"] for p in mcqs}) > 1  # the correct option does not always come first
    for payload in mcqs:
        built_by = payload["source"]["built_by"]
        assert built_by["seed"] == 7 and sorted(built_by["order"]) == [0, 1, 2]
        assert payload["mcq_label"] == built_by["order"].index(0)
        assert built_by["options"][payload["mcq_label"]] == {"from": built_by["answer_from"]}
        source = INVALID if payload["id"] == "invalid" else MIXED
        for option, origin in zip(payload["mcq_options"], built_by["options"], strict=True):
            name, index = origin["from"].rstrip("]").split("[") if "[" in origin["from"] else (origin["from"], None)
            value = source[name] if index is None else source[name][int(index)]
            assert option == value
        assert payload["source"]["record"] == {key: payload[key] for key in ("id", "mcq_task", "mcq_options",
                                                                             "mcq_label")}


def test_record_problems_are_listed_and_nothing_is_built_from_those_records(videos):
    broken = record("mixed", [YES, NO, NO], [NO, YES, NO])
    broken["task2_gt"][1] = ""  # forecast 1 invalidated without a new hypothesis
    late = dict(INVALID, postevent=3.0)  # after the end of the 2.4 s clip
    marks = dict(VALID, task3_checkboxes=["yes", "maybe", "no"])
    result = variants.build_variants(pairs(videos, broken, late, marks) + [(dict(INVALID), videos["invalid"])],
                                     origins=["r.json[0]", "r.json[1]", "r.json[2]", "r.json[3]"])

    assert result.problems == [
        "r.json[0] (video mixed): forecast 1 was invalidated in step 2 but 'task2_gt[1]' holds no new hypothesis",
        "r.json[1] (video invalid): postevent 3.0 s is not before the end of the video (2.4 s)",
        "r.json[2] (video valid): 'task3_checkboxes' must hold yes/no marks (entry 1 is 'maybe')",
    ]
    assert {item["payload"]["id"] for item in result.items} == {"invalid"}
    with pytest.raises(variants.VariantsError, match="3 problem"):
        versions.freeze_variants(result.as_preview(), "broken")
    assert not BenchmarkVersion.objects.filter(label="broken").exists()


# --- Fallback distractors -------------------------------------------------------------------------

class ScriptedBackend:
    """Answers a caption request (one with video frames) with CAPTION and a rewrite request with
    REWRITES[the caption it rewrites]; records every request."""

    name = "scripted"
    CAPTION = ""
    REWRITES: dict = {}
    calls: list = []

    def __init__(self, model_id: str, revision: str = "", **options):
        self.model_id, self.revision = model_id, revision or "scripted-rev"

    def generate(self, requests):
        type(self).calls.extend(requests)
        results = []
        for request in requests:
            parts = request.messages[-1].parts
            if any(isinstance(part, VideoPart) for part in parts):
                results.append(ChatResult(texts=[type(self).CAPTION], latency_s=0.01))
                continue
            prompt = parts[-1].text
            (reply,) = [reply for caption, reply in type(self).REWRITES.items() if caption in prompt]
            results.append(ChatResult(texts=[json.dumps([{"distractor": d} for d in reply])], latency_s=0.01))
        return results


@pytest.fixture
def scripted(monkeypatch):
    monkeypatch.setitem(registry.LOADERS, "scripted", ("tests.benchmarks.blackswan.test_variants", "ScriptedBackend"))
    monkeypatch.setattr(ScriptedBackend, "calls", [])
    monkeypatch.setattr(ScriptedBackend, "REWRITES", {})
    return ScriptedBackend


MODEL = {"backend": "scripted", "model_id": "scripted/model", "params": {"max_new_tokens": 32}}


def ask(result, capture):
    with capture(execute=True):
        return variants.request_fallbacks(result, caption_model=MODEL, rewrite_model=MODEL)


def states(result) -> dict:
    return {f.video.video_id: (f.state, f.needed, len(f.distractors)) for f in result.fallbacks}


def test_fallback_distractors_are_asked_for_exactly_where_missing_and_used_only_once_decided(
        videos, scripted, curator, django_capture_on_commit_callbacks):
    scripted.CAPTION = "A cyclist rides along a path."
    scripted.REWRITES = {"A man stands by a red door.": ["A man waits next to a red door."],
                         "A cyclist rides along a path.": ["The cyclist rides down the path.",
                                                           "A cyclist pedals along the trail."]}
    records = (VALID, MIXED, ONE_SHORT)
    # "valid": no invalidated forecast → each Detective MCQ lacks 2; "mixed" lacks none; "short": one
    # invalidated forecast → its 3 Detective MCQs lack 1 each (its Reporter MCQs have forecast 1 and new 2)
    first = build(videos, *records)
    assert states(first) == {"valid": (variants.CAPTION_NEEDED, 2, 0), "short": (variants.REWRITE_NEEDED, 1, 0)}
    assert [(p["video_id"], p["lacking"]) for p in first.pending] == [("valid", 2)] * 3 + [("short", 1)] * 3

    made = ask(first, django_capture_on_commit_callbacks)
    assert (made["captions"], made["rewrites"]) == (["valid"], ["short"])
    (caption,) = Proposal.objects.filter(task_kind=variants.PRE_CAPTION_KIND)
    assert caption.source_key == "blackswan:valid:pre_caption"
    assert caption.inputs["media"]["segment"] == [0.2, 1.0]  # V_pre
    assert caption.inputs["media"]["checksum"] == videos["valid"].checksum
    assert caption.status == "ok" and caption.fields == {"caption": "A cyclist rides along a path."}
    (rewrite,) = Proposal.objects.filter(task_kind=variants.REWRITE_KIND)
    assert rewrite.inputs["caption"] == "A man stands by a red door." and rewrite.inputs["count"] == 1
    assert "short forecast 0" in rewrite.inputs["examples"]
    assert rewrite.fields == {"distractor": "A man waits next to a red door."} and rewrite.model_id == "scripted/model"
    assert len(scripted.calls) == 2

    # generated but undecided: still pending, and nothing is asked again
    waiting = build(videos, *records)
    assert states(waiting) == {"valid": (variants.CAPTION_WAITING, 2, 0), "short": (variants.REWRITE_WAITING, 1, 0)}
    assert len(waiting.pending) == 6
    assert ask(waiting, django_capture_on_commit_callbacks)["jobs"] == []
    assert len(scripted.calls) == 2

    proposals.decide(caption, curator, "accept")
    proposals.decide(rewrite, curator, "accept")
    decided = build(videos, *records)
    assert states(decided) == {"valid": (variants.REWRITE_NEEDED, 2, 0), "short": (variants.READY, 1, 1)}
    assert [p["video_id"] for p in decided.pending] == ["valid"] * 3
    for payload in mcqs_of(decided, "short", 1):
        answer, distractors = answer_and_distractors(payload)
        assert distractors == {"short forecast 2", "A man waits next to a red door."}
        (fallback,) = [o for o in payload["source"]["built_by"]["options"] if o["from"] == "fallback"]
        assert (fallback["proposal_id"], fallback["model_id"], fallback["decided_by"]) == (rewrite.pk,
                                                                                          "scripted/model", "cur")
        assert fallback["caption_from"] == {"from": "preevent_caption"}

    made = ask(decided, django_capture_on_commit_callbacks)
    assert (made["captions"], made["rewrites"]) == ([], ["valid"])
    first_rewrite, second_rewrite = Proposal.objects.filter(task_kind=variants.REWRITE_KIND,
                                                            source_key="blackswan:valid:distractor").order_by("pk")
    assert first_rewrite.inputs["count"] == 2 and first_rewrite.inputs["caption"] == "A cyclist rides along a path."

    proposals.decide(first_rewrite, curator, "accept")
    proposals.decide(second_rewrite, curator, "reject", reason="it says where the cyclist goes")
    short_one = build(videos, *records)
    assert states(short_one)["valid"] == (variants.REWRITE_NEEDED, 2, 1)
    assert [p["video_id"] for p in short_one.pending] == ["valid"] * 3
    (lacking,) = [f for f in short_one.fallbacks if f.video.video_id == "valid"]
    assert lacking.rewrite_inputs()["count"] == 1  # one more is asked for, not two

    proposals.decide(second_rewrite, curator, "correct", fields={"distractor": "A cyclist rides on a trail."})
    ready = build(videos, *records)
    assert ready.pending == [] and states(ready)["valid"] == (variants.READY, 2, 2)
    for payload in mcqs_of(ready, "valid", 1):
        assert answer_and_distractors(payload)[1] == {"The cyclist rides down the path.", "A cyclist rides on a trail."}
        origins = payload["source"]["built_by"]["options"]
        assert {o["caption_from"]["proposal_id"] for o in origins if o["from"] == "fallback"} == {caption.pk}
    # records that lack nothing never got a proposal
    assert not Proposal.objects.filter(source_key__startswith="blackswan:mixed:").exists()


# --- The authors' MCQ construction (release rules) --------------------------------------------------

PRE = "A man stands by a red door."
# forecasts 0 and 2 validated with an empty task2_gt: the Reporter's hypotheses fall back to task1_gt there
EMPTY_NEW = dict(record("empty", [YES, NO, YES], [NO, YES, YES], preevent_caption=PRE),
                 task2_gt=["", "empty new 1", ""])


def mcq_set(result, video_id, task):
    return sorted((answer, tuple(sorted(distractors)))
                  for answer, distractors in map(answer_and_distractors, mcqs_of(result, video_id, task)))


def test_release_rules_give_the_authors_mcqs_counted_by_hand(videos):
    records = [VALID, INVALID, MIXED, ONE_SHORT, EMPTY_NEW, dict(INVALID, id="multi", multivideo="yes"),
               dict(MIXED, id="multi-bool", multivideo=True), dict(MIXED, id="single", multivideo="no")]
    found = [(r, videos[{"empty": "valid", "multi": "invalid", "multi-bool": "mixed", "single": "mixed"}.get(
        r["id"], r["id"])]) for r in records]
    result = variants.build_variants(found, seed=4)  # release rules by default

    assert result.problems == [] and result.pending == [] and result.mcq_rules == "release"
    assert [(s["video_id"], s["reason"]) for s in result.skipped] == [("multi", "multivideo"),
                                                                       ("multi-bool", "multivideo")]
    assert "multi" not in {item["payload"]["id"] for item in result.items}
    # Detective MCQs = |W| x |distractor sets|: valid 0 (no MCQ at all), invalid 3 x 3, mixed 2 x 1, short 1 x 1,
    # empty 1 x 1, single (as mixed) 2. Reporter MCQs = distractor sets of the step-3 invalidated hypotheses:
    # valid 0 (no Detective W), invalid 3, mixed 1, short 1, empty 1, single 1.
    counts = result.counts()
    assert counts["variants"]["detective_mcq"] == 0 + 9 + 2 + 1 + 1 + 2
    assert counts["variants"]["reporter_mcq"] == 0 + 3 + 1 + 1 + 1 + 1
    assert counts["skipped"] == 2 and result.as_preview()["mcq_rules"] == "release"

    assert mcqs_of(result, "valid", 1) == [] and mcqs_of(result, "valid", 2) == []
    forecasts = [f"invalid forecast {i}" for i in range(3)]
    pairs_of = [(forecasts[a], forecasts[b]) for a, b in ((0, 1), (0, 2), (1, 2))]
    assert mcq_set(result, "invalid", 1) == sorted((f"invalid new {i}", pair) for i in range(3) for pair in pairs_of)
    news = [f"invalid new {i}" for i in range(3)]
    assert mcq_set(result, "invalid", 2) == sorted(
        ("invalid caption", (news[a], news[b])) for a, b in ((0, 1), (0, 2), (1, 2)))
    assert mcq_set(result, "mixed", 1) == [("mixed new 1", ("mixed forecast 1", "mixed forecast 2")),
                                           ("mixed new 2", ("mixed forecast 1", "mixed forecast 2"))]
    assert mcq_set(result, "mixed", 2) == [("mixed caption", ("mixed forecast 0", "mixed new 2"))]
    assert mcq_set(result, "short", 1) == [("short new 2", (PRE, "short forecast 2"))]
    assert mcq_set(result, "short", 2) == [("short caption", ("short forecast 1", "short new 2"))]
    assert mcq_set(result, "empty", 1) == [("empty new 1", (PRE, "empty forecast 1"))]
    assert mcq_set(result, "empty", 2) == [("empty caption", (PRE, "empty forecast 0"))]

    for item in rows(result, "mcq"):
        built_by = item["payload"]["source"]["built_by"]
        assert built_by["mcq_rules"] == "release" and built_by["seed"] == 4
        assert [built_by["options"][i]["from"] for i in range(3)].count(built_by["answer_from"]) == 1
    paper = build(videos, VALID, INVALID, MIXED, ONE_SHORT)  # one question per Detective hypothesis
    assert paper.mcq_rules == "paper" and paper.counts()["variants"]["detective_mcq"] == 3 + 3  # valid, short wait
    with pytest.raises(variants.VariantsError, match="Unknown MCQ rule set 'mine'; choose one of release, paper"):
        variants.build_variants([], mcq_rules="mine")


def test_built_options_are_frozen_in_their_order_and_shown_as_stored(videos, curator):
    job = versions.start_build(pairs(videos, INVALID, MIXED), seed=2, user=curator, here=True)
    version = versions.freeze_variants(job, "release-built", curator)
    assert "MCQ rules release" in version.description
    mcq_items = list(version.items.filter(payload__kind="mcq"))
    assert len(mcq_items) == 9 + 3 + 2 + 1
    orders = set()
    for item in mcq_items:
        payload = item.payload
        (request,) = blackswan.BENCHMARK.requests(item, RequestOptions(seed=17))
        assert request.options == dict(zip("ABC", payload["mcq_options"], strict=True))
        assert request.gold == "ABC"[payload["mcq_label"]]
        orders.add(tuple(payload["source"]["built_by"]["order"]))
    assert len(orders) > 1  # shuffled once when built, then fixed


# --- Preview and freeze ----------------------------------------------------------------------------

def test_preview_job_then_freeze(videos, curator):
    job = versions.start_build(pairs(videos, VALID, INVALID, MIXED), seed=3, user=curator, here=True,
                               mcq_rules="paper")

    assert job.status == Job.Status.SUCCEEDED and job.kind == "blackswan_build_variants"
    assert job.result["counts"] == build(videos, VALID, INVALID, MIXED, seed=3).counts()
    assert job.message == ("3 videos (1 hard): 28 items (6 detective_mcq, 5 reporter_mcq, 9 detective_yn, "
                           "5 reporter_yn); 3 MCQs pending; 0 problems")
    with pytest.raises(variants.VariantsError, match="3 MCQ\\(s\\) still wait for fallback distractors"):
        versions.freeze_variants(job, "v1", curator)
    assert not BenchmarkVersion.objects.filter(benchmark__slug="blackswan").exists()

    version = versions.freeze_variants(job, "v1", curator, skip_pending=True)
    assert version.frozen and version.item_count == 28 and version.source == BenchmarkVersion.Source.CURATION
    assert version.created_by == curator and "3 MCQs waiting for distractors left out" in version.description
    frozen = {item.external_id: item for item in version.items.prefetch_related("media")}
    assert {i["external_id"]: i["payload"] for i in job.result["items"]} == {k: v.payload for k, v in frozen.items()}
    assert all(item.media.get().role == "video" for item in frozen.values())

    with pytest.raises(variants.VariantsError, match="already has a version 'v1'"):
        versions.freeze_variants(job, "v1", curator, skip_pending=True)
    other = versions.start_build(pairs(videos, MIXED), here=True, mcq_rules="paper")
    with pytest.raises(variants.VariantsError, match="is a probe_video job"):
        versions.freeze_variants(Job.objects.create(kind="probe_video"), "v2")
    assert versions.freeze_variants(other, "v2").item_count == 1 + 5 + 3 + 2  # the video, 5 MCQs, 3 + 2 Y/N


def test_frozen_items_have_the_importer_shapes(videos, curator, tmp_path):
    """Freeze, export in the release layout, import that release: the same items, ids and requests."""
    built = versions.freeze_variants(versions.start_build(pairs(videos, INVALID, MIXED), here=True,
                                                          mcq_rules="paper"), "built")
    call_command("export_benchmark", "blackswan", "--version", "built", str(tmp_path / "release"))
    exported = sorted(p.name for p in (tmp_path / "release").iterdir())
    assert exported == ["VAR_Data.json", "mcq.json", "videos", "yn.json"]
    call_command("import_benchmark", "blackswan", str(tmp_path / "release"), "--version", "imported")
    imported = BenchmarkVersion.objects.get(label="imported")

    def described(version):
        return {item.external_id: (item.payload["kind"], sorted(item.payload), {k: v for k, v in item.payload.items()
                                                                               if k != "source"},
                                   [(m.role, m.video_id) for m in item.media.all()])
                for item in version.items.prefetch_related("media")}

    ours, theirs = described(built), described(imported)
    assert len(ours) == 2 + 9 + 11 and ours == theirs  # kinds, keys, fields and the same library videos
    for item in built.items.all():
        twin = imported.items.get(external_id=item.external_id)
        for mine, other in zip(blackswan.BENCHMARK.requests(item, RequestOptions(seed=5)),
                               blackswan.BENCHMARK.requests(twin, RequestOptions(seed=5)), strict=True):
            assert (mine.request_id, mine.prompt, mine.gold, mine.options, mine.extra["hard"]) == (
                other.request_id, other.prompt, other.gold, other.options, other.extra["hard"])
    hard = [r for i in built.items.filter(payload__kind="mcq")
            for r in blackswan.BENCHMARK.requests(i, RequestOptions()) if r.extra["hard"]]
    assert len(hard) == 4  # "invalid": 3 Detective and 1 Reporter MCQ


# --- The command ----------------------------------------------------------------------------------

def test_command_previews_then_freezes(media, tmp_path, curator):
    folder = tmp_path / "videos"
    for n, name in enumerate(("valid", "invalid", "mixed")):
        place(media.clip(n), folder / f"{name}.mp4")
    records = tmp_path / "records.json"
    records.write_text(json.dumps([INVALID, MIXED]))

    call_command("blackswan_build_version", "--records", str(records), "--videos", str(folder), "--preview")
    assert not BenchmarkVersion.objects.exists()

    call_command("blackswan_build_version", "--records", str(records), "--videos", str(folder), "--label", "cli",
                 "--user", "cur", "--mcq-rules", "paper")
    version = BenchmarkVersion.objects.get(label="cli")
    assert version.item_count == 2 + 9 + 11 and version.created_by == curator

    records.write_text(json.dumps([VALID]))
    with pytest.raises(CommandError, match="Nothing was frozen: 3 MCQ"):
        call_command("blackswan_build_version", "--records", str(records), "--videos", str(folder), "--label", "x",
                     "--mcq-rules", "paper")
    records.write_text(json.dumps([dict(VALID, id="elsewhere")]))
    with pytest.raises(CommandError, match="no video elsewhere"):
        call_command("blackswan_build_version", "--records", str(records), "--videos", str(folder), "--preview")


# --- From a staged-reveal study -------------------------------------------------------------------

@pytest.fixture
def staged_claim(curator, tmp_path, bigbuckbunny, django_capture_on_commit_callbacks):
    """A real split of 4 s of Big Buck Bunny, a staged study over it, one worker through the three steps:
    (the study, the finished claim, the library video)."""
    video = ingest_path(make_stamped_clip(bigbuckbunny, tmp_path / "bunny.mp4"), user=curator)
    with django_capture_on_commit_callbacks(execute=True):
        split = splits.split_library_video(video, 1.2, 2.4, curator)
    split.refresh_from_db()
    assert split.status == "done", split.message
    study = staged.create_staged_study([split], "Variants", curator, open_now=True, expert_first=0, expert_share=0)
    worker = make_user("wanda", ANNOTATOR)
    claim = assignment.claim_next(study, worker)
    answers = {staged.FORECASTER: {"scenarios": ["The rabbit keeps sleeping.", "The rabbit wakes up.",
                                                 "A bird lands on the rabbit."]},
               staged.DETECTIVE: {"forecast_valid": [NO, YES, NO],
                                  "new_hypotheses": ["The rabbit stretches.", "", "The rabbit yawns widely."]},
               staged.REPORTER: {"hypothesis_valid": [NO, YES, NO],
                                 "caption": "The rabbit wakes up, yawns and leaves its burrow."}}
    for step in staged.STEPS:
        staged.submit_step(claim, worker, step, answers[step])
    return study, claim, video


def test_a_staged_study_gives_the_records(staged_claim, capsys):
    study, claim, video = staged_claim
    found, origins = versions.staged_pairs(study.slug)

    ((staged_record, staged_video),) = found
    assert staged_video == video and origins == [f"study {study.slug}, claim {claim.pk}"]
    assert staged_record["task2_gt"] == ["The rabbit stretches.", "The rabbit wakes up.", "The rabbit yawns widely."]
    result = variants.build_variants(found, mcq_rules="paper")
    # Detective: 3 MCQs, forecasts 0 and 2 invalidated as distractors; Reporter: the caption and "wakes up",
    # with "stretches" and "yawns" as distractors
    assert result.problems == [] and result.pending == []
    assert result.counts()["variants"] == {"forecaster_gen": 1, "detective_gen": 1, "reporter_gen": 1,
                                           "detective_mcq": 3, "reporter_mcq": 2, "detective_yn": 3,
                                           "reporter_yn": 2}
    assert [answer_and_distractors(p) for p in mcqs_of(result, staged_record["id"], 2)] == [
        ("The rabbit wakes up, yawns and leaves its burrow.", {"The rabbit stretches.", "The rabbit yawns widely."}),
        ("The rabbit wakes up.", {"The rabbit stretches.", "The rabbit yawns widely."})]

    call_command("blackswan_build_version", "--study", study.slug, "--label", "staged")  # release rules by default
    staged_version = BenchmarkVersion.objects.get(label="staged")
    # the video, 2 Detective MCQs (forecasts 0 and 2 invalidated: one distractor set, one MCQ per new hypothesis)
    # and 1 Reporter MCQ (the caption against "stretches" and "yawns"), 3 + 2 Y/N
    assert staged_version.item_count == 1 + 3 + 3 + 2 and "MCQ rules release" in staged_version.description
    assert "detective_mcq   2" in capsys.readouterr().out
    with pytest.raises(CommandError, match="There is no study 'nope'"):
        call_command("build_blackswan_version", "--study", "nope", "--preview")  # the old name: an alias


def test_a_staged_claim_rejected_after_the_preview_is_not_frozen(staged_claim, curator):
    """The preview is built from the finished claim; a reviewer then rejects the claim: freezing the preview is
    refused, naming the video's items and the rejection, and no version is made."""
    study, claim, _video = staged_claim
    pairs_found, origins = versions.staged_pairs(study.slug)
    job = versions.start_build(pairs_found, origins=origins, here=True)
    review.reject(Submission.objects.get(claim=claim), curator, reason="The forecasts describe another video.")

    with pytest.raises(variants.VariantsError) as refused:
        versions.freeze_variants(job, "staged", curator)

    message = str(refused.value)
    video_id = claim.item.external_id
    assert message.startswith("Nothing was frozen: ")
    assert (f"item {video_id!r} was turned down by people: rejected in the review of claim #{claim.pk} by cur on "
            in message)
    assert f"item '{video_id}:mcq:0' was turned down by people" in message
    assert message.count("The forecasts describe another video.") >= 2
    assert not BenchmarkVersion.objects.filter(label="staged").exists()
