"""BlackSwanSuite's data quality study (seeds/000 §4.2 "Data Quality Validation"; SPEC §1).

The paper has raters judge "60 randomly sampled videos and all their tasks" for the correctness of
the responses, their depth of reasoning and a reasonable level of grammar, and reports 9.6/10 on
correctness, 9.3/10 on depth and 92.3% on grammar. Here that study is a crowd study of the form
kind (`annotation.crowd`):

- `create_quality_study(records_or_version, sample_size, seed, curator, k)` samples videos and opens
  a study with one item per sampled video, rated by `k` raters each. The videos come from a frozen
  `blackswan` version (its `video` items, each with its library video under role `video`), from
  some of its `BenchmarkItem`s, or from (release record, library `Video`) pairs. A video enters the
  population only with all its tasks: the three Forecaster scenarios (`task1_gt`), the Detective's
  marks of them (`task2_checkboxes`) and the new hypotheses written for the invalidated ones
  (`task2_gt`), the Reporter's marks of the Detective hypotheses (`task3_checkboxes`) and caption
  (`task3_gt`), read and checked by `annotation.benchmarks.blackswan.variants.read_record`; the others are left
  out, each with its reason. The population is ordered by video id and `random.Random(seed)` draws
  the sample, so the same source and seed give the same videos. Source, seed, population and the
  sampled ids are recorded in the study's first history entry (insert-only), as JSON under
  `"blackswan_quality_study"`.
- Each item shows the whole video and the tasks as text; the form asks for correctness and depth on
  0–10 scales with labelled ends, and whether the grammar is acceptable (yes / no), plus optional
  comments. Expert sampling is off unless asked for (`expert_share`, `expert_first`).
- `quality_report(study)`: mean correctness and depth (out of 10) and the share of "grammar
  acceptable" answers, with their counts and inter-rater agreement (Krippendorff's alpha, ordinal for
  the scales, nominal for grammar; `annotation.crowd.agreement`), over the submissions on the study's
  videos that count: approved by a reviewer or not sampled for review, read through `final_data` (a
  reviewer's correction wins). Submissions waiting for review and rejected ones are left out and
  counted. Per-video figures and the paper's numbers come with it.
"""

from __future__ import annotations

import json
import random
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied

from annotation.benchmarks.blackswan import variants
from annotation.crowd import agreement, history, studies
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study, StudyItem, Submission
from annotation.models import BenchmarkItem, BenchmarkVersion, Video
from config.roles import ADMIN, CURATOR, has_role

HISTORY_KEY = "blackswan_quality_study"
SCALE = (0, 10)
CORRECTNESS, DEPTH, GRAMMAR, COMMENTS = "correctness", "depth", "grammar", "comments"
COUNTED = (Submission.Review.APPROVED, Submission.Review.NOT_SAMPLED)
PAPER = {"videos": 60, "correctness": 9.6, "depth": 9.3, "grammar_percent": 92.3}

FORM = {"fields": [
    {"name": CORRECTNESS, "type": "likert", "min": SCALE[0], "max": SCALE[1],
     "label": "Correctness: how correct are the responses to the tasks, given the video?",
     "labels": {str(SCALE[0]): "Entirely wrong", str(SCALE[1]): "Entirely correct"}},
    {"name": DEPTH, "type": "likert", "min": SCALE[0], "max": SCALE[1],
     "label": "Depth: how much thought and reasoning do the responses show?",
     "labels": {str(SCALE[0]): "None: shallow or trivial", str(SCALE[1]): "Deep, thoughtful reasoning"}},
    {"name": GRAMMAR, "type": "single_choice", "label": "Is the grammar of the responses acceptable?",
     "options": [{"id": "yes", "text": "Yes, acceptable"}, {"id": "no", "text": "No"}]},
    {"name": COMMENTS, "type": "free_text", "label": "Comments (optional)", "min_length": 0, "max_length": 2000},
]}

INSTRUCTIONS = """\
Each item is one video of a surprising event and the answers an annotator wrote about it, in three steps:

1. **Forecaster**: having seen only the beginning of the video, three scenarios of what happens next.
2. **Detective**: having also seen the end (not the middle), each scenario marked valid or invalid, and a new
   hypothesis of what happened in the middle for every invalid one.
3. **Reporter**: having seen the whole video, each Detective hypothesis marked valid or invalid, and a
   caption of the whole event.

Watch the whole video, read all the answers, then rate:

- **Correctness** (0–10): are the marks right and do the hypotheses and the caption fit what the video shows
  at each step?
- **Depth** (0–10): do the answers show thought about what could happen and why, or are they trivial?
- **Grammar**: is the language acceptable (minor slips are fine)?
"""


@dataclass(frozen=True)
class Candidate:
    """One video with all its tasks, ready to be an item of the study."""

    external_id: str
    payload: dict
    video: Video
    benchmark_item: BenchmarkItem | None = None


@dataclass
class QualityStudy:
    study: Study
    items: list[StudyItem]
    sample: dict  # what the study's history records: source, seed, population, sampled ids
    excluded: dict[str, str] = field(default_factory=dict)  # video id -> why it is not in the population


# --- Building the items ------------------------------------------------------------------------

def _mark(valid: bool) -> str:
    return "valid" if valid else "invalid"


def item_payload(annotated: variants.Annotated) -> dict:
    """What a rater reads next to the video: every task of the three steps, numbered."""
    forecasts, marks = annotated.forecasts, annotated.forecast_valid
    detective = []
    for number, (hypothesis, kept) in enumerate(zip(annotated.detective, marks, strict=True), start=1):
        how = f"scenario {number} kept" if kept else f"new, in place of scenario {number}"
        detective.append(f"{number}. {hypothesis.text} ({how})")
    return {
        "video_id": annotated.video_id,
        "forecaster_scenarios": [f"{i}. {h.text}" for i, h in enumerate(forecasts, start=1)],
        "detective_marks": [f"Scenario {i}: {_mark(valid)}" for i, valid in enumerate(marks, start=1)],
        "detective_hypotheses": detective,
        "reporter_marks": [f"Hypothesis {i}: {_mark(valid)}"
                           for i, valid in enumerate(annotated.detective_valid, start=1)],
        "reporter_caption": annotated.caption.text,
    }


def _item_video(item: BenchmarkItem) -> Video | None:
    for media in item.media.all():
        if media.role == "video" and media.video_id:
            return media.video
    return None


def _entries(records_or_version) -> tuple[list[tuple[str, dict, Video | None, BenchmarkItem | None]], str, dict]:
    """(origin, record, video, benchmark item) per input, a label of the source, and its facts."""
    if isinstance(records_or_version, BenchmarkVersion):
        version = records_or_version
        if version.benchmark.slug != "blackswan":
            raise CrowdError(f"Version {version} is not a BlackSwanSuite version.")
        if not version.frozen:
            raise CrowdError(f"Version {version} is not frozen yet: the study samples a frozen version.")
        items = version.items.filter(payload__kind="video").prefetch_related("media__video").order_by("external_id")
        entries = [(f"{version}/{item.external_id}", item.payload, _item_video(item), item) for item in items]
        return entries, str(version), {"version_id": version.pk, "version_checksum": version.checksum}
    entries = []
    for index, entry in enumerate(records_or_version or []):
        if isinstance(entry, BenchmarkItem):
            entries.append((f"{entry.version}/{entry.external_id}", entry.payload, _item_video(entry), entry))
        elif isinstance(entry, tuple | list) and len(entry) == 2:
            entries.append((f"record {index}", entry[0], entry[1], None))
        else:
            raise CrowdError(f"Entry {index} is neither a BenchmarkItem nor a (record, Video) pair.")
    versions = sorted({str(item.version) for _, _, _, item in entries if item is not None})
    return entries, ", ".join(versions) or "records", {}


def candidates(records_or_version) -> tuple[list[Candidate], dict[str, str], str, dict]:
    """The population (every video with all its tasks, by id), what was left out and why, the source."""
    entries, source, facts = _entries(records_or_version)
    found: dict[str, Candidate] = {}
    excluded: dict[str, str] = {}
    for index, (origin, record, video, item) in enumerate(entries):
        if item is not None and item.payload.get("kind") != "video":
            excluded[origin] = "not a video item"
            continue
        annotated, problems = variants.read_record(index, record, video, origin)
        key = str(record.get("id")) if isinstance(record, dict) and record.get("id") is not None else origin
        if problems:
            excluded[key] = "; ".join(problems)
        elif annotated.video_id in found:
            excluded[f"{origin} ({annotated.video_id})"] = f"video id {annotated.video_id!r} appears twice"
        else:
            found[annotated.video_id] = Candidate(external_id=annotated.video_id, payload=item_payload(annotated),
                                                  video=video, benchmark_item=item)
    return [found[key] for key in sorted(found)], excluded, source, facts


# --- Creating the study ----------------------------------------------------------------------------

def _whole(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise CrowdError(f"{name} must be a whole number of at least {minimum} (got {value!r}).")
    return value


def create_quality_study(records_or_version, sample_size: int, seed: int, curator, k: int = 3, *, name: str = "",
                         slug: str | None = None, instructions: str = "", open_now: bool = True,
                         **study_fields) -> QualityStudy:
    """A rating study over `sample_size` videos drawn with `seed` (see the module docstring).

    Curators and admins only (PermissionDenied otherwise). Raises CrowdError, creating nothing, for a
    source that is not a frozen BlackSwanSuite version (or its items, or record/video pairs), a
    sample larger than the population, or a bad seed, size or k.
    """
    if not has_role(curator, CURATOR, ADMIN):
        raise PermissionDenied("Only curators and admins create data quality studies.")
    sample_size = _whole(sample_size, "The sample size", 1)
    k = _whole(k, "The number of raters per video (k)", 1)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise CrowdError(f"The seed must be a whole number (got {seed!r}).")
    population, excluded, source, facts = candidates(records_or_version)
    if sample_size > len(population):
        raise CrowdError(f"The sample of {sample_size} videos is larger than the population: {len(population)} "
                         f"video(s) of {source} have all their tasks ({len(excluded)} left out).", details=excluded)
    chosen = random.Random(seed).sample(population, sample_size)
    sample = {"source": source, **facts, "seed": seed, "sample_size": sample_size, "population": len(population),
              "excluded": len(excluded), "raters_per_video": k, "sampled": [c.external_id for c in chosen],
              "method": "random.Random(seed).sample over the population ordered by video id"}
    study_fields = {"expert_share": 0.0, "expert_first": 0, "gold_share": 0.0, **study_fields}
    name = name or f"BlackSwanSuite data quality: {source}, {sample_size} videos, seed {seed}"
    made = studies.create_study(
        name=name[:200], slug=slug, fallback_slug="blackswan-quality", created_by=curator, step_kind="form",
        form_schema=FORM, state=Study.State.OPEN if open_now else Study.State.DRAFT, annotators_per_item=k,
        instructions=instructions or INSTRUCTIONS,
        rows=[{"external_id": c.external_id, "payload": c.payload, "video": c.video,
               "benchmark_item": c.benchmark_item} for c in chosen],
        history_reason=json.dumps({HISTORY_KEY: sample}, sort_keys=True), **study_fields)
    return QualityStudy(study=made.study, items=made.items, sample=sample, excluded=excluded)


def recorded_sample(study: Study) -> dict | None:
    """The sample as recorded when the study was created (None for a study made otherwise)."""
    for entry in history.for_object(Study, study.pk).filter(from_state="").order_by("id"):
        try:
            found = json.loads(entry.reason)
        except ValueError:
            continue
        if isinstance(found, dict) and isinstance(found.get(HISTORY_KEY), dict):
            return found[HISTORY_KEY]
    return None


# --- The report ------------------------------------------------------------------------------------

def _mean(values: list) -> float | None:
    return statistics.fmean(values) if values else None


def _share_yes(answers: list) -> float | None:
    return answers.count("yes") / len(answers) if answers else None


def _scale_figures(values: list[int], units: dict) -> dict:
    return {"mean": _mean(values), "out_of": SCALE[1], "n": len(values),
            "alpha_ordinal": agreement.krippendorff_alpha(units, agreement.ORDINAL).as_dict()}


def quality_report(study: Study) -> dict:
    """Correctness and depth (means out of 10), grammar (share acceptable), agreement, per video."""
    submissions = (Submission.objects.filter(claim__study=study, claim__item__role=StudyItem.Role.REGULAR)
                   .select_related("claim__item").order_by("claim__item__external_id", "claim__worker_id"))
    values = {CORRECTNESS: [], DEPTH: [], GRAMMAR: []}
    units = {CORRECTNESS: defaultdict(dict), DEPTH: defaultdict(dict), GRAMMAR: defaultdict(dict)}
    per_video: dict[str, dict] = {}
    left_out = {"pending": 0, "rejected": 0}
    raters, counted = set(), 0
    for submission in submissions:
        if submission.review_state not in COUNTED:
            left_out["pending" if submission.review_state == Submission.Review.PENDING else "rejected"] += 1
            continue
        counted += 1
        data, claim = submission.final_data, submission.claim
        video = per_video.setdefault(claim.item.external_id, {CORRECTNESS: [], DEPTH: [], GRAMMAR: []})
        raters.add(claim.worker_id)
        for name in (CORRECTNESS, DEPTH, GRAMMAR):
            value = data.get(name)
            if value is None:
                continue
            values[name].append(value)
            units[name][claim.item_id][claim.worker_id] = value
            video[name].append(value)
    grammar = values[GRAMMAR]
    return {
        "study": study.slug, "sample": recorded_sample(study),
        "videos_in_study": study.items.filter(role=StudyItem.Role.REGULAR).count(),
        "n_videos_rated": len(per_video), "n_raters": len(raters), "n_submissions": counted,
        "left_out": left_out,
        CORRECTNESS: _scale_figures(values[CORRECTNESS], dict(units[CORRECTNESS])),
        DEPTH: _scale_figures(values[DEPTH], dict(units[DEPTH])),
        GRAMMAR: {"acceptable": grammar.count("yes"), "n": len(grammar), "acceptable_share": _share_yes(grammar),
                  "alpha_nominal": agreement.krippendorff_alpha(dict(units[GRAMMAR]), agreement.NOMINAL).as_dict()},
        "per_video": [{"video_id": video_id, "n": len(figures[CORRECTNESS]),
                       "correctness": _mean(figures[CORRECTNESS]), "depth": _mean(figures[DEPTH]),
                       "grammar_acceptable_share": _share_yes(figures[GRAMMAR])}
                      for video_id, figures in sorted(per_video.items())],
        "paper": PAPER,
    }
