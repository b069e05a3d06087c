"""The download of a finished export job's file (a results export of `evaluation.exports`, a version export
of `annotation.version_exports`, or any job kind registered with `generation.job_files.register_download`):
only for the job's owner (an admin gets any), and only while the kind still lets them (e.g. a results
export for whoever may export its rows). The file is sent like protected media (streamed, or by nginx)."""

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404

from annotation.media_serving import serve_protected
from config.permissions import roles_allowed
from config.roles import ADMIN, STAFF_ROLES, has_role
from generation import job_files
from generation.models import Job


@dataclass(frozen=True)
class ExportFile:
    """What `serve_protected` reads of a stored file: its path, and its name under MEDIA_ROOT."""

    path: str
    name: str


@roles_allowed(*STAFF_ROLES)
def download_export(request, pk):
    job = get_object_or_404(Job, pk=pk, kind__in=job_files.download_kinds())
    if job.requested_by_id != request.user.pk and not has_role(request.user, ADMIN):
        raise PermissionDenied("This export belongs to someone else.")
    if not job_files.may_download(request.user, job):
        raise PermissionDenied("Your role does not allow this export.")
    if not job.is_finished:
        return HttpResponse("The export is still running.", status=409, content_type="text/plain")
    path = job_files.job_file(job)
    if path is None:
        raise Http404("This export has no file.")
    response = serve_protected(request, ExportFile(str(path), job_files.stored_name(path)))
    response["Content-Disposition"] = f'attachment; filename="{path.name}"'
    return response
