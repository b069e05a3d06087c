"""BlackSwanSuite's records of its own: the steps of a staged claim (`annotation.benchmarks.blackswan.staged`).

They belong to the `annotation` app (its migrations and tables) like the crowd engine's records they point to.
"""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_noop

from annotation.crowd.models import Claim

# the names stay English in records; `gettext_noop` puts them in the catalogue for the worker pages
STAGED_STEP_CHOICES = [("forecaster", gettext_noop("Forecaster")), ("detective", gettext_noop("Detective")),
                       ("reporter", gettext_noop("Reporter"))]


class StagedStep(models.Model):
    """One step of a staged claim (`annotation.benchmarks.blackswan.staged`): its autosaved draft and, once submitted,
    its frozen answers (a trigger refuses changes then)."""

    STEP_CHOICES = STAGED_STEP_CHOICES
    STEPS = tuple(step for step, _ in STAGED_STEP_CHOICES)

    claim = models.ForeignKey(Claim, on_delete=models.PROTECT, related_name="staged_steps")
    step = models.CharField(max_length=16, choices=STEP_CHOICES)
    draft = models.JSONField(default=dict, blank=True)
    draft_revision = models.PositiveIntegerField(default=0)
    draft_saved_at = models.DateTimeField(null=True, blank=True)
    answers = models.JSONField(null=True, blank=True, help_text="the submitted answers; frozen once set")
    active_seconds = models.FloatField(default=0, help_text="time with the page visible and focused")
    wall_seconds = models.FloatField(null=True, blank=True, help_text="from the step's opening to its submission")
    started_at = models.DateTimeField(help_text="when the step opened (the claim's time for the first step)")
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["claim_id", "started_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["claim", "step"], name="one_staged_step_per_claim_and_step"),
            models.CheckConstraint(condition=Q(step__in=[step for step, _ in STAGED_STEP_CHOICES]),
                                   name="staged_step_known_step"),
            models.CheckConstraint(
                condition=Q(submitted_at__isnull=True, answers__isnull=True)
                | Q(submitted_at__isnull=False, answers__isnull=False, wall_seconds__isnull=False),
                name="staged_step_submitted_with_answers",
            ),
        ]

    def __str__(self):
        return f"claim {self.claim_id} {self.step} ({'submitted' if self.submitted_at else 'open'})"
