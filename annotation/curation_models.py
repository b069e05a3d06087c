"""Records of an item's way through a benchmark's curation pipeline, shared by every benchmark.

An item under curation is an ordinary `BenchmarkItem` of an unfrozen version whose payload holds
only what the release holds (the importer's shape), so that freezing it gives a version like an
imported one. What the pipeline needs beside it lives here:

- `CurationRecord`: where the item came from (the crowd submission and its author), the pipeline's
  working fields that are not part of the release (e.g. NL-EYE's augmented prompts and the
  triplet's seed, with the provenance of the proposal they came from) and its current stage;
- `ItemCheck`: a person's validation verdict on one aspect of an item (e.g. "image:premise" for an
  image–text alignment check, "plausibility" for the triplet), insert-only: a later check on the
  same aspect supersedes an earlier one;
- `CategoryDefinition`: one of a benchmark's categories as data a curator edits (e.g. a CVRR-ES
  dimension): its name, description and the instructions its curation steps use (caption
  guidelines, the QA-generation instruction, …);
- `SubgroupLabel`: a library image's subgroup for a bias analysis (C-VQA's perceived gender);
- `ImageAttempt`: one node of an image generation tree for one slot of an item (text-to-image,
  image-to-image or inpainting; parent image, mask, prompt, seed, model and parameters) and which
  attempt a designer picked as the slot's final image.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from config.state import StateMachine


class CurationRecord(models.Model):
    """An item's curation state: its origin, its working fields and its stage."""

    # the moves between stages, declared by each benchmark's pipeline (`annotation.curation_stages`)
    STATES = StateMachine("stage", {})

    item = models.OneToOneField("annotation.BenchmarkItem", on_delete=models.CASCADE, related_name="curation")
    stage = models.CharField(max_length=32, db_index=True, help_text="a stage the benchmark's pipeline names")
    source_submission = models.OneToOneField("annotation.Submission", null=True, blank=True,
                                             on_delete=models.PROTECT, related_name="curation_record")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    working = models.JSONField(default=dict, blank=True,
                               help_text="the pipeline's fields that are not part of the release")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["item_id"]

    def __str__(self):
        return f"curation of {self.item} ({self.stage})"


class ItemCheck(models.Model):
    """A validation verdict on one aspect of an item; insert-only (the latest per aspect counts)."""

    class Verdict(models.TextChoices):
        PASS = "pass", "Passes"
        FAIL = "fail", "Fails"

    item = models.ForeignKey("annotation.BenchmarkItem", on_delete=models.CASCADE, related_name="checks")
    aspect = models.CharField(max_length=64, help_text='e.g. "image:premise" or "plausibility"')
    verdict = models.CharField(max_length=8, choices=Verdict.choices)
    note = models.TextField(blank=True)
    subject = models.JSONField(default=dict, blank=True,
                               help_text="what was judged (e.g. the image's id and its scene text): a check of "
                                         "something that has changed since no longer counts")
    checked_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    checked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "aspect", "-checked_at", "-id"]

    def __str__(self):
        return f"{self.aspect} of {self.item}: {self.get_verdict_display().lower()} ({self.checked_by})"

    def save(self, *args, **kwargs):
        if self.pk:
            raise ValidationError("Checks are insert-only: record a new check instead.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValidationError("Checks are insert-only.")


class ImageAttempt(models.Model):
    """One generated image for one slot of an item: a node of the slot's attempt tree."""

    class Mode(models.TextChoices):
        TEXT_TO_IMAGE = "text2image", "Text to image"
        IMAGE_TO_IMAGE = "image2image", "Image to image"
        INPAINT = "inpaint", "Inpainting"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    item = models.ForeignKey("annotation.BenchmarkItem", on_delete=models.CASCADE, related_name="image_attempts")
    slot = models.CharField(max_length=32, help_text="the item's media role, e.g. premise or hypothesis1")
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="children")
    parent_image = models.ForeignKey("annotation.Image", null=True, blank=True, on_delete=models.PROTECT,
                                     related_name="+", help_text="a library image as the parent (no parent attempt)")
    mode = models.CharField(max_length=16, choices=Mode.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    prompt = models.TextField()
    negative_prompt = models.TextField(blank=True)
    seed = models.BigIntegerField()
    model_id = models.CharField(max_length=500, help_text="hub id or local folder")
    revision = models.CharField(max_length=100, blank=True, help_text="the revision used, once known")
    scheduler = models.CharField(max_length=100, blank=True)
    params = models.JSONField(default=dict, blank=True, help_text="steps, guidance, strength, width, height, …")
    image = models.FileField(upload_to="attempts/%Y/%m/", blank=True)
    mask = models.FileField(upload_to="attempt-masks/%Y/%m/", blank=True, help_text="white = regenerate")
    provenance = models.JSONField(default=dict, blank=True, help_text="as written by the generation service")
    error = models.TextField(blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    job = models.ForeignKey("generation.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    chosen_at = models.DateTimeField(null=True, blank=True, help_text="when it was picked as the slot's final image")
    chosen_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+")

    class Meta:
        ordering = ["item_id", "slot", "created_at", "id"]
        indexes = [models.Index(fields=["item", "slot"], name="image_attempt_item_slot")]

    def __str__(self):
        return f"{self.get_mode_display().lower()} attempt #{self.pk} for {self.slot} of {self.item}"


class CategoryDefinition(models.Model):
    """One category of a benchmark (a CVRR-ES dimension, a MAIA category) as data: what it means and
    the instructions the curation steps give for it, editable by curators."""

    benchmark = models.ForeignKey("annotation.Benchmark", on_delete=models.CASCADE, related_name="categories")
    key = models.SlugField(max_length=100, help_text="stable key, e.g. the release's folder name")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    instructions = models.JSONField(default=dict, blank=True,
                                    help_text='per curation step, e.g. {"caption": "...", "qa": "..."}')
    position = models.PositiveSmallIntegerField(default=0)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["benchmark_id", "position", "key"]
        constraints = [models.UniqueConstraint(fields=["benchmark", "key"], name="unique_category_per_benchmark")]

    def __str__(self):
        return f"{self.name} ({self.benchmark_id and self.benchmark.slug})"


class SubgroupLabel(models.Model):
    """A library image's subgroup for a bias analysis (C-VQA §4.3: the perceived gender of the people an
    image shows), imported from a published annotation file or set by a curator."""

    image = models.OneToOneField("annotation.Image", on_delete=models.CASCADE, related_name="subgroup_label")
    label = models.CharField(max_length=64)
    source = models.CharField(max_length=255, blank=True,
                              help_text="where the label came from: the imported file's name, or “edited”")
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["image_id"]

    def __str__(self):
        return f"{self.label} (image #{self.image_id})"
