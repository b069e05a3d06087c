"""Errors and OPTIONS descriptions are JSON on every route of the API: the platform's error body
(`config.api_errors`) and DRF's description of the view (`config.api_metadata`), also where the route
itself renders something else (a CSV download); the browsable API keeps its pages."""

from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer


def render_as_json(request) -> None:
    """Answer `request` (DRF's) in JSON unless it was negotiated as JSON or as the browsable API."""
    if request is not None and not isinstance(getattr(request, "accepted_renderer", None),
                                              JSONRenderer | BrowsableAPIRenderer):
        request.accepted_renderer, request.accepted_media_type = JSONRenderer(), JSONRenderer.media_type
