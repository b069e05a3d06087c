"""Protected media files: each request is checked against the asset before a byte is sent.

A browser sends its session; a script may send its API token (`Authorization: Token <key>`) instead,
and gets the same answers.
"""

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_safe

from annotation.access import can_view_media
from annotation.media_serving import serve_protected
from annotation.models import Image, Video
from config.authentication import accepts_api_token
from config.permissions import roles_allowed
from config.roles import ANY_ROLE


def _serve(request, model, pk, field):
    asset = get_object_or_404(model, pk=pk)
    if not can_view_media(request.user, asset):
        raise PermissionDenied("You may not see this file.")
    fieldfile = getattr(asset, field)
    if not fieldfile:
        raise Http404("This file does not exist yet.")
    return serve_protected(request, fieldfile, download_name=asset.original_name if field == "file" else None)


@require_safe
@accepts_api_token
@roles_allowed(*ANY_ROLE)
def video_file(request, pk):
    return _serve(request, Video, pk, "file")


@require_safe
@accepts_api_token
@roles_allowed(*ANY_ROLE)
def video_poster(request, pk):
    return _serve(request, Video, pk, "poster")


@require_safe
@accepts_api_token
@roles_allowed(*ANY_ROLE)
def image_file(request, pk):
    return _serve(request, Image, pk, "file")


@require_safe
@accepts_api_token
@roles_allowed(*ANY_ROLE)
def image_thumbnail(request, pk):
    return _serve(request, Image, pk, "thumbnail")
