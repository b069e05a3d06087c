"""The person a management command acts as, named by username on its command line."""

from django.contrib.auth import get_user_model
from django.core.management import CommandError

from config.roles import ADMIN, CURATOR, has_role


def named_user(username: str):
    """The user with this username; CommandError naming it otherwise."""
    found = get_user_model().objects.filter(username=username).first()
    if found is None:
        raise CommandError(f"No user {username!r}.")
    return found


def named_curator(username: str):
    """The curator or admin with this username; CommandError otherwise."""
    user = named_user(username)
    if not has_role(user, CURATOR, ADMIN):
        raise CommandError(f"{user.username} is not a curator.")
    return user
