from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from config.roles import ADMIN, ANY_ROLE, has_role
from generation import jobs
from generation.filters import JobFilter
from generation.models import Job
from generation.selectors import visible_jobs
from generation.serializers import JobSerializer


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
