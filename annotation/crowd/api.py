"""REST endpoints of the crowd engine: workers claim, save drafts, submit, release; curators run
studies and review queues. Errors from the services carry their own HTTP status."""

from django.db import transaction
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response

from annotation.benchmarks.blackswan import staged
from annotation.benchmarks.blackswan.staged_serializers import (
    StageStateSerializer,
    StepDraftSavedSerializer,
    StepSubmittedSerializer,
)
from annotation.crowd import (
    assignment,
    consent,
    eligibility,
    history,
    kinds,
    platforms,
    reports,
    review,
    selectors,
    study_settings,
    study_state,
    submissions,
)
from annotation.crowd.access import SUBMISSION_READERS, SUBMISSION_REVIEWERS
from annotation.crowd.errors import CrowdError
from annotation.crowd.filters import ClaimFilter, StudyFilter, StudyQueueFilter, SubmissionFilter
from annotation.crowd.models import Claim, Study, StudyItem, Submission
from annotation.crowd.serializers import (
    AnswerSerializer,
    BulkReviewResultSerializer,
    BulkReviewSerializer,
    DraftSavedSerializer,
    NoItemLeftSerializer,
    ReleasedClaimSerializer,
    ReviewSerializer,
    StudyItemInSerializer,
    StudyItemsAddedSerializer,
    StudyReportSerializer,
    StudySerializer,
    SubmissionSerializer,
    SubmittedSerializer,
    WorkerClaimSerializer,
)
from config.roles import ADMIN, ANNOTATOR, CURATOR

CURATORS = (CURATOR, ADMIN)
STEP_PARAMETER = OpenApiParameter("step", str, OpenApiParameter.PATH, enum=list(staged.STEPS),
                                  description="a step of a staged (BlackSwanSuite) claim, in order")


class QueuePagination(PageNumberPagination):
    """The review queue's pages, with every queue's counts per state beside them (`counts`)."""

    component_name = "ReviewQueuePage"

    def get_paginated_response_schema(self, schema):
        found = super().get_paginated_response_schema(schema)
        found["properties"]["counts"] = {
            "type": "object", "description": "per review queue, its submissions per state (pending, approved, …)",
            "additionalProperties": {"type": "object", "additionalProperties": {"type": "integer"}}}
        return found


class StudyViewSet(mixins.CreateModelMixin, mixins.UpdateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Studies. Curators create and manage them; workers only claim (`POST /studies/<slug>/claim/`)."""

    allowed_roles = CURATORS
    # the report and the queues show workers' answers: for whoever may read submissions
    action_roles = {"claim": (ANNOTATOR, *CURATORS), "consent": (ANNOTATOR, *CURATORS), "report": SUBMISSION_READERS,
                    "report_csv": SUBMISSION_READERS, "queue": SUBMISSION_READERS}
    queryset = Study.objects.select_related("required_qualification")
    serializer_class = StudySerializer
    filterset_class = StudyFilter
    lookup_field = "slug"

    def perform_create(self, serializer):
        serializer.save(created_by=self.request.user)

    def perform_update(self, serializer):
        if serializer.instance.state == Study.State.CLOSED:
            raise ValidationError({"error": "A closed study cannot change."})
        study_settings.resize_items(serializer.save())

    def _set_state(self, request, verb):
        study = study_state.change(self.get_object(), verb, request.user)
        return Response(StudySerializer(study).data)

    @extend_schema(request=None, responses=StudySerializer)
    @action(detail=True, methods=["post"], url_path="open")
    def open_study(self, request, slug=None):
        return self._set_state(request, "open")

    @extend_schema(request=None, responses=StudySerializer)
    @action(detail=True, methods=["post"])
    def pause(self, request, slug=None):
        return self._set_state(request, "pause")

    @extend_schema(request=None, responses=StudySerializer)
    @action(detail=True, methods=["post"])
    def close(self, request, slug=None):
        return self._set_state(request, "close")

    @extend_schema(request=StudyItemInSerializer(many=True), responses={201: StudyItemsAddedSerializer})
    @action(detail=True, methods=["post"])
    def items(self, request, slug=None):
        study = self.get_object()
        if study.state == Study.State.CLOSED:
            return Response({"error": "A closed study takes no new items."}, status=409)
        rows = StudyItemInSerializer(data=request.data, many=True, context={"study": study})
        rows.is_valid(raise_exception=True)
        ids = [row["external_id"] for row in rows.validated_data]
        clashes = set(StudyItem.objects.filter(study=study, external_id__in=ids).values_list("external_id", flat=True))
        if clashes or len(set(ids)) != len(ids):
            return Response({"error": "Duplicate item ids.", "details": sorted(clashes) or ids}, status=409)
        items = rows.validated_data
        with transaction.atomic():
            study = Study.objects.select_for_update().get(pk=study.pk)  # one batch at a time: no video twice
            if staged.is_staged(study):  # each item names a finished split: {"split_id": …}
                if any(set(row["payload"]) != {"split_id"} for row in items):
                    return Response({"error": 'Items of a staged study are {"payload": {"split_id": …}}.'},
                                    status=400)
                videos = staged.item_rows([row["payload"]["split_id"] for row in items], study)
                items = [{**row, "payload": found["payload"], "video": found["video"]}
                         for row, found in zip(items, videos, strict=True)]
            elif kinds.of(study).item_row is not None:  # the kind resolves its own items
                items = [dict(row) for row in items]
                problems = [(row["external_id"], text) for row in items
                            if (text := kinds.of(study).item_row(study, row))]
                if problems:
                    return Response({"error": "Some items do not fit this study.",
                                     "details": [f"{ident}: {text}" for ident, text in problems]}, status=400)
            created = assignment.add_items(study, items)
        return Response({"created": len(created)}, status=201)

    @extend_schema(request=None, responses={
        200: PolymorphicProxySerializer(component_name="CurrentClaimOrNone", resource_type_field_name=None,
                                        serializers=[WorkerClaimSerializer, NoItemLeftSerializer]),
        201: WorkerClaimSerializer})
    @action(detail=True, methods=["post"])
    def claim(self, request, slug=None):
        found = eligibility.study_and_standing(slug, request.user)
        if found is None:
            raise CrowdError("No such study.", status=404)
        study, facts = found
        platforms.check_reach(request, study)
        claim = assignment.claim_next(study, request.user, facts=facts,
                                      platform_assignment_id=platforms.session_assignment(request, study))
        if claim is None:
            return Response({"claim": None, "message": "There is no item left for you in this study. Thank you!"},
                            status=200)
        new = getattr(claim, "newly_claimed", False)
        body = WorkerClaimSerializer(claim).data
        # 200: the worker's current claim again; 201: a new one (also when the old lease had expired)
        return Response(body, status=201 if new else 200)

    @extend_schema(request=None, responses={201: inline_serializer("StudyConsent", {
        "study": serializers.CharField(), "agreed_at": serializers.DateTimeField()})})
    @action(detail=True, methods=["post"])
    def consent(self, request, slug=None):
        """The worker agrees to the study's consent / introduction page; their first claim needs it."""
        found = eligibility.study_and_standing(slug, request.user)
        if found is None:
            raise CrowdError("No such study.", status=404)
        platforms.check_reach(request, found[0])
        agreed = consent.give(found[0], request.user)
        return Response({"study": found[0].slug, "agreed_at": agreed.agreed_at}, status=201)

    @extend_schema(responses=SubmissionSerializer(many=True))
    @action(detail=True, methods=["get"], filterset_class=StudyQueueFilter, pagination_class=QueuePagination)
    def queue(self, request, slug=None):
        """The study's submissions in a review queue (filters: `annotation.crowd.filters.StudyQueueFilter`)."""
        study = self.get_object()
        page = self.paginate_queryset(self.filter_queryset(review.queue(study, "all", state="")))
        response = self.get_paginated_response(SubmissionSerializer(page, many=True).data)
        response.data["counts"] = review.queue_counts(study)
        return response

    @extend_schema(request=BulkReviewSerializer, responses=BulkReviewResultSerializer)
    @action(detail=True, methods=["post"])
    def review(self, request, slug=None):
        study = self.get_object()
        body = BulkReviewSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        chosen = Submission.objects.filter(claim__study=study, pk__in=body.validated_data["submission_ids"])
        if chosen.count() != len(set(body.validated_data["submission_ids"])):
            return Response({"error": "Some submissions do not belong to this study."}, status=400)
        verb, reason, criterion = (body.validated_data[key] for key in ("action", "reason", "criterion"))
        problem = review.rejection_problem(study, verb == "approve", reason, criterion)
        if problem:
            return Response({"error": problem}, status=400)
        return Response(review.bulk(chosen, request.user, action=verb, reason=reason, criterion=criterion))

    @extend_schema(responses={(200, "application/json"): StudyReportSerializer, (200, "text/csv"): OpenApiTypes.STR})
    @action(detail=True, methods=["get"], renderer_classes=reports.REPORT_RENDERERS)
    def report(self, request, slug=None, format=None):
        """Agreement per form field, per-worker quality and speed, throughput, progress."""
        if request.accepted_renderer.format == "csv":
            # `report.csv` lands here (DRF's format suffix route comes before `report_csv`'s),
            # as do ?format=csv and Accept: text/csv
            return self.report_csv(request, slug=slug)
        return Response(reports.study_report(self.get_object()))

    @extend_schema(operation_id="studies_report_csv", responses={(200, "text/csv"): str})
    @action(detail=True, methods=["get"], url_path="report.csv", url_name="report-csv",
            renderer_classes=[reports.CSVRenderer])
    def report_csv(self, request, slug=None, format=None):
        """The per-worker table of the report as a streamed CSV file."""
        study = self.get_object()
        response = StreamingHttpResponse(reports.report_csv_lines(study), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{study.slug}-workers.csv"'
        return response


class ClaimViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """A worker's own claims. Other workers' claims do not exist for them (404)."""

    allowed_roles = (ANNOTATOR, *CURATORS)
    serializer_class = WorkerClaimSerializer
    queryset = Claim.objects.none()  # the real one is the worker's own (get_queryset); this types the schema's `id`
    filterset_class = ClaimFilter

    def get_queryset(self):
        return platforms.reachable_claims(self.request, selectors.claims_of(self.request.user))

    @extend_schema(request=AnswerSerializer, responses=DraftSavedSerializer)
    @action(detail=True, methods=["put", "post"])
    def draft(self, request, pk=None):
        claim = self._claim(pk)
        self._not_staged(claim)
        body = AnswerSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        draft = submissions.save_draft(claim, request.user, body.validated_data["data"],
                                       active_seconds=body.validated_data["active_seconds"])
        return Response({"revision": draft.revision, "updated_at": draft.updated_at})

    @extend_schema(request=AnswerSerializer, responses={201: SubmittedSerializer, 200: SubmittedSerializer})
    @action(detail=True, methods=["post"])
    def submit(self, request, pk=None):
        claim = self._claim(pk)
        self._not_staged(claim)
        body = AnswerSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        submission, created, feedback = submissions.submit(
            claim, request.user, body.validated_data["data"], active_seconds=body.validated_data["active_seconds"])
        return Response({"submission": submission.pk, "created": created, "feedback": feedback},
                        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=None, responses=ReleasedClaimSerializer)
    @action(detail=True, methods=["post"])
    def release(self, request, pk=None):
        claim = assignment.release(self._claim(pk), request.user)
        return Response({"id": claim.pk, "status": claim.status})

    # --- Staged studies (BlackSwanSuite): one claim, three steps in order, each with its own draft ---

    @extend_schema(responses=StageStateSerializer)
    @action(detail=True, methods=["get"])
    def stage(self, request, pk=None):
        """The current step of a staged claim: its players (only clips the step shows), draft and
        the worker's earlier answers."""
        return _no_store(Response(staged.stage_state(self._claim(pk))))

    @extend_schema(request=AnswerSerializer, responses=StepDraftSavedSerializer, parameters=[STEP_PARAMETER])
    @action(detail=True, methods=["put", "post"], url_path="steps/<slug:step>/draft", url_name="step-draft")
    def step_draft(self, request, pk=None, step=None):
        claim = self._claim(pk)
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
        claim = self._claim(pk)
        body = AnswerSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        result = staged.submit_step(claim, request.user, step, body.validated_data["data"],
                                    active_seconds=body.validated_data["active_seconds"])
        return _no_store(Response({
            "step": result.step, "next_step": result.next_step, "finished": result.finished,
            "submission": result.submission.pk if result.submission else None, "feedback": result.feedback or {},
        }, status=status.HTTP_201_CREATED))

    @staticmethod
    def _not_staged(claim: Claim) -> None:
        if staged.is_staged(claim.study):
            raise CrowdError("This item has steps: save and submit each at /api/claims/<id>/steps/<step>/.",
                             status=409)

    def _claim(self, pk) -> Claim:
        """The caller's own claim; another worker's claim does not exist for them (404, like GET)."""
        claim = submissions.load_claim(pk) if str(pk).isdigit() else None
        if claim is None or claim.worker_id != self.request.user.pk or not platforms.reaches_claim(self.request, claim):
            raise CrowdError("No such claim.", status=404)
        return claim


def _no_store(response):
    response["Cache-Control"] = "private, no-store"
    return response


class SubmissionViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Workers' submissions of every study, newest first (filters: `annotation.crowd.filters.SubmissionFilter`),
    and single review decisions: approve, reject (reason required), edit (corrected answers, then approve).

    Who reads submissions and who decides on them: `annotation.crowd.access`."""

    allowed_roles = SUBMISSION_READERS
    action_roles = {"decide": SUBMISSION_REVIEWERS}
    serializer_class = SubmissionSerializer
    queryset = Submission.objects.none()  # the real one is get_queryset's; this types the schema's `id`
    filterset_class = SubmissionFilter

    def get_queryset(self):
        return selectors.submissions_with_context()

    @extend_schema(request=ReviewSerializer, responses=SubmissionSerializer)
    @action(detail=True, methods=["post"], url_path="review")
    def decide(self, request, pk=None):
        submission = self.get_object()
        body = ReviewSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        verb, reason, criterion = (body.validated_data[key] for key in ("action", "reason", "criterion"))
        if verb != "reject" and criterion.strip():
            return Response({"error": "Only a rejection names a criterion."}, status=400)
        if verb == "approve":
            review.approve(submission, request.user, reason=reason)
        elif verb == "reject":
            review.reject(submission, request.user, reason=reason, criterion=criterion)
        else:
            if "data" not in body.validated_data:
                return Response({"error": "Send the corrected answers in 'data'."}, status=400)
            review.approve(submission, request.user, edited=body.validated_data["data"], reason=reason)
        submission.refresh_from_db()
        return Response(SubmissionSerializer(submission).data)

    @extend_schema(responses=inline_serializer("SubmissionHistoryEntry", many=True, fields={
        "entity": serializers.CharField(), "from": serializers.CharField(), "to": serializers.CharField(),
        "by": serializers.CharField(allow_null=True), "at": serializers.DateTimeField(),
        "reason": serializers.CharField()}))
    @action(detail=True, methods=["get"], pagination_class=None)
    def history(self, request, pk=None):
        submission = self.get_object()
        rows = list(history.for_object(Submission, submission.pk)) + list(
            history.for_object(Claim, submission.claim_id))
        rows.sort(key=lambda r: (r.created_at, r.pk))
        return Response([{"entity": r.content_type.model, "from": r.from_state, "to": r.to_state,
                          "by": r.actor.username if r.actor else None, "at": r.created_at, "reason": r.reason}
                         for r in rows])
