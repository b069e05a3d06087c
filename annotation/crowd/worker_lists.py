"""A study's worker lists, edited by name: "only these workers" (`include_workers`: when any are
listed, nobody else may work) and "never these workers" (`exclude_workers`). The lists are read in
the claim path by `annotation.crowd.eligibility`; this module turns text into those lists."""

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study

LISTS = {"include_workers": "only these workers", "exclude_workers": "never these workers"}


class UnknownWorkers(CrowdError):
    """Usernames that name no account; `details` maps each list to its unknown names."""

    status = 400


def usernames(text: str) -> list[str]:
    """The usernames of a text, one a line (commas and spaces also separate), in order, each once."""
    names = [name for line in (text or "").splitlines() for name in line.replace(",", " ").split()]
    return list(dict.fromkeys(names))


def as_text(study: Study, field: str) -> str:
    """A list as the settings page shows it: its usernames, one a line, in alphabetical order."""
    return "\n".join(sorted(getattr(study, field).values_list("username", flat=True)))


def resolve(lists: dict[str, list[str]]) -> dict[str, list]:
    """The accounts of each list; UnknownWorkers (400) naming every unknown username, per list."""
    wanted = {name for names in lists.values() for name in names}
    found = {user.username: user for user in get_user_model().objects.filter(username__in=wanted)}
    unknown = {field: [name for name in names if name not in found] for field, names in lists.items()}
    unknown = {field: names for field, names in unknown.items() if names}
    if unknown:
        raise UnknownWorkers("Unknown usernames: " + "; ".join(
            f"{LISTS.get(field, field)}: {', '.join(names)}" for field, names in unknown.items()) + ".",
            details=unknown)
    return {field: [found[name] for name in names] for field, names in lists.items()}


def set_lists(study: Study, lists: dict[str, list[str]]) -> None:
    """Replace the study's lists given in `lists` (field → usernames); nothing changes when any
    username is unknown."""
    strange = sorted(set(lists) - set(LISTS))
    if strange:
        raise CrowdError(f"unknown worker list {', '.join(strange)}; the lists are {', '.join(LISTS)}")
    accounts = resolve(lists)
    with transaction.atomic():
        for field, users in accounts.items():
            getattr(study, field).set(users)
