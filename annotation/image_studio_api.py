"""The image studio for scripts: `/api/image-attempts/` mirrors the studio's pages.

- GET `/api/image-attempts/?item=<id>&slot=<role>`: the attempts (of one item, one slot), oldest first;
  more filters in `annotation.filters.ImageAttemptFilter`.
- POST `/api/image-attempts/` (multipart or JSON): `item`, `slot`, `mode`, `prompt`, `suffix`, `seed`,
  `model_id`, `negative_prompt`, `scheduler`, `steps`, `guidance`, `width`, `height`, `strength`,
  `parent` (attempt:<id> or image:<id>) and, for inpainting, the multipart file `mask` (a PNG of the
  parent's size, white = regenerate): 201 with the queued attempt and its job. Without `suffix` the
  photorealistic suffix is appended (send an empty one for none); without `seed` the item's seed is used.
- POST `/api/image-attempts/<id>/final/`: make a finished attempt its slot's image.

Curators and admins only; refusals answer `{"error": ...}` with the status the studio gives them.
"""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from annotation import image_studio as studio
from annotation import image_studio_selectors as selectors
from annotation.curation_models import ImageAttempt
from annotation.filters import ImageAttemptFilter
from config.api_errors import ErrorSerializer
from config.api_fields import JSONObjectField
from config.ids import parse_id
from config.json_bodies import GuardedJSONParser, body_fields
from config.roles import ADMIN, CURATOR


class ImageAttemptSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    chosen_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    has_image = serializers.SerializerMethodField()
    has_mask = serializers.SerializerMethodField()
    params = JSONObjectField(read_only=True, help_text="the generation settings: steps, guidance, strength, width, "
                                                       "height, …")
    provenance = JSONObjectField(read_only=True, help_text="as written by the generation service")

    class Meta:
        model = ImageAttempt
        fields = ["id", "item", "slot", "parent", "parent_image", "mode", "status", "prompt", "negative_prompt",
                  "seed", "model_id", "revision", "scheduler", "params", "provenance", "error", "duration_s", "job",
                  "created_by", "created_at", "chosen_at", "chosen_by", "has_image", "has_mask"]
        read_only_fields = fields

    def get_has_image(self, attempt) -> bool:
        return bool(attempt.image)

    def get_has_mask(self, attempt) -> bool:
        return bool(attempt.mask)


class AttemptRequestSerializer(serializers.Serializer):
    """What a new attempt is asked with (checked by `annotation.image_studio`)."""

    item = serializers.IntegerField()
    slot = serializers.CharField()
    mode = serializers.ChoiceField(choices=ImageAttempt.Mode.choices)
    prompt = serializers.CharField()
    model_id = serializers.CharField(help_text="a registered image-generation (inpainting: inpainting) model: its "
                                               "name, or the model id or folder its entry holds")
    suffix = serializers.CharField(required=False, allow_blank=True)
    seed = serializers.IntegerField(required=False)
    negative_prompt = serializers.CharField(required=False, allow_blank=True)
    revision = serializers.CharField(required=False, allow_blank=True,
                                     help_text="empty: the registered model's pinned revision; else it must be "
                                               "that one")
    scheduler = serializers.CharField(required=False, allow_blank=True)
    steps = serializers.IntegerField(required=False)
    guidance = serializers.FloatField(required=False)
    width = serializers.IntegerField(required=False)
    height = serializers.IntegerField(required=False)
    strength = serializers.FloatField(required=False)
    parent = serializers.CharField(required=False, allow_blank=True, help_text="attempt:<id> or image:<id>")
    mask = serializers.FileField(required=False, help_text="inpainting: a PNG of the parent's size, white = regenerate")


def _refusal(exc: studio.StudioError) -> Response:
    return Response({"error": exc.message}, status=exc.status)


class ImageAttemptViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    allowed_roles = (CURATOR, ADMIN)
    serializer_class = ImageAttemptSerializer
    parser_classes = [MultiPartParser, FormParser, GuardedJSONParser]
    queryset = ImageAttempt.objects.none()  # the real one is get_queryset's; this types the schema's `id`
    filterset_class = ImageAttemptFilter

    def get_queryset(self):
        return selectors.attempts()

    @extend_schema(request={"multipart/form-data": AttemptRequestSerializer,
                            "application/json": AttemptRequestSerializer},
                   responses={201: ImageAttemptSerializer, 404: OpenApiResponse(
                       ErrorSerializer, description="The item has no image slot by that name.")})
    def create(self, request):
        fields = body_fields(request)
        data = {key: fields.get(key) for key in fields if key != "mask"}
        item_id = parse_id(data.get("item", ""))
        item = selectors.studio_item(item_id) if item_id is not None else None
        if item is None:
            return Response({"error": "Give the id of an existing item as `item`."}, status=400)
        try:
            settings = studio.parse_settings(data, item=item)
            parent = studio.resolve_parent(item, str(data.get("parent") or ""))
            attempt = studio.start_attempt(item, str(data.get("slot", "")), settings, user=request.user, parent=parent,
                                           mask_upload=request.FILES.get("mask"))
        except studio.StudioError as exc:
            return _refusal(exc)
        return Response(ImageAttemptSerializer(attempt).data, status=201)

    @extend_schema(request=None, responses=ImageAttemptSerializer)
    @action(detail=True, methods=["post"])
    def final(self, request, pk=None):
        attempt = self.get_object()
        try:
            studio.pick_final(attempt, request.user)
        except studio.StudioError as exc:
            return _refusal(exc)
        attempt.refresh_from_db()
        return Response(ImageAttemptSerializer(attempt).data)
