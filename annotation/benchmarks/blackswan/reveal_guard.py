"""The staged reveal across studies: no other study shows a worker what their staged step still hides.

A worker in the middle of a staged claim (`annotation.benchmarks.blackswan.staged`: Forecaster, Detective, Reporter)
must not learn from anywhere else how its video goes on. While the claim is active (claimed and not yet
submitted, returned or timed out), no claim of any study, of any kind, gives that worker

- the parent video of the claim's split, nor
- any clip cut from that video, by this split or another split of it, that the claim's current step does
  not show: at the Forecaster step everything but V_pre; at the Detective step V_main, the full clip and
  the Detective clip; at the Reporter step the Detective clip.

This is one media veto (`withheld_outcome`, registered with `annotation.access.media_veto`): it wins over
every grant, so it holds for every study kind that grants media, now or later, for the file and its poster,
with or without a Range header. The crowd engine asks the same decision before it hands out an item
(`annotation.crowd.claim_checks`): an item whose video the veto withholds is passed over, and when nothing
else is left the claim is refused (409, with the reason below).

The other way round (`seen_outcome`, a claim check): a staged item does not go to a worker who has or had a
claim, in any study and in any state, on an item whose video is the item's parent video or a clip of it
that the Forecaster step does not show. That worker may already know how the video ends, and the
Forecaster step must not. Staff (curators, researchers, admins) see the whole library by their role; the
veto does not apply to them.
"""

from django.utils.translation import gettext as _

from annotation.access import media_veto
from annotation.benchmarks.blackswan import staged
from annotation.crowd.claim_checks import claim_check
from annotation.crowd.models import Claim
from annotation.models import Video, VideoSplit

CLIP_FIELDS = tuple(staged.PART_FIELDS.values())
FIRST_STEP = staged.STEPS[0]


def _split_id(value) -> int | None:
    return int(value) if str(value).isdigit() else None


def _splits_of(parents) -> dict[int, dict]:
    """Every split of the `parents` videos (any state), with its parent and its clips' ids by part."""
    found = VideoSplit.objects.filter(video_id__in=list(parents)).values("pk", "video_id", *CLIP_FIELDS)
    return {row["pk"]: {"parent": row["video_id"],
                        "clips": {part: row[field] for part, field in staged.PART_FIELDS.items() if row[field]}}
            for row in found}


def _hidden(parent: int, split_id: int | None, step: str, splits: dict[int, dict]) -> set[int]:
    """The videos a staged claim on `split_id` of `parent`, at `step`, keeps from its worker: the parent and
    every clip of any split of it, less the clips of its own split that the step shows."""
    hidden = {parent}
    for split in splits.values():
        if split["parent"] == parent:
            hidden |= set(split["clips"].values())
    own = splits.get(split_id, {}).get("clips", {})
    return hidden - {own[part] for part in staged.STREAMABLE[step] if part in own}


@media_veto
def withheld_outcome(user, asset) -> str:
    """Why `asset` is withheld from `user` while one of their staged claims runs ("" when it is not)."""
    if not isinstance(asset, Video):
        return ""
    running = list(Claim.objects.filter(worker=user, status=Claim.Status.ACTIVE, study__step_kind=staged.STUDY_KIND,
                                        item__video__isnull=False)
                   .values_list("step", "item__video_id", "item__payload__split_id", "study__name"))
    if not running:
        return ""
    splits = _splits_of({parent for _step, parent, _split, _name in running})
    for step, parent, split_id, name in running:
        if asset.pk in _hidden(parent, _split_id(split_id), step or FIRST_STEP, splits):
            return _("You are working on the staged task about this video in the study '%(study)s'. Until you "
                     "finish it, no other task shows you more of this video.") % {"study": name}
    return ""


@claim_check
def seen_outcome(study, item, worker) -> str:
    """Why a staged item may not go to `worker`: they have or had a claim on its video beyond V_pre."""
    if not staged.is_staged(study) or item.video_id is None:
        return ""
    splits = _splits_of({item.video_id})
    outcome = _hidden(item.video_id, _split_id((item.payload or {}).get("split_id")), FIRST_STEP, splits)
    earlier = (Claim.objects.filter(worker=worker, item__video_id__in=outcome).exclude(item_id=item.pk)
               .values_list("study__name", flat=True).first())
    if earlier is None:
        return ""
    return _("You have already worked on this video in the study '%(study)s', so you may know how it ends. The "
             "staged task needs people who see it for the first time.") % {"study": earlier}
