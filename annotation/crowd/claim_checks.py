"""Whether an item may go to a worker, beyond the hand-out rules of `assignment` (places, leases, checks).

A worker is never handed an item whose media they could not open: when the media decision withholds the
item's video or image from them (`annotation.access.withheld`, a registered media veto), the item is passed
over. Workflows add their own reasons with `@claim_check` (e.g. an item that reveals a video in steps does not
go to a worker who has already seen how the video ends). `assignment.claim_next` passes such items over and hands
out another; when nothing else is left it refuses with 409 and the reason.
"""

from collections.abc import Callable

from annotation.access import withheld

_CHECKS: list[Callable] = []


def claim_check(func: Callable) -> Callable:
    """Register `func(study, item, worker) -> str`: why the item may not go to the worker, in words they
    may read ("" when it may). Called for every item the claim service is about to hand out, so it must
    be cheap for the items it does not concern."""
    _CHECKS.append(func)
    return func


def refusal(study, item, worker) -> str:
    """Why `item` of `study` may not go to `worker` ("" when it may)."""
    for asset in (item.video if item.video_id else None, item.image if item.image_id else None):
        if asset is not None:
            reason = withheld(worker, asset)
            if reason:
                return reason
    for check in _CHECKS:
        reason = check(study, item, worker)
        if reason:
            return reason
    return ""
