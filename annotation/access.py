"""Who may see which media file.

Curators, researchers and admins see the whole library. Anyone else sees a file only when a
registered grant says so (the crowd engine grants annotators the media of their own claims,
limited to what their current step allows) and no registered veto withholds it. A veto wins over
every grant, so a rule that must hold whatever study hands out the file is written once, as a veto
(BlackSwanSuite's staged reveal: while a worker's staged claim runs, no other claim shows them how
its video ends). The crowd engine asks the same question (`withheld`) before it hands out an item,
so a worker is never given an item whose media they could not open.
"""

from collections.abc import Callable

from config.roles import STAFF_ROLES, has_role

_GRANTS: list[Callable] = []
_VETOES: list[Callable] = []


def media_grant(func: Callable) -> Callable:
    """Register `func(user, asset) -> bool`; any grant returning True allows access (unless a veto withholds it)."""
    _GRANTS.append(func)
    return func


def media_veto(func: Callable) -> Callable:
    """Register `func(user, asset) -> str`: why the asset is withheld from the user whatever the grants say, in
    words the user may read ("" when this veto does not withhold it). Staff are never vetoed."""
    _VETOES.append(func)
    return func


def _vetoed(user, asset) -> str:
    for veto in _VETOES:
        reason = veto(user, asset)
        if reason:
            return reason
    return ""


def withheld(user, asset) -> str:
    """Why the media decision withholds `asset` from `user` whatever a grant says ("" when no veto does)."""
    if not user.is_authenticated or has_role(user, *STAFF_ROLES):
        return ""
    return _vetoed(user, asset)


def can_view_media(user, asset) -> bool:
    if not user.is_authenticated:
        return False
    if has_role(user, *STAFF_ROLES):
        return True
    return not _vetoed(user, asset) and any(grant(user, asset) for grant in _GRANTS)
