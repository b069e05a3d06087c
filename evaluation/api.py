"""REST endpoints of evaluation runs: list and read runs, start one (its chunks go to the Celery
`gpu` queue), import one from predictions made elsewhere (a background job), cancel or resume it, read its
progress and its predictions.

Runs are shared within the research team: every researcher (and admin) sees every run; cancelling
and resuming are for the person who started the run, or an admin.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from config.roles import ADMIN, RESEARCHER
from evaluation import imported_runs, prediction_import_jobs, run_control, runs, selectors
from evaluation.filters import PredictionFilter, RunFilter
from evaluation.models import EvaluationRun
from evaluation.serializers import (
    PredictionSerializer,
    RunCreateSerializer,
    RunImportSerializer,
    RunProgressSerializer,
    RunSerializer,
)
from generation.serializers import JobSerializer

RESEARCHERS = (RESEARCHER, ADMIN)


class RunViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Evaluation runs, newest first (filters: `evaluation.filters.RunFilter`; `?status=`, `?benchmark=`,
    `?version=` (id) and `?model=` (part of the model id) among them). Creating a run checks its options
    against the benchmark and starts it on the Celery workers (`gpu` queue)."""

    allowed_roles = RESEARCHERS
    serializer_class = RunSerializer
    queryset = EvaluationRun.objects.none()  # the real one is get_queryset's; this types the schema's `id`
    filterset_class = RunFilter

    def get_queryset(self):
        return run_control.visible_runs()

    def get_serializer_class(self):
        return RunCreateSerializer if self.action == "create" else super().get_serializer_class()

    @extend_schema(request=RunCreateSerializer, responses={201: RunSerializer})
    def create(self, request):
        options = RunCreateSerializer(data=request.data)
        options.is_valid(raise_exception=True)
        try:
            run = run_control.start_new_run(options.validated_data["version"], user=request.user,
                                            **options.create_options())
        except runs.RunConfigError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        run.refresh_from_db()
        return Response(RunSerializer(run, context=self.get_serializer_context()).data, status=status.HTTP_201_CREATED)

    @extend_schema(request={"multipart/form-data": RunImportSerializer}, responses={202: JobSerializer})
    @action(detail=False, methods=["post"], url_path="import", url_name="import",
            parser_classes=[MultiPartParser, FormParser], serializer_class=RunImportSerializer)
    def import_predictions(self, request):
        """Import predictions made outside the platform (the platform's JSON lines, lmms-eval samples or a
        VLMEvalKit table, as `manage.py import_run` and the version's results page import them) as a succeeded run
        of backend `imported`, in a background job (`import_predictions`): 202 with the job, whose `result` holds
        the new run's id (`run`) and its results page (`run_url`) once it has succeeded, and whose `message` says
        why when the file is refused (a malformed file, rows naming no request: no run is kept). 400 with `error`
        when the request itself is refused (a version that is not frozen, options the benchmark does not take); 413
        for a file larger than the upload limit, refused as it is read."""
        found = RunImportSerializer(data=request.data)
        found.is_valid(raise_exception=True)
        data = found.validated_data
        try:
            job = prediction_import_jobs.enqueue_import(
                data["version"], data["file"], model_id=data["model_id"], fmt=data.get("predictions_format") or None,
                options=found.import_options(), user=request.user)
        except imported_runs.ImportRefused as exc:
            return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)

    def _control(self, request, verb):
        run = self.get_object()
        if not run_control.may_control(request.user, run):
            return Response({"error": f"Only the person who started a run, or an admin, can {verb} it."},
                            status=status.HTTP_403_FORBIDDEN)
        try:
            done, message = (run_control.cancel if verb == "cancel" else run_control.resume)(run, request.user)
        except runs.RunConfigError as exc:
            return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        if not done:
            return Response({"error": message}, status=status.HTTP_409_CONFLICT)
        run.refresh_from_db()
        return Response(RunSerializer(run, context=self.get_serializer_context()).data)

    @extend_schema(request=None, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        """Cancel a pending or running run: chunks not started never start, running ones stop at their next batch."""
        return self._control(request, "cancel")

    @extend_schema(request=None, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        """Start a failed or cancelled run again on the workers; only missing or failed predictions are made."""
        return self._control(request, "resume")

    @extend_schema(responses=RunProgressSerializer)
    @action(detail=True, methods=["get"], serializer_class=RunProgressSerializer)
    def progress(self, request, pk=None):
        return Response(RunProgressSerializer(self.get_object()).data)

    @extend_schema(responses=PredictionSerializer(many=True))
    @action(detail=True, methods=["get"], serializer_class=PredictionSerializer, filterset_class=PredictionFilter)
    def predictions(self, request, pk=None):
        """The run's predictions, each with the exact prompt and the inputs (frame indices) it recorded
        (filters: `evaluation.filters.PredictionFilter`)."""
        page = self.paginate_queryset(self.filter_queryset(selectors.run_predictions(self.get_object())))
        return self.get_paginated_response(PredictionSerializer(page, many=True).data)
