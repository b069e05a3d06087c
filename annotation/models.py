from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from annotation.benchmarks import registry
from annotation.payloads import validate_payload
from config.state import StateMachine


class MediaTag(models.Model):
    """A curator's label for media in the library (e.g. "outdoor", "batch-3"), shared by videos and images."""

    name = models.CharField(max_length=40, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class MediaAsset(models.Model):
    """What videos and images share: the stored file, its checksum and who brought it."""

    class Status(models.TextChoices):
        PROBING = "probing", "Probing"
        READY = "ready", "Ready"

    class Source(models.TextChoices):
        UPLOAD = "upload", "Upload"
        IMPORT = "import", "Import"
        DERIVED = "derived", "Derived"

    # a file is read (metadata, poster, thumbnail) once, in the background or where it is made
    STATES = StateMachine("status", {Status.PROBING: {Status.READY}, Status.READY: set()})

    title = models.CharField(max_length=255)
    original_name = models.CharField(max_length=255)
    size_bytes = models.BigIntegerField()
    checksum = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the file's bytes")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PROBING, db_index=True)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.UPLOAD)
    provenance = models.JSONField(default=dict, blank=True)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    probe_job = models.ForeignKey("generation.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    tags = models.ManyToManyField(MediaTag, blank=True, related_name="%(class)ss")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return self.title


class Video(MediaAsset):
    file = models.FileField(upload_to="videos/", max_length=255)
    poster = models.ImageField(upload_to="posters/", blank=True, max_length=255)
    duration = models.FloatField(null=True, blank=True, help_text="seconds")
    fps = models.FloatField(null=True, blank=True)
    frame_count = models.IntegerField(null=True, blank=True)
    width = models.IntegerField(null=True, blank=True)
    height = models.IntegerField(null=True, blank=True)
    codec = models.CharField(max_length=32, blank=True)

    class Meta(MediaAsset.Meta):
        constraints = [
            models.CheckConstraint(
                condition=models.Q(duration__isnull=True) | models.Q(duration__gt=0), name="video_duration_positive"
            ),
        ]


class Image(MediaAsset):
    file = models.FileField(upload_to="images/", max_length=255)
    thumbnail = models.ImageField(upload_to="thumbnails/", blank=True, max_length=255)
    width = models.IntegerField(null=True, blank=True)
    height = models.IntegerField(null=True, blank=True)
    format = models.CharField(max_length=16, blank=True)


class Benchmark(models.Model):
    """A benchmark's row; its slug names one of the registered benchmarks (`annotation.benchmarks.registry`)."""

    slug = models.CharField(max_length=16, unique=True, help_text="A registered benchmark's slug")
    name = models.CharField(max_length=64)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.name

    def clean(self):
        if self.slug not in registry.slugs():
            raise ValidationError({"slug": str(registry.UnknownBenchmark(self.slug))})


class FrozenError(ValidationError):
    """Raised on any attempt to change a frozen benchmark version or its items."""


class BenchmarkVersionQuerySet(models.QuerySet):
    def update(self, **kwargs):
        if self.filter(frozen=True).exists():
            raise FrozenError("Frozen versions cannot change.")
        return super().update(**kwargs)

    def delete(self):
        if self.filter(frozen=True).exists():
            raise FrozenError("Frozen versions cannot be deleted.")
        return super().delete()


class BenchmarkVersion(models.Model):
    class Source(models.TextChoices):
        IMPORT = "import", "Imported release"
        CURATION = "curation", "Curation"

    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="versions")
    label = models.CharField(max_length=64)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.CURATION)
    description = models.TextField(blank=True)
    frozen = models.BooleanField(default=False)
    frozen_at = models.DateTimeField(null=True, blank=True)
    item_count = models.PositiveIntegerField(default=0)
    checksum = models.CharField(max_length=64, blank=True, help_text="SHA-256 over the items, set on freezing")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = BenchmarkVersionQuerySet.as_manager()

    class Meta:
        ordering = ["benchmark__slug", "-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark", "label"], name="unique_version_label_per_benchmark"),
            models.CheckConstraint(
                condition=models.Q(frozen=False) | ~models.Q(checksum=""), name="frozen_version_has_checksum"
            ),
        ]

    def __str__(self):
        return f"{self.benchmark.slug}:{self.label}"

    def save(self, *args, **kwargs):
        if self.pk:
            stored = BenchmarkVersion.objects.filter(pk=self.pk).values(
                "frozen", "label", "benchmark_id", "checksum", "item_count"
            ).first()
            if stored and stored["frozen"]:
                changed = [k for k, v in stored.items() if getattr(self, k) != v]
                if changed:
                    raise FrozenError(f"Version {self} is frozen: {', '.join(changed)} cannot change.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if self.frozen:
            raise FrozenError(f"Version {self} is frozen and cannot be deleted.")
        return super().delete(*args, **kwargs)


class BenchmarkItemQuerySet(models.QuerySet):
    def _refuse_if_frozen(self):
        if self.filter(version__frozen=True).exists():
            raise FrozenError("These items belong to a frozen version and cannot change.")

    def update(self, **kwargs):
        self._refuse_if_frozen()
        return super().update(**kwargs)

    def delete(self):
        self._refuse_if_frozen()
        return super().delete()


class BenchmarkItem(models.Model):
    version = models.ForeignKey(BenchmarkVersion, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=128, help_text="Stable id, e.g. the release's own id")
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = BenchmarkItemQuerySet.as_manager()

    class Meta:
        ordering = ["version_id", "external_id"]
        constraints = [
            models.UniqueConstraint(fields=["version", "external_id"], name="unique_item_id_per_version"),
        ]

    def __str__(self):
        return f"{self.version}/{self.external_id}"

    def _refuse_if_frozen(self):
        if BenchmarkVersion.objects.filter(pk=self.version_id, frozen=True).exists():
            raise FrozenError(f"Version {self.version} is frozen: its items cannot change.")

    def clean(self):
        validate_payload(self.version.benchmark.slug, self.payload)

    def save(self, *args, **kwargs):
        self._refuse_if_frozen()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        self._refuse_if_frozen()
        return super().delete(*args, **kwargs)


class ItemMediaQuerySet(models.QuerySet):
    def update(self, **kwargs):
        if self.filter(item__version__frozen=True).exists():
            raise FrozenError("Media of a frozen version cannot change.")
        return super().update(**kwargs)

    def delete(self):
        if self.filter(item__version__frozen=True).exists():
            raise FrozenError("Media of a frozen version cannot change.")
        return super().delete()


class ItemMedia(models.Model):
    """A video or image an item uses, under a role such as `premise` or `pre`."""

    item = models.ForeignKey(BenchmarkItem, on_delete=models.CASCADE, related_name="media")
    role = models.CharField(max_length=32)
    video = models.ForeignKey(Video, null=True, blank=True, on_delete=models.PROTECT, related_name="item_uses")
    image = models.ForeignKey(Image, null=True, blank=True, on_delete=models.PROTECT, related_name="item_uses")

    objects = ItemMediaQuerySet.as_manager()

    class Meta:
        ordering = ["item_id", "role"]
        constraints = [
            models.UniqueConstraint(fields=["item", "role"], name="unique_media_role_per_item"),
            models.CheckConstraint(
                condition=(models.Q(video__isnull=False, image__isnull=True)
                           | models.Q(video__isnull=True, image__isnull=False)),
                name="item_media_exactly_one_asset",
            ),
        ]

    def __str__(self):
        return f"{self.item} {self.role}"

    @property
    def asset(self):
        return self.video or self.image

    def save(self, *args, **kwargs):
        if BenchmarkItem.objects.filter(pk=self.item_id, version__frozen=True).exists():
            raise FrozenError("Media of a frozen version cannot change.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if BenchmarkItem.objects.filter(pk=self.item_id, version__frozen=True).exists():
            raise FrozenError("Media of a frozen version cannot change.")
        return super().delete(*args, **kwargs)

from annotation.crowd.models import (  # noqa: E402,F401  (the crowd engine's models live in their own module)
    Claim,
    Draft,
    PlatformEntry,
    Qualification,
    QualificationAttempt,
    QualificationTest,
    Study,
    StudyExclusion,
    StudyItem,
    Submission,
    WorkerProfile,
    WorkerQualification,
)
from annotation.curation_models import (  # noqa: E402,F401
    CategoryDefinition,
    CurationRecord,
    ImageAttempt,
    ItemCheck,
    SubgroupLabel,
)


class VideoSplit(models.Model):
    """One split of a library video into BlackSwanSuite's parts, and the five clips cut from it.

    Frame boundaries follow `generation.splitting`: a part holds the source frames i with
    start ≤ i < end, so V_pre = [0, main_start_frame), V_main = [main_start_frame, main_end_frame)
    and V_post = [main_end_frame, frame_count), less `trim_start` seconds at the start of V_pre and
    `trim_end` at the end of V_post when they are set (the authors' split trims 0.17 s at each end; the
    trimmed frames are in `parameters`, `pre_start_frame` and `post_end_frame`). Splitting again (other
    boundaries, or a multi-scene video split on purpose) makes a new row; earlier rows stay as history.
    The service and the background job live in `annotation.benchmarks.blackswan.splits`.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FLAGGED = "flagged", "Flagged: several scenes"
        FAILED = "failed", "Failed"
        REJECTED = "rejected", "Filtered out by a curator"
        OVERRIDDEN = "overridden", "Split anyway by a curator"

    # Every allowed state change; `config.state.transition` enforces it.
    STATES = StateMachine("status", {
        Status.QUEUED: {Status.RUNNING, Status.FAILED},
        Status.RUNNING: {Status.DONE, Status.FLAGGED, Status.FAILED},
        Status.FLAGGED: {Status.REJECTED, Status.OVERRIDDEN},
        Status.DONE: set(),
        Status.FAILED: set(),
        Status.REJECTED: set(),
        Status.OVERRIDDEN: set(),
    })

    video = models.ForeignKey(Video, on_delete=models.PROTECT, related_name="splits")
    event_start = models.FloatField(help_text="seconds, as given (start of the unexpected event)")
    event_end = models.FloatField(help_text="seconds, as given (end of the unexpected event)")
    snap = models.BooleanField(default=True, help_text="move boundaries to a nearby scene cut")
    snap_tolerance = models.FloatField(default=0.5, help_text="seconds")
    trim_start = models.FloatField(default=0.0, help_text="seconds cut from the start of V_pre")
    trim_end = models.FloatField(default=0.0, help_text="seconds cut from the end of V_post")
    allow_multi_scene = models.BooleanField(default=False, help_text="split even if the video has several scenes")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    message = models.TextField(blank=True)
    frame_count = models.IntegerField(null=True, blank=True)
    fps = models.FloatField(null=True, blank=True)
    main_start_frame = models.IntegerField(null=True, blank=True, help_text="first frame of V_main")
    main_end_frame = models.IntegerField(null=True, blank=True, help_text="first frame of V_post")
    scene_cuts = models.JSONField(default=list, blank=True, help_text='[{"frame": 30, "time": 1.2, ...}]')
    multi_scene = models.BooleanField(null=True, blank=True)
    parameters = models.JSONField(default=dict, blank=True, help_text="detector, plan and encoding settings")
    pre_video = models.ForeignKey(Video, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    main_video = models.ForeignKey(Video, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    post_video = models.ForeignKey(Video, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    detective_video = models.ForeignKey(Video, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    full_video = models.ForeignKey(Video, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    job = models.ForeignKey("generation.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["video_id", "-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(event_start__gte=0) & models.Q(event_end__gt=models.F("event_start")),
                name="video_split_event_in_order",
            ),
            models.CheckConstraint(
                condition=(models.Q(trim_start__gte=0, trim_end__gte=0)
                           & models.Q(trim_start__lt=models.F("event_start"))),
                name="video_split_trims",
            ),
            models.CheckConstraint(
                condition=(models.Q(main_start_frame__isnull=True) | models.Q(main_end_frame__isnull=True)
                           | (models.Q(main_start_frame__gt=0)
                              & models.Q(main_end_frame__gt=models.F("main_start_frame")))),
                name="video_split_frames_in_order",
            ),
            models.CheckConstraint(
                condition=~models.Q(status="done") | models.Q(
                    pre_video__isnull=False, main_video__isnull=False, post_video__isnull=False,
                    detective_video__isnull=False, full_video__isnull=False, main_start_frame__isnull=False,
                    main_end_frame__isnull=False, frame_count__isnull=False,
                ),
                name="video_split_done_has_clips",
            ),
        ]

    def __str__(self):
        return f"split #{self.pk} of {self.video} at {self.event_start:g}–{self.event_end:g} s ({self.status})"

    def clips(self) -> dict:
        """The resulting library videos by part name (None where not cut)."""
        return {"pre": self.pre_video, "main": self.main_video, "post": self.post_video,
                "detective": self.detective_video, "full": self.full_video}

# last: importing BlackSwanSuite's package reads the models above
from annotation.benchmarks.blackswan.models import StagedStep  # noqa: E402,F401  (the staged reveal's steps)
