"""The versions around NL-EYE scene writing: the writing slots (briefs) and the pool of accepted triplets.

- Briefs live in their own unfrozen version (`BRIEFS_LABEL`), one item per combination of reasoning
  category and time shift (direction × duration, a parallel shift being short), each with a domain
  taken in turn, so that a study over them asks for every kind of triplet. A version of briefs is
  never frozen: the evaluation cannot build requests for an item without scenes.
- An approved triplet becomes an item of the study's pool version (`Study.output_version`; by
  default the unfrozen `POOL_LABEL` version) in the release importer's shape (kind `triplet`,
  `sample_id`, the three scenes as `premise`, `hypothesis1`, `hypothesis2`, `label` the plausible
  one, `reasoning_category`, `domain`, `time_direction`, `time_duration`), checked by the payload
  schema, with a `CurationRecord` (stage `STAGE`, the submission and its author, `working`: the
  scenes as written and a random 32-bit seed for the triplet's images). Which hypothesis comes
  first is a coin tossed from the triplet's id (`plausible_label`), so labels are balanced and a
  replay gives the same order.
"""

from __future__ import annotations

import hashlib
import secrets

from django.core.exceptions import ValidationError
from django.db import IntegrityError

from annotation import curation_stages
from annotation.benchmarks import registry
from annotation.benchmarks.nleye import stages
from annotation.benchmarks.nleye.vocabulary import CATEGORIES, DIRECTIONS, DOMAIN_VALUES, DURATIONS, PARALLEL, SHORT
from annotation.crowd.errors import CrowdError
from annotation.crowd.kinds import StudySetup
from annotation.crowd.models import Study
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, FrozenError
from annotation.versions import add_item

SLUG = "nleye"
STUDY_KIND = "nleye_scenes"
POOL_LABEL = "scene-pool"
BRIEFS_LABEL = "scene-briefs"
STAGE = stages.SCENES_ACCEPTED
SCENE_KEYS = ("premise", "plausible", "implausible")
TRIPLET_FIELDS = ("reasoning_category", "domain", "time_direction", "time_duration")
DIRECTION_PHRASES = {"forward": "happen after the premise", "backward": "happened before the premise",
                     "parallel": "happen at the same time as the premise"}


def benchmark() -> Benchmark:
    definition = registry.get(SLUG)
    found, _ = Benchmark.objects.get_or_create(slug=SLUG, defaults={"name": definition.name,
                                                                    "description": definition.description})
    return found


def _unfrozen(label: str, user, description: str) -> BenchmarkVersion:
    version, _ = BenchmarkVersion.objects.get_or_create(
        benchmark=benchmark(), label=label,
        defaults={"created_by": user, "source": BenchmarkVersion.Source.CURATION, "description": description})
    if version.frozen:
        raise CrowdError(f"Version {version} is frozen: name an unfrozen version for the scenes.", status=409)
    return version


def pool_version(user=None, label: str = POOL_LABEL) -> BenchmarkVersion:
    """The unfrozen pool version `label` (made when missing); 409 when it is frozen."""
    return _unfrozen(label, user, "Scene triplets accepted in the scene-writing studies, before their images.")


def briefs_version(user=None) -> BenchmarkVersion:
    return _unfrozen(BRIEFS_LABEL, user, "Writing slots of the scene-writing studies (never frozen).")


def brief_payloads() -> list[dict]:
    """One brief per reasoning category × time shift, with the domains taken in turn."""
    shifts = [(direction, duration) for direction, _ in DIRECTIONS for duration, _ in DURATIONS
              if direction != PARALLEL or duration == SHORT]
    domains = [domain for domain in DOMAIN_VALUES if domain != "other"]
    out = []
    for index, ((category, _), (direction, duration)) in enumerate(
            (c, s) for c in CATEGORIES for s in shifts):
        domain = domains[index % len(domains)]
        brief = (f"Aim for {category} reasoning in {domain}: the hypotheses {DIRECTION_PHRASES[direction]}, "
                 f"{'a short' if duration == SHORT else 'a long'} time apart. These are suggestions: choose "
                 "what fits your idea best.")
        out.append({"kind": "brief", "brief": brief, "suggested_category": category,
                    "suggested_direction": direction, "suggested_duration": duration, "suggested_domain": domain})
    return out


def ensure_briefs(user=None) -> list[BenchmarkItem]:
    """The brief items (made once, then reused by every scene-writing study)."""
    version = briefs_version(user)
    have = {item.external_id: item for item in version.items.all()}
    for number, payload in enumerate(brief_payloads(), start=1):
        external_id = f"brief-{number:02d}"
        if external_id not in have:
            have[external_id] = add_item(version, external_id, payload)
    return [have[key] for key in sorted(have)]


def setup(created_by, settings: dict, *, with_rows: bool = True) -> StudySetup:
    """A new scene-writing study: the default pool version unless `settings` name one, and one writing
    slot per brief when it is given no items."""
    rows = [{"external_id": item.external_id, "payload": item.payload, "benchmark_item": item}
            for item in ensure_briefs(created_by) if (item.payload or {}).get("kind") == "brief"] if with_rows else []
    made = {} if settings.get("output_version") is not None else {"output_version": pool_version(created_by)}
    return StudySetup(settings=made, rows=rows)


def plausible_label(sample_id: str) -> int:
    """1 or 2: where the plausible hypothesis goes, a fair coin fixed by the triplet's id."""
    return 1 + hashlib.sha256(sample_id.encode()).digest()[0] % 2


def triplet_payload(sample_id: str, scenes: dict) -> dict:
    """The pool item's payload (the release importer's shape) of a written triplet."""
    label = plausible_label(sample_id)
    first, second = ((scenes["plausible"], scenes["implausible"]) if label == 1
                     else (scenes["implausible"], scenes["plausible"]))
    return {"kind": "triplet", "sample_id": sample_id, "premise": scenes["premise"], "hypothesis1": first,
            "hypothesis2": second, "label": label, **{name: scenes[name] for name in TRIPLET_FIELDS}}


def _target(study: Study) -> BenchmarkVersion:
    version = BenchmarkVersion.objects.select_related("benchmark").filter(pk=study.output_version_id).first() \
        if study.output_version_id else None
    if version is None:
        raise CrowdError("This study names no version for its accepted triplets: choose one in its settings.",
                         status=409)
    if version.frozen:
        raise CrowdError(f"Version {version} is frozen: choose an unfrozen version for the accepted triplets in "
                         "the study's settings.", status=409)
    return version


def accept(submission) -> BenchmarkItem:
    """Add an approved triplet to the study's pool with its curation record (in the caller's transaction)."""
    claim = submission.claim
    scenes = submission.final_data or {}
    missing = [key for key in (*SCENE_KEYS, *TRIPLET_FIELDS) if not scenes.get(key)]
    if missing:
        raise CrowdError(f"The triplet lacks {', '.join(missing)}; it cannot join the pool.", status=400)
    version = _target(claim.study)
    sample_id = f"scene-{submission.pk}"
    try:
        item = add_item(version, sample_id, triplet_payload(sample_id, scenes))
    except FrozenError as exc:
        raise CrowdError(" ".join(exc.messages), status=409) from None
    except ValidationError as exc:
        raise CrowdError("The triplet does not fit NL-EYE's items: " + "; ".join(exc.messages), status=400) from None
    except IntegrityError:
        raise CrowdError(f"Version {version} already holds an item {sample_id!r}.", status=409) from None
    curation_stages.start(
        item=item, stage=STAGE, source_submission=submission, author=claim.worker, by=claim.worker,
        working={"scenes": {key: scenes[key] for key in (*SCENE_KEYS, *TRIPLET_FIELDS)},
                 "seed": secrets.randbits(32), "study": claim.study.slug, "slot": claim.item.external_id})
    return item
