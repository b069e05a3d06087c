"""Read paths of the BlackSwanSuite curation pages: its staged-reveal and localization studies."""

from django.db.models import Count, Q

from annotation.benchmarks.blackswan import localization_study, staged
from annotation.crowd.models import Claim, Study


def staged_studies():
    """The staged-reveal studies, newest first, with their finished claims counted as `finished_claims`."""
    finished = Q(claims__status__in=[Claim.Status.SUBMITTED, Claim.Status.APPROVED])
    return (Study.objects.filter(step_kind=staged.STUDY_KIND)
            .annotate(finished_claims=Count("claims", filter=finished)).order_by("-created_at"))


def localization_studies():
    """The localization studies, newest first."""
    return Study.objects.filter(step_kind=localization_study.STUDY_KIND).order_by("-created_at", "-id")
