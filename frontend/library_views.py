"""The media library's curating pages: rename, tag and delete (with a confirmation page) one medium.

Only curators and admins change the library; the changes are made by `annotation.media_library`,
which refuses bad input (400) and the deletion of a medium something uses (409, naming the uses).
"""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation import media_library
from annotation.media_library import LibraryError
from config.permissions import roles_allowed
from config.roles import ADMIN, CURATOR

CURATORS = (CURATOR, ADMIN)
DETAIL_PAGES = {"videos": "video-detail", "images": "image-detail"}


def _detail_url(kind: str, asset) -> str:
    return reverse(DETAIL_PAGES[kind], kwargs={"pk": asset.pk})


def _refused(request, exc: LibraryError, asset=None, kind: str = ""):
    return render(request, "frontend/media_refused.html", {
        "message": exc.message, "asset": asset, "back": _detail_url(kind, asset) if asset else reverse("media-library"),
    }, status=exc.status)


def _found(request, kind: str, pk: int):
    """The medium, or None and the refusal page for an unknown kind (an unknown id is a 404)."""
    try:
        model = media_library.model_for(kind)
    except LibraryError as exc:
        return None, _refused(request, exc)
    return get_object_or_404(model, pk=pk), None


@roles_allowed(*CURATORS)
@require_POST
def rename(request, kind, pk):
    """POST title=…: the medium's new title."""
    asset, refused = _found(request, kind, pk)
    if refused:
        return refused
    try:
        media_library.rename(asset, request.POST.get("title", ""))
    except LibraryError as exc:
        return _refused(request, exc, asset, kind)
    messages.success(request, f"Renamed to “{asset.title}”.")
    return redirect(_detail_url(kind, asset))


@roles_allowed(*CURATORS)
@require_POST
def tags(request, kind, pk):
    """POST tags=a, b, c: the medium's tags (replacing the old ones)."""
    asset, refused = _found(request, kind, pk)
    if refused:
        return refused
    try:
        names = media_library.set_tags(asset, request.POST.get("tags", ""))
    except LibraryError as exc:
        return _refused(request, exc, asset, kind)
    messages.success(request, f"Tags saved: {', '.join(names)}." if names else "Tags removed.")
    return redirect(_detail_url(kind, asset))


@roles_allowed(*CURATORS)
@require_http_methods(["GET", "POST"])
def delete(request, kind, pk):
    """GET: what deleting would do, or why it cannot be done (409). POST confirm=yes: delete the
    medium and its stored files."""
    asset, refused = _found(request, kind, pk)
    if refused:
        return refused
    if request.method == "GET":
        reason = media_library.refusal(asset)
        return render(request, "frontend/media_delete.html", {
            "asset": asset, "kind": kind, "reason": reason, "back": _detail_url(kind, asset),
        }, status=409 if reason else 200)
    if request.POST.get("confirm") != "yes":
        return _refused(request, LibraryError("Confirm the deletion to delete this file."), asset, kind)
    title = asset.title
    try:
        media_library.delete_unused(asset)
    except LibraryError as exc:
        return _refused(request, exc, asset, kind)
    messages.success(request, f"“{title}” and its files were deleted.")
    return redirect("media-library")
