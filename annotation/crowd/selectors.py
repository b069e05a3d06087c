"""Read paths of the crowd pages and API: the studies, claims and submissions they show."""

from annotation.crowd.models import Claim, Study, Submission


def study_by_slug(slug: str) -> Study | None:
    return Study.objects.filter(slug=slug).first()


def studies_with_settings():
    """Studies with their required qualification and creator, as the study page shows them."""
    return Study.objects.select_related("required_qualification", "created_by")


def claims_of(worker):
    """A worker's own claims with their study, item and draft."""
    return Claim.objects.filter(worker=worker).select_related("study", "item", "draft")


def handed_in_claims_of(worker):
    """A worker's own claims that were handed in (they have a submission)."""
    return claims_of(worker).filter(status__in=(Claim.Status.SUBMITTED, Claim.Status.APPROVED,
                                                Claim.Status.REJECTED), submission__isnull=False)


def submissions_with_context():
    """Submissions with the study, item and worker of their claim and their reviewer."""
    return Submission.objects.select_related("claim__study", "claim__item", "claim__worker", "reviewed_by")
