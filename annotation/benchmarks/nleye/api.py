"""The API mirror of the NL-EYE explanation and validation pages, for curators.

- `GET /api/nleye/triplets/<id>/`: the triplet's payload, images by slot and validation state (each
  aspect's status and latest check, and what is missing before its version can be frozen);
- `POST /api/nleye/triplets/<id>/explanation/` with `explanation`, `reasoning_category`, `time_direction`,
  `time_duration`, `domain`: writes them (400 with `errors` by field, 409 on a frozen version);
- `POST /api/nleye/triplets/<id>/checks/` with `checks: [{aspect, verdict, note}]` and optionally
  `seen: {aspect: fingerprint}`: records the verdicts (400, 403 on one's own work, 409 on a change made
  meanwhile or a frozen version; nothing is written then).
"""

from django.core.exceptions import ValidationError
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotation.benchmarks.nleye import explanation, triplets, validation
from annotation.models import FrozenError
from config.api_fields import JSONObjectField
from config.json_bodies import body_fields
from config.permissions import HasRole
from config.roles import ADMIN, CURATOR


def _check(check) -> dict | None:
    if check is None:
        return None
    return {"verdict": check.verdict, "note": check.note, "checked_by": check.checked_by.username,
            "checked_at": check.checked_at.isoformat()}


def state_data(state: validation.TripletState) -> dict:
    item = state.item
    return {
        "id": item.pk, "external_id": item.external_id, "version": str(item.version), "payload": item.payload,
        "images": {slot: image.pk for slot, image in state.images.items()},
        "aspects": {aspect.aspect: {"status": aspect.status, "fingerprint": aspect.fingerprint,
                                    "latest": _check(aspect.latest)} for aspect in state.aspects},
        "missing": state.missing, "validated": state.validated,
    }


EXPLANATION_IN = inline_serializer("NleyeExplanationIn", {
    "explanation": serializers.CharField(),
    **{name: serializers.ChoiceField(choices=list(values)) for name, values in validation.VOCABULARIES.items()},
})
CHECKS_IN = inline_serializer("NleyeChecksIn", {
    "checks": inline_serializer("NleyeCheckIn", {
        "aspect": serializers.ChoiceField(choices=list(validation.ASPECTS)),
        "verdict": serializers.ChoiceField(choices=list(validation.VERDICTS)),
        "note": serializers.CharField(required=False)}, many=True),
    "seen": serializers.DictField(child=serializers.CharField(), required=False),
})


TRIPLET_STATE = inline_serializer("NleyeTripletState", {
    "id": serializers.IntegerField(),
    "external_id": serializers.CharField(),
    "version": serializers.CharField(),
    "payload": JSONObjectField(help_text="the item's payload (NleyePayload)"),
    "images": serializers.DictField(child=serializers.IntegerField(), help_text="image id by slot"),
    "aspects": serializers.DictField(child=inline_serializer("NleyeAspectState", {
        "status": serializers.CharField(help_text="passes, fails, missing, changed or own-work"),
        "fingerprint": serializers.CharField(),
        "latest": inline_serializer("NleyeLatestCheck", {
            "verdict": serializers.CharField(), "note": serializers.CharField(),
            "checked_by": serializers.CharField(), "checked_at": serializers.DateTimeField()}, allow_null=True),
    }), help_text="each validation aspect's state"),
    "missing": serializers.ListField(child=serializers.CharField(), help_text="what is missing before freezing"),
    "validated": serializers.BooleanField(),
})


def _refused(exc: ValidationError, status: int) -> Response:
    return Response({"error": "; ".join(exc.messages), "errors": exc.messages}, status=status)


class TripletCurationViewSet(viewsets.GenericViewSet):
    permission_classes = [HasRole]
    allowed_roles = (CURATOR, ADMIN)

    def get_queryset(self):
        return triplets.triplet_items()

    def _state(self):
        return validation.triplet_state(triplets.triplet_items().get(pk=self.get_object().pk))

    @extend_schema(responses=TRIPLET_STATE)
    def retrieve(self, request, pk=None):
        return Response(state_data(self._state()))

    @extend_schema(request=EXPLANATION_IN, responses=TRIPLET_STATE)
    @action(detail=True, methods=["post"])
    def explanation(self, request, pk=None):
        item = self.get_object()
        try:
            explanation.write_explanation(item.pk, body_fields(request), request.user)
        except explanation.ExplanationInvalid as exc:
            return Response({"error": "; ".join(exc.messages), "errors": exc.form.errors}, status=400)
        except FrozenError as exc:
            return _refused(exc, 409)
        except ValidationError as exc:
            return _refused(exc, 400)
        return Response(state_data(self._state()))

    @extend_schema(request=CHECKS_IN, responses={201: TRIPLET_STATE})
    @action(detail=True, methods=["post"])
    def checks(self, request, pk=None):
        item = self.get_object()
        fields = body_fields(request)
        given = fields.get("checks")
        seen = fields.get("seen") or {}
        if not isinstance(given, list) or not all(isinstance(entry, dict) for entry in given) \
                or not isinstance(seen, dict):
            return Response({"error": "Send `checks`: a list of {aspect, verdict, note}, and optionally `seen`: "
                                      "{aspect: fingerprint}."}, status=400)
        verdicts = {str(entry.get("aspect", "")): (entry.get("verdict", ""), str(entry.get("note") or ""))
                    for entry in given}
        try:
            validation.record_checks(item.pk, request.user, verdicts, seen)
        except validation.SecondPersonRule as exc:
            return _refused(exc, 403)
        except (validation.ChangedMeanwhile, FrozenError) as exc:
            return _refused(exc, 409)
        except ValidationError as exc:
            return _refused(exc, 400)
        return Response(state_data(self._state()), status=201)


def api_routes(router) -> None:
    """NL-EYE's routes on the API's router (`BenchmarkDefinition.api_routes`)."""
    router.register("nleye/triplets", TripletCurationViewSet, basename="api-nleye-triplet")
