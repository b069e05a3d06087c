"""Opening, pausing and closing a study: the API, the admin and the pages all come here.

The allowed moves are `Study.STATES`; on top of them a study opens only once it has items.
"""

from django.db import transaction

from annotation.crowd.errors import CrowdError
from annotation.crowd.models import Study
from config import state

VERBS = {"open": Study.State.OPEN, "pause": Study.State.PAUSED, "close": Study.State.CLOSED}


def change(study: Study, verb: str, user=None, reason: str = "") -> Study:
    """Apply `verb` (open, pause, close) to the study and record it; CrowdError (409) if its
    current state does not allow it, or if it has no items to open with."""
    if verb not in VERBS:
        raise CrowdError(f"Unknown study action {verb!r}; choose {', '.join(VERBS)}.")
    target = VERBS[verb]
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        if not Study.STATES.allows(study.state, target):
            raise CrowdError(f"A {study.state} study cannot {verb}.", status=409)
        if target == Study.State.OPEN and not study.items.exists():
            raise CrowdError("Add items before opening the study.", status=409)
        state.transition(study, target, user, reason, scope=study)
    return study


def verb_for(target: str) -> str:
    """The action that moves a study to `target`."""
    return next(verb for verb, state_ in VERBS.items() if state_ == target)


LABELS = {"open": "Open", "pause": "Pause", "close": "Close"}


def moves(study: Study) -> list[dict]:
    """The actions the study's state allows now, as {"verb", "label"} in a fixed order ("Reopen"
    for a paused study)."""
    allowed = Study.STATES.targets(study.state)
    return [{"verb": verb, "label": "Reopen" if verb == "open" and study.state == Study.State.PAUSED else LABELS[verb]}
            for verb, target in VERBS.items() if target in allowed]
