"""The API's answer to OPTIONS (`REST_FRAMEWORK["DEFAULT_METADATA_CLASS"]`): DRF's (the view's name and
description, what it renders and parses, and for writes the fields of the view's serializer), in JSON, for
every view. A view with no serializer of its own (its actions read their bodies themselves, as the NL-EYE
triplet endpoints do) answers without the fields, where DRF's would fail."""

from rest_framework.metadata import SimpleMetadata

from config.api_rendering import render_as_json


class ApiMetadata(SimpleMetadata):
    def determine_metadata(self, request, view):
        render_as_json(request)
        return super().determine_metadata(request, view)

    def determine_actions(self, request, view):
        if not has_serializer(view):
            return {}
        return super().determine_actions(request, view)


def has_serializer(view) -> bool:
    get_serializer_class = getattr(view, "get_serializer_class", None)
    if get_serializer_class is None:  # the view makes its serializer its own way (`get_serializer`)
        return True
    try:
        get_serializer_class()
    except AssertionError:  # DRF's generic views assert that a serializer class is declared
        return False
    return True
