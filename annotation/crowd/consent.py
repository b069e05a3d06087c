"""A study's consent / introduction page, agreed to once per worker and kept in the database, so the
worker pages and the claim API ask for it alike.

A worker needs to agree when the study has consent text, they have not agreed yet and they hold no
claim of the study (a worker who started before the page was added goes on). The claim path calls
`check_before_claim` only for a study with consent text, so a study without one costs no statement.
"""

from django.db import IntegrityError, transaction

from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Claim, Study, StudyConsent


class ConsentNeeded(CrowdError):
    """The study asks for the worker's consent before their first item."""

    status = 409


def asks_consent(study: Study) -> bool:
    return bool(study.consent_text.strip())


def needs_consent(study: Study, worker) -> bool:
    """Whether the worker must agree to the study's consent page before their first item."""
    if not asks_consent(study):
        return False
    return not (StudyConsent.objects.filter(study=study, worker=worker).exists()
                or Claim.objects.filter(study=study, worker=worker).exists())


def check_before_claim(study: Study, worker) -> None:
    """ConsentNeeded (409) when the worker must first agree to the study's consent page."""
    if needs_consent(study, worker):
        raise ConsentNeeded(
            f"this study asks for your consent first: read its consent page (shown on the study's task page) "
            f"and agree to it there or with POST /api/studies/{study.slug}/consent/ before claiming an item.")


def give(study: Study, worker) -> StudyConsent:
    """Record that the worker agreed to the study's consent page; agreeing again keeps the first time."""
    found = StudyConsent.objects.filter(study=study, worker=worker).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            return StudyConsent.objects.create(study=study, worker=worker)
    except IntegrityError:  # a concurrent request of the same worker recorded it first
        return StudyConsent.objects.get(study=study, worker=worker)
