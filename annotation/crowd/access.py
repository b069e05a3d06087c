"""Who may see what of the crowd engine's work.

Submissions (workers' answers): one rule, `can_read_submissions`, for the API, the admin, the
pages and the exports. Curators review them, researchers analyse them (study reports, exports of
human judgments), admins do everything; workers see only their own claims. Curators are not
assigned to single studies (every curator runs every study), so the rule is the same for every
study. Deciding on submissions (approve, reject, edit) is for reviewers only: curators and admins.

Media: workers see the media of the items they are working on now, and nothing else. A study kind may
grant its workers' media itself (`StudyKind.own_media`, e.g. only some clips of an item's video, never
the whole of it): the item's own image and video are then not granted here, the kind's own media grant
decides. Whatever the grants allow, a registered media veto withholds (`annotation.access`).
"""

from annotation.access import media_grant
from annotation.crowd import kinds
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
            .exclude(study__step_kind__in=kinds.with_own_media()).exists())
