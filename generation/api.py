from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from config.roles import ADMIN, ANY_ROLE, STAFF_ROLES, has_role
from generation import jobs, model_registry
from generation.filters import JobFilter, RegisteredModelFilter
from generation.models import Job, RegisteredModel
from generation.selectors import visible_jobs
from generation.serializers import JobSerializer, RegisteredModelSerializer


class JobViewSet(viewsets.ReadOnlyModelViewSet):
    """Background jobs with live status and progress, newest first; filters: `generation.filters.JobFilter`."""

    allowed_roles = ANY_ROLE
    serializer_class = JobSerializer
    queryset = Job.objects.none()  # the real one is per user (get_queryset); this types the schema's `id`
    filterset_class = JobFilter

    def get_queryset(self):
        return visible_jobs(self.request.user)

    @extend_schema(request=None, responses=JobSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        job = self.get_object()
        if job.requested_by_id != request.user.pk and not has_role(request.user, ADMIN):
            return Response({"error": "Only the person who started a job, or an admin, can cancel it."}, status=403)
        if not jobs.cancel(job):
            return Response({"error": f"Job #{job.pk} has already finished ({job.status})."}, status=409)
        job.refresh_from_db()
        return Response(self.get_serializer(job).data)


class RegisteredModelViewSet(viewsets.ReadOnlyModelViewSet):
    """The model registry (`generation.model_registry`): the models curators and researchers may pick, by name;
    admins also see disabled ones. Filter: `?use=` (what a model may be used for). Admins manage entries in the
    Django admin or with `manage.py models`."""

    allowed_roles = STAFF_ROLES
    serializer_class = RegisteredModelSerializer
    queryset = RegisteredModel.objects.none()  # the real one is get_queryset's; this types the schema's `id`
    filterset_class = RegisteredModelFilter

    def get_queryset(self):
        rows = RegisteredModel.objects.order_by("name")
        return rows if model_registry.is_admin(self.request.user) else rows.filter(enabled=True)
