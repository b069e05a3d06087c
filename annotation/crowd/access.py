"""Workers see the media of the items they are working on now, and nothing else."""

from annotation.access import media_grant
from annotation.crowd.models import Claim
from annotation.models import Image, Video


@media_grant
def media_of_active_claims(user, asset) -> bool:
    field = {Video: "item__video", Image: "item__image"}.get(type(asset))
    if field is None:
        return False
    return Claim.objects.filter(worker=user, status=Claim.Status.ACTIVE, **{field: asset}).exists()
