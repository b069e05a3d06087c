"""Workers see the media of the items they are working on now, and nothing else.

Items of staged studies (BlackSwanSuite's staged reveal) are the exception: their `video` is the
parent of the split, which no worker streams; what they may stream is the clip their current step
shows (`annotation.blackswan.staged.may_stream`).
"""

from annotation.access import media_grant
from annotation.blackswan import staged
from annotation.crowd.models import Claim
from annotation.models import Image, Video


@media_grant
def media_of_active_claims(user, asset) -> bool:
    field = {Video: "item__video", Image: "item__image"}.get(type(asset))
    if field is None:
        return False
    return (Claim.objects.filter(worker=user, status=Claim.Status.ACTIVE, **{field: asset})
            .exclude(study__step_kind=staged.STUDY_KIND).exists())


@media_grant
def clips_of_current_staged_step(user, asset) -> bool:
    return isinstance(asset, Video) and staged.may_stream(user, asset)
