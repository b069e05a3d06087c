"""Read paths of the BlackSwanSuite curation pages: its staged-reveal studies."""

from django.db.models import Count, Q

from annotation.blackswan import staged
from annotation.crowd.models import Claim, Study


def staged_studies():
    """The staged-reveal studies, newest first, with their finished claims counted as `finished_claims`."""
    finished = Q(claims__status__in=[Claim.Status.SUBMITTED, Claim.Status.APPROVED])
    return (Study.objects.filter(step_kind=staged.STUDY_KIND)
            .annotate(finished_claims=Count("claims", filter=finished)).order_by("-created_at"))
