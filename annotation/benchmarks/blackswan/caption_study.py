"""BlackSwanSuite's +P/+PC captions as a kind of crowd study (SPEC §1 "Ablations", §7.1; seeds/000 App. H.1).

The +P ablation adds human captions of V_pre and V_post to the prompt, +PC also a human comparison of
the two. The paper collects them in their own study, independently of the three-step task. A study of
kind `blackswan_captions` holds one item per video: each item names a finished `VideoSplit` (payload
`{"split_id": …}`; the item's `video` is the parent video, which no worker streams). The worker sees
V_pre and V_post, never V_main (`task_media`; `may_stream` is the media grant that lets them stream
exactly these two clips while their claim is active), and writes in the kind's own form (`FORM`):

- `pc_preevent`: a caption of V_pre (the beginning of the video);
- `pc_postevent`: a caption of V_post (the end of the video);
- `pc_comp`: a comparison of the two, what changed between them.

The answers are checked on submit and on a reviewer's edit (`clean_answers`: each text
`MIN_TEXT`–`MAX_TEXT` characters, at least `MIN_WORDS` words, the comparison not a copy of a caption).
Each submission goes to the ordinary review queue (expert share 1 by default), which shows both clips
(`review_media`).

Acceptance: an approved submission holds accepted captions; with several writers per video (k > 1) the
latest approved submission of the video wins (by approval time). Nothing else is stored:
`accepted_captions(video)` reads them back from the approved submissions, as `{"pc_preevent",
"pc_postevent", "pc_comp"}` (the payload fields `evaluation.benchmarks.blackswan` reads for the
`plus_p` and `plus_pc` prompting).

Into the versions: `fill_payload` puts a video's accepted captions into a `video` item's payload where
the payload has none of its own; `annotation.benchmarks.blackswan.versions.freeze_variants` does so for every
video of a version built from the platform's annotations, and `apply_captions(version, user)` does so
for an unfrozen BlackSwanSuite version (a frozen one is refused), noting in the version's description
how many videos got captions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from annotation.access import media_grant
from annotation.benchmarks.blackswan import splits as blackswan_splits
from annotation.benchmarks.blackswan import staged
from annotation.crowd import answers, forms, kinds, review_media, studies
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from annotation.models import BenchmarkItem, BenchmarkVersion, FrozenError, Video, VideoSplit
from annotation.payloads import validate_payload
from config.roles import ADMIN, CURATOR, has_role

STUDY_KIND = "blackswan_captions"
SLUG = "blackswan"
PRE, POST, COMPARISON = "pc_preevent", "pc_postevent", "pc_comp"
FIELDS = (PRE, POST, COMPARISON)
MIN_TEXT, MAX_TEXT, MIN_WORDS = 10, 1000, 3
SHOWN = ("pre", "post")  # the clips a worker sees; V_main never
DESCRIPTION_MARK = "Human +P/+PC captions"

FORM = {"fields": [
    {"name": PRE, "type": "free_text", "label": gettext_noop("Caption of the beginning of the video"),
     "help": gettext_noop("Describe what the first clip shows: who or what is there, and what they do."),
     "min_length": MIN_TEXT, "max_length": MAX_TEXT},
    {"name": POST, "type": "free_text", "label": gettext_noop("Caption of the end of the video"),
     "help": gettext_noop("Describe what the second clip shows, in the same way."),
     "min_length": MIN_TEXT, "max_length": MAX_TEXT},
    {"name": COMPARISON, "type": "free_text", "label": gettext_noop("What changed between the beginning and the end?"),
     "help": gettext_noop("Compare the two clips: what is different at the end (people, objects, positions, "
                          "state), without guessing what happened in between."),
     "min_length": MIN_TEXT, "max_length": MAX_TEXT},
]}

INSTRUCTIONS = gettext_noop("""Each item shows two short clips of the same video: its **beginning** and its **end**.
The middle of the video is not shown.

1. Watch both clips.
2. Write a **caption of the beginning**: what can be seen, who is there and what they do.
3. Write a **caption of the end**, in the same way.
4. Write **what changed** between the beginning and the end: compare the two clips. Do not guess what
   happened in between; describe only what is different.

Write full sentences, describe only what can be seen.""")


def is_caption_study(study: Study) -> bool:
    return study.step_kind == STUDY_KIND


# --- Answers -----------------------------------------------------------------------------------------

def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def clean_answers(_schema: dict, payload: dict, data) -> dict:
    """The three texts, trimmed; InvalidSubmission (400) with a message per field otherwise."""
    clean = forms.validate(FORM, payload or {}, data)
    errors = {}
    for name in FIELDS:
        if len(clean[name].split()) < MIN_WORDS:
            errors[name] = _("write at least %(count)s words") % {"count": MIN_WORDS}
    if COMPARISON not in errors and any(_same(clean[COMPARISON], clean[name]) for name in (PRE, POST)):
        errors[COMPARISON] = _("compare the two clips: do not repeat a caption")
    if errors:
        raise InvalidSubmission(_("Some answers are missing or invalid."), details=errors)
    return clean


def readable(_schema: dict, payload: dict, data: dict) -> list[dict]:
    return answers.format_answers(FORM, payload, data)


def captions_of(data) -> dict | None:
    """The three texts of a submission's answers, or None when one is missing."""
    data = data if isinstance(data, dict) else {}
    found = {name: str(data.get(name) or "").strip() for name in FIELDS}
    return found if all(found.values()) else None


# --- Items ---------------------------------------------------------------------------------------------

def _split(value) -> VideoSplit | None:
    """A split from a VideoSplit, a library Video (its current split) or a video id."""
    if isinstance(value, VideoSplit):
        return value
    if isinstance(value, Video):
        return blackswan_splits.current_split(value)
    video = Video.objects.filter(pk=value).first() if str(value).strip().isdigit() else None
    return blackswan_splits.current_split(video) if video is not None else None


def item_rows(videos_or_splits, study: Study | None = None) -> list[dict]:
    """Study item rows of finished splits (VideoSplit objects, library videos or video ids: their current
    split), one per video. InvalidSubmission (400) naming each problem; nothing is made then."""
    found, problems = [], []
    for value in videos_or_splits or []:
        split = _split(value)
        if split is None:
            problems.append(f"video {getattr(value, 'pk', value)}: no finished split (split it into its parts first)")
            continue
        found.append(split)
    if problems:
        raise InvalidSubmission("Some videos cannot be captioned.", details=problems)
    if not found:
        raise InvalidSubmission("Choose at least one split video to caption.")
    try:
        return staged.item_rows(found, study)
    except InvalidSubmission as exc:
        raise InvalidSubmission("Some videos cannot be captioned.", details=exc.details) from None


def item_row(study: Study, row: dict) -> str | None:
    """Turn a row added later (`{"payload": {"split_id": N}}`) into the split's item row, in place; the row's
    problem otherwise."""
    payload = row.get("payload") if isinstance(row.get("payload"), dict) else {}
    if set(payload) != {"split_id"} or row.get("video") is not None or row.get("image") is not None:
        return 'items of a captions study are finished splits: {"payload": {"split_id": <split id>}}'
    split_id = str(payload["split_id"]).strip()
    split = VideoSplit.objects.filter(pk=split_id).first() if split_id.isdigit() else None
    if split is None:
        return f"there is no split {split_id[:20]!r}"
    try:
        (found,) = staged.item_rows([split], study)
    except InvalidSubmission as exc:
        return "; ".join(str(d) for d in exc.details) if isinstance(exc.details, list) else exc.message
    row.update(payload=found["payload"], video=found["video"])
    return None


def split_of(item: StudyItem) -> VideoSplit | None:
    split_id = (item.payload or {}).get("split_id")
    if not str(split_id).isdigit():
        return None
    return (VideoSplit.objects.select_related("video", "pre_video", "post_video")
            .filter(pk=split_id, status=VideoSplit.Status.DONE).first())


def _clip(split: VideoSplit, part: str) -> Video | None:
    return getattr(split, staged.PART_FIELDS[part])


def task_media(item: StudyItem) -> list[dict]:
    """The players of the task page: V_pre and V_post of the item's split (no URL of any other clip)."""
    split = split_of(item)
    if split is None:
        return []
    out = []
    for part in SHOWN:
        clip = _clip(split, part)
        if clip is not None:
            out.append({"part": part, "label": _(staged.PART_LABELS[part]),
                        "url": reverse("media-video-file", kwargs={"pk": clip.pk}),
                        "poster_url": reverse("media-video-poster", kwargs={"pk": clip.pk}) if clip.poster else ""})
    return out


def seen_clips(item: StudyItem) -> list[dict]:
    """For a reviewer: the two clips the worker saw."""
    split = split_of(item)
    if split is None:
        return []
    return [review_media.video_entry(clip, staged.PART_LABELS[part])
            for part in SHOWN if (clip := _clip(split, part)) is not None]


def shown_rows(_payload: dict) -> list[dict]:
    """The task page shows the two clips and the form only: no payload row."""
    return []


def may_stream(user, video) -> bool:
    """Whether one of the user's active claims in a captions study shows this clip (its V_pre or V_post)."""
    splits = list(VideoSplit.objects.filter(Q(pre_video=video) | Q(post_video=video), status=VideoSplit.Status.DONE)
                  .values_list("pk", flat=True))
    if not splits:
        return False
    return Claim.objects.filter(worker=user, status=Claim.Status.ACTIVE, study__step_kind=STUDY_KIND,
                                item__payload__split_id__in=splits).exists()


@media_grant
def clips_of_caption_items(user, asset) -> bool:
    return isinstance(asset, Video) and may_stream(user, asset)


# --- Creating a study ------------------------------------------------------------------------------------

def _in(language: str, text: str) -> str:
    """`text` translated into the study's language (what its workers read), whoever creates it."""
    with translation.override(language):
        return _(text)


def create_caption_study(curator, videos_or_splits, k: int = 1, *, name: str = "", slug: str = "",
                         instructions: str = "", open_now: bool = False, **fields) -> Study:
    """A `blackswan_captions` study over finished splits (VideoSplit objects, library videos or video ids:
    their current split), one item per video, `k` writers per video. Every submission is reviewed unless
    `expert_share` says otherwise; the instructions are in the study's `language` (English unless given).
    403 for a user who is no curator, 400 for k < 1, no video or a video
    without a finished split; nothing is made then. A draft unless `open_now`."""
    if not has_role(curator, CURATOR, ADMIN):
        raise CrowdError("Only curators create studies.", status=403)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise CrowdError(f"The number of writers per video (k) must be a whole number of at least 1 (got {k!r}).")
    rows = item_rows(videos_or_splits)
    fields = {"expert_share": 1.0, "expert_first": 0, "gold_share": 0.0, "estimated_minutes": 4, **fields}
    return studies.create_study(
        name=name or f"BlackSwanSuite captions (+P/+PC): {len(rows)} video(s)", slug=slug or None,
        fallback_slug="blackswan-captions", created_by=curator, step_kind=STUDY_KIND,
        state=Study.State.OPEN if open_now else Study.State.DRAFT, rows=rows, annotators_per_item=k,
        instructions=instructions or _in(fields.get("language") or "en", INSTRUCTIONS),
        history_reason=f"BlackSwanSuite +P/+PC captions study over {len(rows)} videos", **fields).study


def caption_studies():
    """The captions studies, newest first."""
    return Study.objects.filter(step_kind=STUDY_KIND).order_by("-created_at")


def caption_study(slug: str) -> Study:
    """A captions study by its slug; CrowdError 404 for anything else."""
    found = caption_studies().filter(slug=slug).first()
    if found is None:
        raise CrowdError(f"There is no BlackSwanSuite captions study {slug!r}.", status=404)
    return found


# --- Accepted captions -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Accepted:
    """A video's accepted captions and the approved submission they come from."""

    captions: dict
    submission: Submission

    @property
    def study_slug(self) -> str:
        return self.submission.claim.study.slug


def approved_submissions(video_ids=None):
    """Approved submissions of captions studies (regular items), earliest approval first."""
    found = Submission.objects.filter(claim__study__step_kind=STUDY_KIND, review_state=Submission.Review.APPROVED,
                                      claim__item__role=StudyItem.Role.REGULAR)
    if video_ids is not None:
        found = found.filter(claim__item__video_id__in=list(video_ids))
    return found.select_related("claim__item", "claim__study").order_by("reviewed_at", "pk")


def accepted_by_video(video_ids=None) -> dict[int, Accepted]:
    """Video id → its accepted captions: the latest approved submission of the video wins."""
    out = {}
    for submission in approved_submissions(video_ids):
        found = captions_of(submission.final_data)
        if found is not None and submission.claim.item.video_id is not None:
            out[submission.claim.item.video_id] = Accepted(found, submission)
    return out


def _video_id(video) -> int | None:
    if isinstance(video, VideoSplit):
        return video.video_id
    value = getattr(video, "pk", video)
    return int(value) if str(value).isdigit() else None


def accepted_captions(video) -> dict | None:
    """`{"pc_preevent", "pc_postevent", "pc_comp"}` of a video (a library Video, its id or one of its
    splits), from its latest approved captions submission; None when it has none."""
    video_id = _video_id(video)
    found = accepted_by_video([video_id]).get(video_id) if video_id is not None else None
    return dict(found.captions) if found is not None else None


def fill_payload(payload: dict, captions: dict | None) -> tuple[dict, list[str]]:
    """A `video` payload with the captions in the fields it leaves empty, and the fields filled."""
    if not captions or payload.get("kind") != "video":
        return payload, []
    filled = [name for name in FIELDS if not str(payload.get(name) or "").strip() and captions.get(name)]
    return ({**payload, **{name: captions[name] for name in filled}} if filled else payload), filled


def describe(filled_videos: int, total_videos: int, slugs) -> str:
    """The sentence a version's description gets about the captions put into it."""
    source = f" (studies {', '.join(sorted(slugs))})" if slugs else ""
    return f"{DESCRIPTION_MARK} for {filled_videos} of {total_videos} videos from captions studies{source}."


def fill_items(items: list[dict]) -> tuple[list[dict], dict]:
    """Preview items (`{"external_id", "payload", "media": {role: video id}}`) with accepted captions filled
    into their `video` payloads, and what was done: videos with captions, fields filled, the studies."""
    video_items = [item for item in items if item["payload"].get("kind") == "video"]
    accepted = accepted_by_video({item["media"].get("video") for item in video_items} - {None})
    out, videos, fields_filled, slugs = [], 0, 0, set()
    for item in items:
        found = accepted.get(item["media"].get("video")) if item["payload"].get("kind") == "video" else None
        payload, filled = fill_payload(item["payload"], found.captions if found else None)
        if filled:
            videos += 1
            fields_filled += len(filled)
            slugs.add(found.study_slug)
        out.append({**item, "payload": payload})
    return out, {"videos": videos, "of_videos": len(video_items), "fields": fields_filled, "studies": sorted(slugs)}


# --- Applying captions to an unfrozen version ----------------------------------------------------------------

@dataclass
class Applied:
    version: BenchmarkVersion
    videos: int = 0  # video items that got at least one caption
    fields: int = 0
    complete: int = 0  # video items that had all three already
    without: list[str] = field(default_factory=list)  # video items with no accepted captions

    @property
    def message(self) -> str:
        return (f"Captions applied to {self.videos} video(s) of {self.version} ({self.fields} field(s) filled); "
                f"{self.complete} already had their own, {len(self.without)} have no accepted captions.")


def blackswan_version(version) -> BenchmarkVersion:
    """A BlackSwanSuite version from itself, its id or its label; CrowdError 404 otherwise."""
    if isinstance(version, BenchmarkVersion):
        found = version if version.benchmark.slug == SLUG else None
    else:
        text = str(version or "").strip()
        found = BenchmarkVersion.objects.select_related("benchmark").filter(benchmark__slug=SLUG, label=text).first()
    if found is None:
        raise CrowdError(f"There is no BlackSwanSuite version {str(version)[:100]!r}.", status=404)
    return found


def unfrozen_versions():
    return BenchmarkVersion.objects.filter(benchmark__slug=SLUG, frozen=False).order_by("label")


def _item_video_id(item: BenchmarkItem) -> int | None:
    for media in item.media.all():
        if media.role == "video" and media.video_id:
            return media.video_id
    return None


def apply_captions(version, user) -> Applied:
    """Fill the accepted captions into the `video` items of an unfrozen BlackSwanSuite version (a version, its
    id or label), where an item has none of its own, and note it in the version's description. 403 for a
    user who is no curator, 404 for no such version, 409 for a frozen one; nothing changes then."""
    if not has_role(user, CURATOR, ADMIN):
        raise CrowdError("Only curators apply captions to versions.", status=403)
    version = blackswan_version(version)
    with transaction.atomic():
        version = BenchmarkVersion.objects.select_for_update().select_related("benchmark").get(pk=version.pk)
        if version.frozen:
            raise CrowdError(f"Version {version} is frozen: its items cannot change. Build a new version instead.",
                             status=409)
        items = list(BenchmarkItem.objects.select_for_update(of=("self",))
                     .filter(version=version, payload__kind="video").prefetch_related("media").order_by("external_id"))
        video_of = {item.pk: _item_video_id(item) for item in items}
        accepted = accepted_by_video({v for v in video_of.values() if v is not None})
        applied, slugs = Applied(version), set()
        for item in items:
            found = accepted.get(video_of[item.pk])
            if found is None:
                applied.without.append(item.external_id)
                continue
            payload, filled = fill_payload(item.payload, found.captions)
            if not filled:
                applied.complete += 1
                continue
            try:
                validate_payload(SLUG, payload)
                item.payload = payload
                item.save(update_fields=["payload"])
            except FrozenError as exc:
                raise CrowdError(" ".join(exc.messages), status=409) from None
            except ValidationError as exc:
                raise CrowdError(f"{item.external_id}: the captions do not fit its payload: "
                                 + "; ".join(exc.messages)) from None
            applied.videos += 1
            applied.fields += len(filled)
            slugs.add(found.study_slug)
        if applied.videos:
            note = (f"{describe(applied.videos, len(items), slugs)[:-1]}, applied by "
                    f"{user.get_username()} on {timezone.now():%Y-%m-%d %H:%M} UTC.")
            version.description = f"{version.description}\n{note}".strip()
            version.save(update_fields=["description"])
    return applied


# --- The curator's page -----------------------------------------------------------------------------------

def study_rows(study: Study) -> list[dict]:
    """Per video of the study: its item, its split, submissions counted by review state, accepted captions."""
    items = list(study.items.filter(role=StudyItem.Role.REGULAR).select_related("video").annotate(
        approved=Count("claims__submission", filter=Q(claims__submission__review_state=Submission.Review.APPROVED)),
        pending=Count("claims__submission", filter=Q(claims__submission__review_state=Submission.Review.PENDING)),
        rejected=Count("claims__submission", filter=Q(claims__submission__review_state=Submission.Review.REJECTED)),
    ).order_by("external_id"))
    accepted = accepted_by_video({item.video_id for item in items if item.video_id})
    rows = []
    for item in items:
        found = accepted.get(item.video_id)
        rows.append({"item": item, "video": item.video, "approved": item.approved, "pending": item.pending,
                     "rejected": item.rejected, "captions": found.captions if found else None,
                     "from_study": found.study_slug if found else "",
                     "submission": found.submission.pk if found else None})
    return rows


KIND = kinds.register(kinds.StudyKind(
    STUDY_KIND, readable, clean_answers, uses_form=False, one_item_per_video=True, own_media=True, fixed_form=FORM,
    review_media=seen_clips, pages=(("Captions (+P/+PC)", "blackswan-captions"),), item_rows=shown_rows,
    item_row=item_row, task_media=task_media))
