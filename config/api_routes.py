"""The API's addresses: DRF's router, with ids read by the `id` path converter (`config.ids`) and every format
suffix served.

- An object route's id is `<id:pk>` (a slug lookup is `<slug:…>`): an id out of range, or one with a dot
  (`/api/videos/1.5/`), matches no route and gets the API's JSON 404 (`config.not_found`).
- Every route also answers with a format suffix, as DRF's `format_suffix_patterns` adds them
  (`/api/videos.json`, `/api/studies/<slug>/report.csv`): the suffix is read exactly as the `?format=`
  parameter is (the renderer it names; 404 for one the route has not), so no view's handler needs a
  `format` argument of its own.
"""

from functools import wraps

from django.urls import URLPattern
from rest_framework.routers import DefaultRouter
from rest_framework.settings import api_settings
from rest_framework.urlpatterns import format_suffix_patterns


class ApiRouter(DefaultRouter):
    include_root_view = False
    include_format_suffixes = False  # `with_format_suffixes` adds them, to every route of the API

    def __init__(self):
        super().__init__(use_regex_path=False)

    def register_actions(self, prefix: str, viewset, basename: str) -> None:
        """More actions on the objects of a prefix registered already, named under its basename (e.g. the
        actions a kind of study adds to a claim), from a viewset of its own that has extra actions only."""
        if not any(entry[0] == prefix and entry[2] == basename for entry in self.registry):
            raise ValueError(f"Register {prefix!r} as {basename!r} before adding actions to it.")
        own_routes = ("list", "create", "retrieve", "update", "partial_update", "destroy")
        if any(hasattr(viewset, name) for name in own_routes):
            raise ValueError(f"{viewset.__name__} would add routes of its own to {prefix!r}: extra actions only.")
        self.registry.append((prefix, viewset, basename))
        if hasattr(self, "_urls"):
            del self._urls

    def get_lookup_regex(self, viewset, lookup_prefix=""):
        lookup_field = getattr(viewset, "lookup_field", "pk")
        lookup_url_kwarg = getattr(viewset, "lookup_url_kwarg", None) or lookup_field
        converter = getattr(viewset, "lookup_value_converter", None) or ("id" if lookup_field == "pk" else "slug")
        return f"<{converter}:{lookup_prefix}{lookup_url_kwarg}>"


def with_format_suffixes(urlpatterns: list) -> list:
    """The routes, each followed by its format-suffix route, whose view reads the suffix as `?format=`."""
    return [_format_as_parameter(pattern) if _has_format_suffix(pattern) else pattern
            for pattern in format_suffix_patterns(urlpatterns)]


def _has_format_suffix(pattern) -> bool:
    return isinstance(pattern, URLPattern) and api_settings.FORMAT_SUFFIX_KWARG in pattern.pattern.regex.groupindex


def _format_as_parameter(pattern: URLPattern) -> URLPattern:
    view = pattern.callback
    name = api_settings.FORMAT_SUFFIX_KWARG

    @wraps(view)
    def view_with_format_parameter(request, *args, **kwargs):
        query = request.GET.copy()
        query[api_settings.URL_FORMAT_OVERRIDE] = kwargs.pop(name)
        request.GET = query
        return view(request, *args, **kwargs)

    view_with_format_parameter.unsuffixed = view  # the same operation (`config.query_parameters`)
    return URLPattern(pattern.pattern, view_with_format_parameter, pattern.default_args, pattern.name)
