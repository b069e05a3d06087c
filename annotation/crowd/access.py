"""Who may see what of the crowd engine's work.

Submissions (workers' answers): one rule, `can_read_submissions`, for the API, the admin, the
pages and the exports. Curators review them, researchers analyse them (study reports, exports of
human judgments), admins do everything; workers see only their own claims. Curators are not
assigned to single studies (every curator runs every study), so the rule is the same for every
study. Deciding on submissions (approve, reject, edit) is for reviewers only: curators and admins.

Media: workers see the media of the items they are working on now, and nothing else. Items of
staged studies (BlackSwanSuite's staged reveal) are the exception: their `video` is the parent of
the split, which no worker streams; what they may stream is the clip their current step shows
(`annotation.blackswan.staged.may_stream`). So are items of BlackSwanSuite captions studies: their
workers stream V_pre and V_post of the item's split, never the parent video nor V_main
(`annotation.blackswan.caption_study.may_stream`). Whatever these grants allow, a registered media veto
withholds (`annotation.access`): while a worker's staged claim runs, no claim in another study shows them
what its step still hides (`annotation.blackswan.reveal_guard`).
"""

from annotation.access import media_grant
from annotation.benchmarks.blackswan import caption_study, staged
from annotation.crowd.models import Claim
from annotation.models import Image, Video
from config.roles import ADMIN, CURATOR, RESEARCHER, has_role

SUBMISSION_READERS = (CURATOR, RESEARCHER, ADMIN)
SUBMISSION_REVIEWERS = (CURATOR, ADMIN)


def can_read_submissions(user) -> bool:
    """Whether `user` may read workers' submissions (of any study; see the module's docstring)."""
    return has_role(user, *SUBMISSION_READERS)


def can_review_submissions(user) -> bool:
    return has_role(user, *SUBMISSION_REVIEWERS)


@media_grant
def media_of_active_claims(user, asset) -> bool:
    field = {Video: "item__video", Image: "item__image"}.get(type(asset))
    if field is None:
        return False
    return (Claim.objects.filter(worker=user, status=Claim.Status.ACTIVE, **{field: asset})
            .exclude(study__step_kind__in=(staged.STUDY_KIND, caption_study.STUDY_KIND)).exists())


@media_grant
def clips_of_current_staged_step(user, asset) -> bool:
    return isinstance(asset, Video) and staged.may_stream(user, asset)


@media_grant
def clips_of_caption_items(user, asset) -> bool:
    return isinstance(asset, Video) and caption_study.may_stream(user, asset)
