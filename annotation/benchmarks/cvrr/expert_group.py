"""The CVRR-ES experts: a qualification-gated group of workers (seeds/003 §3.2 "Quality of QA pairs").

Every expert assessment study requires the qualification `EXPERT` (`cvrr-expert`, made when first
needed). Creating a study grants nothing: curators and admins grant it by hand (`grant`, on the expert
assessment page or with `manage.py cvrr_expert_assessment grant`), or a qualification test for it does.
A worker without it is refused an item with the qualification's name (`annotation.crowd.eligibility`).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.crowd import eligibility
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Qualification, WorkerQualification
from config.roles import ADMIN, CURATOR, has_role

EXPERT = "cvrr-expert"
DESCRIPTION = ("CVRR-ES experts: may assess the quality of QA pairs (dimension fit, answerable from the video "
               "alone, correct ground truth).")


def qualification() -> Qualification:
    """The qualification every expert assessment study requires (made when first needed)."""
    found, _ = Qualification.objects.get_or_create(name=EXPERT, defaults={"description": DESCRIPTION})
    return found


def _curator(user) -> None:
    if not has_role(user, CURATOR, ADMIN):
        raise CrowdError("Only curators and admins manage the CVRR-ES experts.", status=403)


def members() -> list:
    """The users who hold the expert qualification, by username."""
    return [granted.profile.user for granted in WorkerQualification.objects
            .filter(qualification__name=EXPERT).select_related("profile__user").order_by("profile__user__username")]


def user_named(username: str):
    """The user with this username; CrowdError (400) naming it otherwise."""
    username = (username or "").strip()
    found = get_user_model().objects.filter(username=username).first() if username else None
    if found is None:
        raise CrowdError(f"No user {username!r}." if username else "Name the user (their username).")
    return found


def grant(user, by) -> bool:
    """Make `user` an expert (True when newly granted); curators and admins only (403)."""
    _curator(by)
    with transaction.atomic():
        _, made = WorkerQualification.objects.get_or_create(
            profile=eligibility.profile_for(user), qualification=qualification(),
            defaults={"source": f"manual:{by.username}"[:64]})
    return made


def revoke(user, by) -> bool:
    """Take the expert qualification back (True when it was held); curators and admins only (403)."""
    _curator(by)
    deleted, _ = WorkerQualification.objects.filter(profile__user=user, qualification__name=EXPERT).delete()
    return bool(deleted)
