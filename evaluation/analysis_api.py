"""REST endpoints that mirror the write-back pages: people's explanations approved as judge references
of a frozen version's items, and failure factors tagged on a run's wrong predictions.

- `GET versions/<id>/judge-references/`: per item, its references and candidates (curators,
  researchers, admins); `POST` `{"candidates": [token, …]}` or `{"approve_voted": true}` approves
  (curators and admins): 201 with the references written.
- `POST judge-references/<id>/revoke/` `{"reason"}`: revoke one (curators and admins).
- `GET runs/<id>/failure-tags/`: the distribution of factors and every wrong prediction with its
  current tag; `POST` `{"prediction", "factor", "note"}` tags one (curators, researchers, admins).

Bad input is 400 with the reason; a role that may read but not write gets 403 on POST.
"""

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors as annotation_selectors
from config.permissions import HasRole
from config.roles import STAFF_ROLES
from evaluation import failure_analysis, judge_references, selectors
from evaluation.analysis_serializers import (
    ApprovedReferencesSerializer,
    ApproveReferencesSerializer,
    FailureTagsSerializer,
    JudgeReferenceSerializer,
    RevokeReferenceSerializer,
    TagRequestSerializer,
    TagSerializer,
    VersionReferencesSerializer,
)
from evaluation.human_eval import references


def _refused(exc: ValidationError) -> Response:
    return Response({"error": " ".join(exc.messages)}, status=status.HTTP_400_BAD_REQUEST)


class VersionJudgeReferencesView(APIView):
    permission_classes = [HasRole]
    allowed_roles = STAFF_ROLES

    @extend_schema(responses=VersionReferencesSerializer)
    def get(self, request, pk):
        version = get_object_or_404(annotation_selectors.versions(), pk=pk)
        entries = references.candidates(version) if version.frozen else []
        return Response({"version": version.pk, "frozen": version.frozen,
                         "items": [entry.as_dict() for entry in entries]})

    @extend_schema(request=ApproveReferencesSerializer, responses={201: ApprovedReferencesSerializer})
    def post(self, request, pk):
        judge_references.require_approver(request.user)
        version = get_object_or_404(annotation_selectors.versions(), pk=pk)
        data = request.data if isinstance(request.data, dict) else {}
        tokens = data.get("candidates") or []
        if not isinstance(tokens, list):
            return Response({"error": "`candidates` is a list of candidate tokens."}, status=400)
        try:
            made = (references.approve_voted(request.user, version) if data.get("approve_voted") is True
                    else references.approve(request.user, version, tokens))
        except judge_references.ReferenceError as exc:
            return _refused(exc)
        return Response({"approved": [references.reference_dict(ref) for ref in made]},
                        status=status.HTTP_201_CREATED)


class JudgeReferenceRevokeView(APIView):
    permission_classes = [HasRole]
    allowed_roles = judge_references.APPROVERS

    @extend_schema(request=RevokeReferenceSerializer, responses=JudgeReferenceSerializer)
    def post(self, request, pk):
        reference = selectors.judge_reference(pk)
        if reference is None:
            return Response({"error": "No such judge reference."}, status=status.HTTP_404_NOT_FOUND)
        data = request.data if isinstance(request.data, dict) else {}
        try:
            reference = judge_references.revoke(request.user, reference, str(data.get("reason") or ""))
        except judge_references.ReferenceError as exc:
            return _refused(exc)
        return Response(references.reference_dict(reference))


def _tag_dict(entry: failure_analysis.WrongPrediction) -> dict:
    tag = entry.tag
    return {"prediction": entry.prediction.pk, "request_id": entry.request.request_id,
            "factor": entry.factor or None, "note": tag.note if tag else "",
            "tagged_by": tag.tagged_by.get_username() if tag else None,
            "tagged_at": tag.tagged_at.isoformat() if tag else None}


class RunFailureTagsView(APIView):
    permission_classes = [HasRole]
    allowed_roles = failure_analysis.TAGGERS

    def _run(self, pk):
        return get_object_or_404(selectors.runs_with_benchmark(), pk=pk)

    @extend_schema(responses=FailureTagsSerializer)
    def get(self, request, pk):
        run = self._run(pk)
        return Response({**failure_analysis.distribution(run),
                         "predictions": [_tag_dict(entry) for entry in failure_analysis.wrong_predictions(run)]})

    @extend_schema(request=TagRequestSerializer, responses={201: TagSerializer})
    def post(self, request, pk):
        run = self._run(pk)
        data = request.data if isinstance(request.data, dict) else {}
        prediction_pk = data.get("prediction")
        if isinstance(prediction_pk, bool) or not str(prediction_pk or "").isdigit():
            return Response({"error": "`prediction` (a prediction id of this run) is required."}, status=400)
        prediction = selectors.prediction_for_tagging(int(prediction_pk))
        if prediction is None or prediction.run_id != run.pk:
            return Response({"error": f"Run {run.pk} has no prediction {prediction_pk}."}, status=400)
        try:
            tag = failure_analysis.tag(request.user, prediction, str(data.get("factor") or ""),
                                       str(data.get("note") or ""))
        except failure_analysis.FailureTagError as exc:
            return _refused(exc)
        return Response({"prediction": prediction.pk, "factor": tag.factor or None, "note": tag.note,
                         "tagged_by": request.user.get_username(), "tagged_at": tag.tagged_at.isoformat()},
                        status=status.HTTP_201_CREATED)
