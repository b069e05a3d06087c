"""Curators' view of workers' profiles: listing them with their attributes and editing one worker's
attributes (known ones normalised by `worker_attributes.normalise`, an empty value removes one)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.db.models import Q

from annotation.crowd import worker_attributes
from annotation.crowd.errors import CrowdError
from annotation.crowd.models import WorkerProfile

PAGE_SIZE = 50


class AttributesRefused(CrowdError):
    """Attribute values that cannot be kept; `details` maps each attribute to what is wrong."""

    status = 400


def page_of_profiles(query: str = "", page=None):
    """A page of worker profiles, matching `query` in the username or the platform's worker id."""
    found = WorkerProfile.objects.select_related("user").order_by("user__username")
    query = (query or "").strip()
    if query:
        found = found.filter(Q(user__username__icontains=query) | Q(platform_worker_id__icontains=query))
    return Paginator(found, PAGE_SIZE).get_page(page)


def profile_of(username: str) -> WorkerProfile | None:
    """The worker's profile (made for an existing account that has none yet); None for no account."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        return None
    return WorkerProfile.objects.get_or_create(user=user)[0]


def known_values(profile: WorkerProfile) -> dict:
    return {name: (profile.attributes or {}).get(name, "") for name in worker_attributes.KNOWN}


def set_known(profile: WorkerProfile, values: dict) -> WorkerProfile:
    """Set the known attributes given in `values` (empty removes one); other attributes stay."""
    attributes = dict(profile.attributes or {})
    problems = {}
    for name in worker_attributes.KNOWN:
        if name not in values:
            continue
        text = str(values[name] if values[name] is not None else "").strip()
        if not text:
            attributes.pop(name, None)
            continue
        try:
            attributes[name] = worker_attributes.normalise(name, text)
        except ValueError as exc:
            problems[name] = str(exc)
    if problems:
        raise AttributesRefused("; ".join(f"{worker_attributes.label(n)}: {m}" for n, m in problems.items()) + ".",
                                details=problems)
    profile.attributes = attributes
    profile.save(update_fields=["attributes"])
    return profile
