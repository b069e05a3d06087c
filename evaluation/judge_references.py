"""Judge references written back beside frozen items: people's explanations a curator approved as
references for an item's LLM judge (`JudgeReference`, insert-only with one revocation).

A frozen item's payload cannot change, so the explanations validated after freezing live here and
reach the judge through the requests: `attach` puts an item's approved references into each of its
requests' `extra[EXTRA_KEY]` as `[{"id", "text"}]` in approval order (`runner.plan` and
`scoring.item_requests` call it, so every path that judges sees them). A judge kind that uses
references (NL-EYE's explanation judge) reads them from there and records which it used.

`approve` writes one reference (refusing a second active one with the same text, compared with
whitespace collapsed and in lower case), `revoke` revokes one; both are for curators and admins.
Where the candidates come from (human-baseline studies and explanation votes) is
`evaluation.human_eval.references`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, Max
from django.utils import timezone

from config.roles import ADMIN, CURATOR, has_role
from evaluation.models import JudgeReference

EXTRA_KEY = "judge_references"
APPROVERS = (CURATOR, ADMIN)


class ReferenceError(ValidationError):
    """A reference that cannot be approved or revoked as asked."""


def normal_text(text) -> str:
    """The text with runs of white space as one space, stripped."""
    return re.sub(r"\s+", " ", str(text or "")).strip()


def text_key(text) -> str:
    """What two texts must share to be the same reference: SHA-256 of the normal text in lower case."""
    return hashlib.sha256(normal_text(text).lower().encode()).hexdigest()


def require_approver(user) -> None:
    if not has_role(user, *APPROVERS):
        raise PermissionDenied("Only curators and admins approve or revoke judge references.")


def active():
    return JudgeReference.objects.filter(revoked_at__isnull=True)


def approved_by_item(item_pks) -> dict[int, list[JudgeReference]]:
    """item pk → its active references, in approval order."""
    found: dict[int, list[JudgeReference]] = {}
    for reference in active().filter(item_id__in=list(set(item_pks))).order_by("item_id", "approved_at", "pk"):
        found.setdefault(reference.item_id, []).append(reference)
    return found


def attach(pairs) -> list:
    """The requests of (item pk, request) pairs, each with its item's active references in
    `extra[EXTRA_KEY]` (requests of items without any are returned as they are)."""
    pairs = list(pairs)
    found = approved_by_item(pk for pk, _ in pairs)
    out = []
    for item_pk, request in pairs:
        references = found.get(item_pk)
        if references:
            request = dataclasses.replace(request, extra={
                **request.extra, EXTRA_KEY: [{"id": ref.pk, "text": ref.text} for ref in references]})
        out.append(request)
    return out


def fingerprint(version) -> str:
    """What a version's judge references are now (part of the results' cache key)."""
    stats = JudgeReference.objects.filter(item__version=version).aggregate(
        n=Count("id"), last=Max("id"), revoked=Count("revoked_at"), at=Max("revoked_at"))
    return f"{stats['n']}:{stats['last']}:{stats['revoked']}:{stats['at'].isoformat() if stats['at'] else '-'}"


def approve(user, item, text: str, *, study=None, submission=None, vote_study=None, votes=None, voters=None,
            details: dict | None = None) -> tuple[JudgeReference, bool]:
    """Approve `text` as a reference of `item`: (the reference, True) when written now, (the active one
    with the same text, False) when it was approved before."""
    require_approver(user)
    text = normal_text(text)
    if not text:
        raise ReferenceError("An empty explanation cannot be a judge reference.")
    if not item.version.frozen:
        raise ReferenceError(f"{item.version} is not frozen: write the explanation into the item's payload instead.")
    key = text_key(text)
    existing = active().filter(item=item, text_key=key).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            made = JudgeReference.objects.create(
                item=item, text=text, text_key=key, study=study, submission=submission, vote_study=vote_study,
                votes=votes, voters=voters, details=details or {}, approved_by=user)
    except IntegrityError:  # approved at the same moment by someone else
        return active().get(item=item, text_key=key), False
    return made, True


def revoke(user, reference: JudgeReference, reason: str = "") -> JudgeReference:
    """Revoke an active reference (it stays as history); ReferenceError when it was revoked before."""
    require_approver(user)
    with transaction.atomic():
        reference = JudgeReference.objects.select_for_update().get(pk=reference.pk)
        if reference.revoked_at is not None:
            raise ReferenceError(f"Judge reference #{reference.pk} was revoked already.")
        reference.revoked_by, reference.revoked_at = user, timezone.now()
        reference.revoke_reason = normal_text(reason)[:500]
        reference.save(update_fields=list(JudgeReference.REVOKE_FIELDS))
    return reference
