"""Records every app shares: the one insert-only history of state changes.

They live in `config` (the project package, installed as an app) because `config` sits below the
three layers: `generation`, `annotation` and `evaluation` all import it, and it imports none of
them, so a `Job` (generation), a `Study` (annotation) and an `EvaluationRun` (evaluation) write
their history to the same table without any layer reaching upwards. The change rules themselves
are in `config.state`.
"""

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.utils import timezone

INSERT_ONLY = "History is insert-only."


class InsertOnlyQuerySet(models.QuerySet):
    """Refuses bulk rewrites; the database triggers (migration `config.0002`) refuse the rest."""

    def update(self, **kwargs):
        raise PermissionError(INSERT_ONLY)

    def delete(self):
        raise PermissionError(INSERT_ONLY)

    def of(self, target, pk=None):
        """The changes of one object: an instance, or a model class with the object's id."""
        model = target if isinstance(target, type) else type(target)
        object_id = pk if isinstance(target, type) else target.pk
        return self.filter(content_type=ContentType.objects.get_for_model(model), object_id=object_id)

    def about(self, *models_):
        """The changes of any object of these models."""
        return self.filter(content_type__in=[ContentType.objects.get_for_model(m) for m in models_])

    def within(self, scope):
        """The changes recorded inside one scope object (e.g. everything that happened in a study)."""
        return self.filter(scope_type=ContentType.objects.get_for_model(type(scope)), scope_id=scope.pk)


class StateChange(models.Model):
    """Insert-only record of one state change of any object: what, from, to, who, why, when.

    `target` is the object that changed (a study, a claim, a submission, a video split, a run, a
    job, …); `scope` optionally names the object it happened in (a claim's study), so that a
    study's whole history is one query. Rows are never updated or deleted."""

    content_type = models.ForeignKey(ContentType, on_delete=models.PROTECT, related_name="+")
    object_id = models.BigIntegerField()
    target = GenericForeignKey("content_type", "object_id")
    scope_type = models.ForeignKey(ContentType, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    scope_id = models.BigIntegerField(null=True, blank=True)
    scope = GenericForeignKey("scope_type", "scope_id")
    from_state = models.CharField(max_length=32, blank=True)
    to_state = models.CharField(max_length=32)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                              related_name="+")
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    objects = InsertOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = "state change"
        indexes = [
            models.Index(fields=["content_type", "object_id"], name="state_change_target_idx"),
            models.Index(fields=["scope_type", "scope_id"], name="state_change_scope_idx"),
        ]

    def __str__(self):
        return f"{self.content_type.model} {self.object_id}: {self.from_state or '∅'} → {self.to_state}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise PermissionError(INSERT_ONLY)
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise PermissionError(INSERT_ONLY)
