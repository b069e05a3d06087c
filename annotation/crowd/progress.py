"""Where a worker stands in a study, for the worker's own pages: items handed in, the item in hand,
items still to come, and the pay earned so far. Read-only queries; the claim loop
(`annotation.crowd.assignment`) does not use them.

"Items left" follows the hand-out rules of `assignment.claim_next`: regular items with a free place
(k) that the worker never had (one item per worker, returned or expired ones included), plus the
gold and attention checks that would come at the study's `gold_share` among them. Checks are
counted, never named, so the count does not tell which items are checks.
"""

import math
from dataclasses import dataclass
from decimal import Decimal

from django.utils import timezone

from annotation.crowd.models import Claim, Study, StudyItem

FINISHED = (Claim.Status.SUBMITTED, Claim.Status.APPROVED, Claim.Status.REJECTED)
CHECK_ROLES = (StudyItem.Role.GOLD, StudyItem.Role.ATTENTION)


@dataclass(frozen=True)
class Progress:
    done: int  # items handed in
    current: bool  # an item in hand, its lease still running
    left: int  # items still to come after the one in hand

    @property
    def total(self) -> int:
        return self.done + int(self.current) + self.left

    @property
    def position(self) -> int:
        """The number of the item in hand (or of the next one)."""
        return self.done + 1

    @property
    def has_work(self) -> bool:
        return self.current or self.left > 0


@dataclass(frozen=True)
class Earnings:
    approved: Decimal  # approved items × pay per item
    pending: Decimal  # items awaiting review × pay per item
    currency: str

    @property
    def any(self) -> bool:
        return bool(self.approved or self.pending)


def _free_items(study: Study, worker, roles) -> int:
    return (StudyItem.objects.filter(study=study, role__in=roles, open_slots__gt=0)
            .exclude(claims__worker=worker).count())


def _to_come(gold_share: float, taken: int, regular: int, checks: int) -> int:
    """How many more items `claim_next` would hand out: a check whenever one is due and left,
    otherwise a regular item, until neither comes."""
    left = 0
    while True:
        due = gold_share > 0 and math.floor((taken + 1) * gold_share) > math.floor(taken * gold_share)
        if due and checks:
            checks -= 1
        elif regular:
            regular -= 1
        else:
            return left
        taken += 1
        left += 1


def progress(study: Study, worker, *, now=None) -> Progress:
    """The worker's progress in the study (see the module's docstring)."""
    now = now or timezone.now()
    claims = Claim.objects.filter(study=study, worker=worker)
    taken = claims.count()
    done = claims.filter(status__in=FINISHED).count()
    current = claims.filter(status=Claim.Status.ACTIVE, lease_expires_at__gte=now).exists()
    regular = _free_items(study, worker, (StudyItem.Role.REGULAR,))
    checks = _free_items(study, worker, CHECK_ROLES) if study.gold_share > 0 else 0
    return Progress(done=done, current=current, left=_to_come(study.gold_share, taken, regular, checks))


def earnings(study: Study, worker) -> Earnings:
    """The worker's pay in this study: approved items, and items still awaiting review."""
    counts = {status: Claim.objects.filter(study=study, worker=worker, status=status).count()
              for status in (Claim.Status.APPROVED, Claim.Status.SUBMITTED)}
    return Earnings(approved=study.pay_per_item * counts[Claim.Status.APPROVED],
                    pending=study.pay_per_item * counts[Claim.Status.SUBMITTED], currency=study.currency)
