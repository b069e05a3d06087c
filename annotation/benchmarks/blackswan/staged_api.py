"""The API of a staged claim (`staged`), on the claims' routes: one claim, three steps in
order, each with its own draft. `GET /api/claims/<id>/stage/` answers the current step;
`/api/claims/<id>/steps/<step>/draft/` and `…/submit/` save and submit it."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotation.benchmarks.blackswan import staged
from annotation.benchmarks.blackswan.staged_serializers import (
    StageStateSerializer,
    StepDraftSavedSerializer,
    StepSubmittedSerializer,
)
from annotation.crowd.api import CURATORS, own_claim
from annotation.crowd.models import Claim
from annotation.crowd.serializers import AnswerSerializer
from config.roles import ANNOTATOR

STEP_PARAMETER = OpenApiParameter("step", str, OpenApiParameter.PATH, enum=list(staged.STEPS),
                                  description="a step of a staged (BlackSwanSuite) claim, in order")


class StagedClaimViewSet(viewsets.GenericViewSet):
    """A worker's own claims. Other workers' claims do not exist for them (404)."""

    allowed_roles = (ANNOTATOR, *CURATORS)
    queryset = Claim.objects.none()  # the real claim is the worker's own (`own_claim`); this types the schema's `id`

    @extend_schema(responses=StageStateSerializer)
    @action(detail=True, methods=["get"])
    def stage(self, request, pk=None):
        """The current step of a staged claim: its players (only clips the step shows), draft and
        the worker's earlier answers."""
        return _no_store(Response(staged.stage_state(own_claim(request, pk))))

    @extend_schema(request=AnswerSerializer, responses=StepDraftSavedSerializer, parameters=[STEP_PARAMETER])
    @action(detail=True, methods=["put", "post"], url_path="steps/<slug:step>/draft", url_name="step-draft")
    def step_draft(self, request, pk=None, step=None):
        claim = own_claim(request, pk)
        body = AnswerSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        saved = staged.save_step_draft(claim, request.user, step, body.validated_data["data"],
                                       active_seconds=body.validated_data["active_seconds"])
        return _no_store(Response({"step": saved.step, "revision": saved.draft_revision,
                                   "updated_at": saved.draft_saved_at}))

    @extend_schema(request=AnswerSerializer, responses={201: StepSubmittedSerializer}, parameters=[STEP_PARAMETER])
    @action(detail=True, methods=["post"], url_path="steps/<slug:step>/submit", url_name="step-submit")
    def step_submit(self, request, pk=None, step=None):
        """Submit the current step; a step out of order is refused (409) and nothing is written."""
        claim = own_claim(request, pk)
        body = AnswerSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        result = staged.submit_step(claim, request.user, step, body.validated_data["data"],
                                    active_seconds=body.validated_data["active_seconds"])
        return _no_store(Response({
            "step": result.step, "next_step": result.next_step, "finished": result.finished,
            "submission": result.submission.pk if result.submission else None, "feedback": result.feedback or {},
        }, status=status.HTTP_201_CREATED))


def _no_store(response):
    response["Cache-Control"] = "private, no-store"
    return response


def api_routes(router) -> None:
    """The staged claim's routes, beside the other actions on a claim (`BenchmarkDefinition.api_routes`)."""
    router.register_actions("claims", StagedClaimViewSet, basename="api-claim")
