from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from annotation import media, selectors, version_exports, versions
from annotation.filters import ImageFilter, VersionFilter, VideoFilter
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, FrozenError, Image, Video
from annotation.serializers import (
    BenchmarkItemSerializer,
    BenchmarkSerializer,
    BenchmarkVersionSerializer,
    ImageSerializer,
    UploadSerializer,
    VersionExportSerializer,
    VideoSerializer,
)
from config.roles import ADMIN, CURATOR, RESEARCHER, STAFF_ROLES, has_role
from generation.serializers import JobSerializer


def _django_errors(exc: DjangoValidationError) -> ValidationError:
    return ValidationError({"error": "; ".join(exc.messages), "errors": exc.messages})


def _serializer_errors(errors: dict) -> ValidationError:
    """The serializer's errors; a refused payload's messages also as `error` and `errors`, as the service gives them."""
    payload = [str(message) for message in errors.get("payload", [])]
    if not payload:
        return ValidationError(errors)
    return ValidationError({**errors, "error": "; ".join(payload), "errors": payload})


class _MediaViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """The media library, newest first; filters: `annotation.filters`. Upload with multipart `file` (and optional
    `title`)."""

    allowed_roles = STAFF_ROLES
    action_roles = {"create": (CURATOR, ADMIN)}
    parser_classes = [MultiPartParser, FormParser]
    kind = ""

    def get_queryset(self):
        return selectors.library_assets(self.queryset.model)

    @extend_schema(request={"multipart/form-data": UploadSerializer})
    def create(self, request):
        upload = UploadSerializer(data=request.data)
        if not upload.is_valid():
            return Response({"error": "Send the file in the multipart field 'file'.", **upload.errors}, status=400)
        try:
            asset = media.ingest(
                media.incoming_from_upload(upload.validated_data["file"]),
                user=request.user,
                title=upload.validated_data.get("title", ""),
                expected_kind=self.kind,
            )
        except media.MediaRejected as exc:
            body = {"error": exc.message}
            if exc.existing is not None:
                body["existing_id"] = exc.existing.pk
            return Response(body, status=exc.status)
        return Response(self.get_serializer(asset).data, status=status.HTTP_201_CREATED)


class VideoViewSet(_MediaViewSet):
    queryset = Video.objects.all()
    serializer_class = VideoSerializer
    filterset_class = VideoFilter
    kind = "video"


class ImageViewSet(_MediaViewSet):
    queryset = Image.objects.all()
    serializer_class = ImageSerializer
    filterset_class = ImageFilter
    kind = "image"


class BenchmarkViewSet(viewsets.ReadOnlyModelViewSet):
    allowed_roles = STAFF_ROLES
    queryset = Benchmark.objects.all()
    serializer_class = BenchmarkSerializer
    lookup_field = "slug"


class BenchmarkVersionViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Benchmark versions. Curators create and fill a draft version, then freeze it for good."""

    allowed_roles = (CURATOR, RESEARCHER, ADMIN)
    action_roles = {"create": (CURATOR, ADMIN), "freeze": (CURATOR, ADMIN), "items": STAFF_ROLES, "export": STAFF_ROLES}
    queryset = BenchmarkVersion.objects.select_related("benchmark", "created_by")
    serializer_class = BenchmarkVersionSerializer
    filterset_class = VersionFilter

    def get_queryset(self):
        return selectors.versions_with_creator()

    def perform_create(self, serializer):
        serializer.save(created_by=self.request.user)

    @extend_schema(request=None, responses=BenchmarkVersionSerializer)
    @action(detail=True, methods=["post"])
    def freeze(self, request, pk=None):
        version = self.get_object()
        try:
            version = versions.freeze(version)
        except FrozenError as exc:
            return Response({"error": exc.messages[0]}, status=409)
        except DjangoValidationError as exc:
            raise _django_errors(exc) from exc
        return Response(self.get_serializer(version).data)

    @extend_schema(request=VersionExportSerializer, responses={202: JobSerializer})
    @action(detail=True, methods=["post"], serializer_class=VersionExportSerializer)
    def export(self, request, pk=None):
        """Start an export of the version (as the version page does): the job's result names its download."""
        version = self.get_object()
        serializer = VersionExportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            job = version_exports.enqueue_version_export(request.user, version, serializer.validated_data["layout"])
        except version_exports.VersionExportError as exc:
            return Response({"error": str(exc)}, status=400)
        return Response(JobSerializer(job).data, status=202)

    @extend_schema(methods=["get"], responses=BenchmarkItemSerializer(many=True))
    @extend_schema(methods=["post"], request=BenchmarkItemSerializer, responses={201: BenchmarkItemSerializer})
    @action(detail=True, methods=["get", "post"], serializer_class=BenchmarkItemSerializer)
    def items(self, request, pk=None):
        version = self.get_object()
        if request.method == "GET":
            page = self.paginate_queryset(selectors.version_items(version))
            return self.get_paginated_response(BenchmarkItemSerializer(page, many=True).data)
        if not has_role(request.user, CURATOR, ADMIN):
            return Response({"error": "Only curators add items."}, status=403)
        serializer = BenchmarkItemSerializer(data=request.data, context={"benchmark": version.benchmark.slug})
        if not serializer.is_valid():
            raise _serializer_errors(serializer.errors)
        data = serializer.validated_data
        if version.items.filter(external_id=data["external_id"]).exists():
            return Response({"error": f"Item {data['external_id']!r} already exists in {version}."}, status=409)
        assets = {}
        for ref in data.get("media_refs", []):
            model = Video if ref["kind"] == "video" else Image
            assets[ref["role"]] = get_object_or_404(model, pk=ref["asset_id"])
        try:
            with transaction.atomic():
                item = versions.add_item(version, data["external_id"], data["payload"], assets)
        except FrozenError as exc:
            return Response({"error": exc.messages[0]}, status=409)
        except DjangoValidationError as exc:
            raise _django_errors(exc) from exc
        return Response(BenchmarkItemSerializer(BenchmarkItem.objects.get(pk=item.pk)).data, status=201)

