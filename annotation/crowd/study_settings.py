"""The rules a study's settings obey, checked in one place for the REST API, the curators' settings
page and the admin (each turns the problems found here into its own kind of answer).

- Ranges: k (annotators per item) from 1 to `MAX_ANNOTATORS_PER_ITEM`, the items of one video a
  worker gets (`max_items_per_video`) from 0 (no cap) to `MAX_ITEMS_PER_VIDEO`, shares and the minimal
  accept rate in [0, 1], a lease from a minute to a week, no negative pay or time, at least one
  submission before the completion code. The database holds the same ranges as check constraints.
- The step kind is one the engine knows (`annotation.crowd.kinds`); a kind that fills in a form
  needs a valid form (`annotation.crowd.forms.validate_schema`).
- A kind whose approved work adds benchmark items (`StudyKind.output_benchmark`) may name the
  version they go to (`output_version`): an unfrozen version of that benchmark; other kinds name none.
- Recruitment: a Prolific study names its Prolific STUDY_ID; a Mechanical Turk study may name its
  HIT id (then links of other HITs are refused).
- Required worker attributes follow `annotation.crowd.worker_attributes` (values, lists of values,
  numeric ranges with min <= max).
- Frozen set-up: once a study has claims its step kind, form and k no longer change, nor do its
  items' media (video, image, payload); a study with items keeps its step kind (the items were made
  for it). A kind that holds each video once (`StudyKind.one_item_per_video`) refuses a video it
  already holds.
"""

import math
import re
from decimal import Decimal, InvalidOperation

from annotation.crowd import answer_keys, forms, kinds, worker_attributes
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import MAX_ANNOTATORS_PER_ITEM, Claim, Study, StudyItem
from annotation.models import BenchmarkVersion

MIN_LEASE_SECONDS = 60
MAX_ITEMS_PER_VIDEO = 10_000
MAX_LEASE_SECONDS = 7 * 24 * 3600
PLATFORM_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
SHARES = ("gold_share", "expert_share", "min_accept_rate")
FROZEN = {"step_kind": "step kind", "form_schema": "form", "annotators_per_item": "number of annotators per item (k)"}
ITEM_MEDIA = ("video", "image", "payload")
RULED = ("step_kind", "form_schema", "output_version", "annotators_per_item", "max_items_per_video", "lease_seconds",
         "estimated_minutes", "pay_per_item",
         *SHARES, "required_submissions", "recruitment_platform", "platform_study_id", "required_attributes")


class SettingsError(CrowdError):
    """Study settings out of range; `details` maps each field to what is wrong with it."""

    status = 400


class StudyFrozen(CrowdError):
    """A change of what work on the study has already been based on."""

    status = 409


def _number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Decimal):
        return value
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _out_of(value, low, high) -> bool:
    number = _number(value)
    if number is None:
        return True
    if isinstance(number, float) and not math.isfinite(number):
        return True
    if isinstance(number, Decimal) and not number.is_finite():
        return True
    return not (low <= number <= (high if high is not None else number))


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _merged(values: dict, study: Study | None) -> dict:
    base = study if study is not None else Study()
    return {name: values[name] if name in values else getattr(base, name) for name in RULED}


def problems(values: dict, *, study: Study | None = None) -> dict[str, str]:
    """Field → what is wrong, for the settings `values` would give the study (new when `study` is None)."""
    merged = _merged(values, study)
    found = {}
    if merged["step_kind"] not in kinds.names():
        found["step_kind"] = f"unknown step kind {merged['step_kind']!r}; choose one of {', '.join(kinds.names())}"
    elif kinds.named(merged["step_kind"]).uses_form:
        schema_problems = forms.validate_schema(merged["form_schema"])
        if schema_problems:
            found["form_schema"] = "; ".join(schema_problems)
    if merged["step_kind"] in kinds.names() and merged["output_version"] is not None:
        found.update(_output_problems(kinds.named(merged["step_kind"]), merged["output_version"]))
    k = merged["annotators_per_item"]
    if not _whole(k) or not 1 <= k <= MAX_ANNOTATORS_PER_ITEM:
        found["annotators_per_item"] = f"must be a whole number from 1 to {MAX_ANNOTATORS_PER_ITEM}"
    cap = merged["max_items_per_video"]
    if not _whole(cap) or not 0 <= cap <= MAX_ITEMS_PER_VIDEO:
        found["max_items_per_video"] = f"must be a whole number from 0 (no limit) to {MAX_ITEMS_PER_VIDEO}"
    for name in SHARES:
        if _out_of(merged[name], 0, 1):
            found[name] = "must be a number from 0 to 1"
    lease = merged["lease_seconds"]
    if not _whole(lease) or not MIN_LEASE_SECONDS <= lease <= MAX_LEASE_SECONDS:
        found["lease_seconds"] = f"must be from {MIN_LEASE_SECONDS} to {MAX_LEASE_SECONDS} seconds"
    for name in ("estimated_minutes", "pay_per_item"):
        if _out_of(merged[name], 0, None):
            found[name] = "must be a number of at least 0"
    if not _whole(merged["required_submissions"]) or merged["required_submissions"] < 1:
        found["required_submissions"] = "must be at least 1"
    found.update(_recruitment_problems(merged["recruitment_platform"], merged["platform_study_id"] or ""))
    rule_problems = worker_attributes.rule_problems(merged["required_attributes"])
    if rule_problems:
        found["required_attributes"] = "; ".join(rule_problems)
    return found


def _output_problems(kind, version) -> dict[str, str]:
    if not kind.output_benchmark:
        return {"output_version": f"a {kind.name!r} study adds no benchmark items: leave it empty"}
    ident = getattr(version, "pk", version)
    found = BenchmarkVersion.objects.filter(pk=ident).select_related("benchmark").first() \
        if str(ident).isdigit() else None
    if found is None:
        return {"output_version": f"there is no benchmark version #{ident}"}
    if found.benchmark.slug != kind.output_benchmark:
        return {"output_version": f"choose a version of {kind.output_benchmark}, not of {found.benchmark.slug}"}
    if found.frozen:
        return {"output_version": f"version {found} is frozen: choose an unfrozen version"}
    return {}


def _recruitment_problems(platform: str, external_id: str) -> dict[str, str]:
    if platform not in Study.Recruitment.values:
        return {"recruitment_platform": f"unknown platform {platform!r}; choose one of "
                                        f"{', '.join(Study.Recruitment.values)}"}
    if platform == Study.Recruitment.PROLIFIC and not external_id:
        return {"platform_study_id": "a study recruited on Prolific needs its Prolific STUDY_ID"}
    if external_id and not PLATFORM_ID.match(external_id):
        return {"platform_study_id": "letters, digits, '-' and '_' only (at most 100)"}
    return {}


def has_claims(study_id) -> bool:
    return Claim.objects.filter(study_id=study_id).exists()


def frozen_problems(study: Study | None, values: dict) -> dict[str, str]:
    """Field → why it can no longer change, for the frozen fields `values` would change."""
    if study is None or study.pk is None:
        return {}
    changed = [name for name in FROZEN if name in values and values[name] != getattr(study, name)]
    if not changed:
        return {}
    claims = Claim.objects.filter(study_id=study.pk).count()
    if claims:
        return {name: f"work has started on this study ({claims} claim{'s' if claims != 1 else ''}): its "
                      f"{FROZEN[name]} can no longer change" for name in changed}
    if "step_kind" in changed and StudyItem.objects.filter(study_id=study.pk).exists():
        return {"step_kind": f"the study's items were made for its step kind {study.step_kind!r}: "
                             "it can no longer change"}
    return {}


def _message(intro: str, found: dict[str, str]) -> str:
    return intro + "; ".join(f"{name}: {text}" for name, text in found.items()) + "."


def check(values: dict, *, study: Study | None = None) -> None:
    """SettingsError (400) for values out of range, else StudyFrozen (409) for a frozen setting
    changed, each naming the fields; nothing when `values` may be saved."""
    found = problems(values, study=study)
    if found:
        raise SettingsError(_message("Invalid study settings: ", found), details=found)
    frozen = frozen_problems(study, values)
    if frozen:
        raise StudyFrozen(_message("This setting is frozen: ", frozen), details=frozen)


def resize_items(study: Study) -> int:
    """After k changed on a study nobody has claimed from: its regular items get k places each."""
    if has_claims(study.pk):
        return 0
    return (StudyItem.objects.filter(study=study, role=StudyItem.Role.REGULAR)
            .exclude(open_slots=study.annotators_per_item).update(open_slots=study.annotators_per_item))


def videos_already_held(study: Study, video_ids, *, except_item: StudyItem | None = None) -> list[int]:
    """The videos among `video_ids` that the study holds already, when its kind holds each video once."""
    if not kinds.of(study).one_item_per_video:
        return []
    held = StudyItem.objects.filter(study=study, video_id__in=[v for v in video_ids if v is not None])
    if except_item is not None and except_item.pk is not None:
        held = held.exclude(pk=except_item.pk)
    return sorted(set(held.values_list("video_id", flat=True)))


def _ident(value):
    return getattr(value, "pk", value)


def item_problems(study: Study, values: dict, *, item: StudyItem | None = None) -> dict[str, str]:
    """Field → what is wrong with giving an item (new when `item` is None) these values."""
    found = {}
    if item is not None and item.pk is not None and has_claims(item.study_id):
        current = {"video": item.video_id, "image": item.image_id, "payload": item.payload}
        for name in ITEM_MEDIA:
            if name in values and _ident(values[name]) != current[name]:
                found[name] = "work has started on this study: an item's media can no longer change"
    if "answer_key" in values or "role" in values:
        key = values.get("answer_key", item.answer_key if item is not None else {})
        role = values.get("role", item.role if item is not None else StudyItem.Role.REGULAR)
        problems = answer_keys.problems(key, role=role, study=study)
        if problems:
            found["answer_key"] = "; ".join(problems)
    video = _ident(values.get("video"))
    if video is not None and "video" not in found:
        held = videos_already_held(study, [video], except_item=item)
        if held:
            found["video"] = f"video #{held[0]} is already in this study, which holds each video once"
    return found
