"""The download of a finished export job's file: for whoever may export its rows (`exports.can_export`:
researchers and admins; crowd submissions also curators), and only the exports they asked for (an
admin gets any). The file is sent like protected media (streamed, or by nginx)."""

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404

from annotation.media_serving import serve_protected
from config.permissions import roles_allowed
from config.roles import ADMIN, STAFF_ROLES, has_role
from evaluation import exports
from generation.models import Job


@dataclass(frozen=True)
class ExportFile:
    """What `serve_protected` reads of a stored file: its path, and its name under MEDIA_ROOT."""

    path: str
    name: str


@roles_allowed(*STAFF_ROLES)
def download_export(request, pk):
    job = get_object_or_404(Job, pk=pk, kind=exports.EXPORT_JOB_KIND)
    if job.requested_by_id != request.user.pk and not has_role(request.user, ADMIN):
        raise PermissionDenied("This export belongs to someone else.")
    what = (job.params or {}).get("what")
    if not exports.can_export(request.user, what if what in exports.SOURCES else None):
        raise PermissionDenied("Your role does not allow this export.")
    if not job.is_finished:
        return HttpResponse("The export is still running.", status=409, content_type="text/plain")
    path = exports.export_file(job)
    if path is None:
        raise Http404("This export has no file.")
    stored = ExportFile(str(path), f"{exports.EXPORT_FOLDER}/{path.relative_to(exports.export_root().resolve())}")
    response = serve_protected(request, stored)
    response["Content-Disposition"] = f'attachment; filename="{path.name}"'
    return response
