from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import reverse
from rest_framework import serializers

from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, Image, ItemMedia, Video
from annotation.payloads import validate_payload
from config.api_fields import JSONObjectField


class _AssetSerializer(serializers.ModelSerializer):
    file_url = serializers.SerializerMethodField()
    probe_job = serializers.PrimaryKeyRelatedField(read_only=True, allow_null=True)
    uploaded_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    provenance = JSONObjectField(read_only=True, help_text="where the file came from: its source and, for derived "
                                                           "or generated media, what made it and with which settings")

    def get_file_url(self, obj) -> str:
        return reverse(f"media-{obj.__class__.__name__.lower()}-file", args=[obj.pk])


class VideoSerializer(_AssetSerializer):
    poster_url = serializers.SerializerMethodField()

    class Meta:
        model = Video
        fields = ["id", "title", "original_name", "size_bytes", "checksum", "status", "source", "duration", "fps",
                  "frame_count", "width", "height", "codec", "file_url", "poster_url", "probe_job", "uploaded_by",
                  "provenance", "created_at"]
        read_only_fields = fields

    def get_poster_url(self, obj) -> str | None:
        return reverse("media-video-poster", args=[obj.pk]) if obj.poster else None


class ImageSerializer(_AssetSerializer):
    thumbnail_url = serializers.SerializerMethodField()

    class Meta:
        model = Image
        fields = ["id", "title", "original_name", "size_bytes", "checksum", "status", "source", "width", "height",
                  "format", "file_url", "thumbnail_url", "probe_job", "uploaded_by", "provenance", "created_at"]
        read_only_fields = fields

    def get_thumbnail_url(self, obj) -> str | None:
        return reverse("media-image-thumbnail", args=[obj.pk]) if obj.thumbnail else None


class UploadSerializer(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=True)
    title = serializers.CharField(required=False, allow_blank=True, max_length=255)


class BenchmarkSlugField(serializers.CharField):
    """A registered benchmark's slug; the OpenAPI schema lists the registered ones (`annotation.openapi`)."""


class BenchmarkRelatedField(serializers.SlugRelatedField):
    """A benchmark named by its slug; the OpenAPI schema lists the registered ones (`annotation.openapi`)."""

    def __init__(self, **kwargs):
        super().__init__(slug_field="slug", **kwargs)


class PayloadField(serializers.JSONField):
    """An item's payload, a JSON object in its benchmark's schema (published per benchmark by `annotation.openapi`)."""


class BenchmarkSerializer(serializers.ModelSerializer):
    slug = BenchmarkSlugField(read_only=True)

    class Meta:
        model = Benchmark
        fields = ["id", "slug", "name", "description"]


class BenchmarkVersionSerializer(serializers.ModelSerializer):
    benchmark = BenchmarkRelatedField(queryset=Benchmark.objects.all())
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = BenchmarkVersion
        fields = ["id", "benchmark", "label", "source", "description", "frozen", "frozen_at", "item_count",
                  "checksum", "created_by", "created_at"]
        read_only_fields = ["frozen", "frozen_at", "item_count", "checksum", "created_by", "created_at"]


class VersionExportSerializer(serializers.Serializer):
    layout = serializers.CharField(help_text="hf (a Hugging Face dataset folder), release (the release's own layout) "
                                             "or one of the benchmark's other release layouts")


class ItemMediaSerializer(serializers.ModelSerializer):
    kind = serializers.SerializerMethodField()
    asset_id = serializers.SerializerMethodField()

    class Meta:
        model = ItemMedia
        fields = ["role", "kind", "asset_id"]

    def get_kind(self, obj) -> str:
        return "video" if obj.video_id else "image"

    def get_asset_id(self, obj) -> int:
        return obj.video_id or obj.image_id


class MediaRefSerializer(serializers.Serializer):
    role = serializers.CharField(max_length=32)
    kind = serializers.ChoiceField(choices=["video", "image"])
    asset_id = serializers.IntegerField()


class BenchmarkItemSerializer(serializers.ModelSerializer):
    """An item of a version. Given the version's benchmark slug as `benchmark` in the context, the payload is
    checked against that benchmark's schema."""

    payload = PayloadField()
    media = ItemMediaSerializer(many=True, read_only=True)
    media_refs = MediaRefSerializer(many=True, write_only=True, required=False)

    class Meta:
        model = BenchmarkItem
        fields = ["id", "external_id", "payload", "media", "media_refs", "created_at"]
        read_only_fields = ["id", "media", "created_at"]

    def validate_payload(self, payload):
        benchmark = self.context.get("benchmark")
        if benchmark is not None:
            try:
                validate_payload(benchmark, payload)
            except DjangoValidationError as exc:
                raise serializers.ValidationError(exc.messages) from exc
        return payload
