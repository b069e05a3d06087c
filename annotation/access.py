"""Who may see which media file.

Curators, researchers and admins see the whole library. Anyone else sees a file only when a
registered grant says so (the crowd engine grants annotators the media of their own claims,
limited to what their current step allows).
"""

from collections.abc import Callable

from config.roles import STAFF_ROLES, has_role

_GRANTS: list[Callable] = []


def media_grant(func: Callable) -> Callable:
    """Register `func(user, asset) -> bool`; any grant returning True allows access."""
    _GRANTS.append(func)
    return func


def can_view_media(user, asset) -> bool:
    if not user.is_authenticated:
        return False
    if has_role(user, *STAFF_ROLES):
        return True
    return any(grant(user, asset) for grant in _GRANTS)
