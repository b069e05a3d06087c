"""Query filters of the API's lists, with django-filter: each list declares a FilterSet (in its app's
`filters` module), the schema lists its parameters, and a value that does not parse (a non-integer id,
an unknown choice, a bad date, a boolean that is neither true nor false) is a 400 naming the parameter.

`ListFilterBackend` is the API's filter backend (`REST_FRAMEWORK["DEFAULT_FILTER_BACKENDS"]`).
"""

from django import forms
from django.core.exceptions import ValidationError
from django_filters import rest_framework as filters

TRUE_WORDS = ("1", "true", "yes")
FALSE_WORDS = ("0", "false", "no")


class ListFilterBackend(filters.DjangoFilterBackend):
    """django-filter's backend, for the rows a route lists.

    The view's `filterset_class` narrows its `list`; an action that lists other rows (a run's
    predictions, a study's review queue) names its own `filterset_class` in `@action(...)` and passes
    those rows through `filter_queryset`. A filterset only ever narrows rows of its own model, and the
    object lookup of a detail route (`get_object`) is never narrowed by the list's filters.
    """

    def get_filterset_class(self, view, queryset=None):
        filterset_class = self.listed_filterset(view)
        if filterset_class is None or queryset is None:
            return filterset_class
        return filterset_class if issubclass(queryset.model, filterset_class._meta.model) else None

    @staticmethod
    def listed_filterset(view):
        """The FilterSet of what the view's action lists: the view's own for `list`, an action's own
        `filterset_class`; none for the routes of one object, which may not be narrowed by the list's."""
        filterset_class = getattr(view, "filterset_class", None)
        if getattr(view, "detail", False) and filterset_class is getattr(type(view), "filterset_class", None):
            return None
        return filterset_class


class StrictBooleanField(forms.Field):
    """true/false (also 1/0, yes/no, any case); anything else is refused instead of read as "not given"."""

    default_error_messages = {"invalid": "Give true or false."}

    def to_python(self, value):
        text = str(value or "").strip().lower()
        if not text:
            return None
        if text in TRUE_WORDS:
            return True
        if text in FALSE_WORDS:
            return False
        raise ValidationError(self.error_messages["invalid"], code="invalid")


class BooleanFilter(filters.BooleanFilter):
    field_class = StrictBooleanField

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", forms.TextInput)
        super().__init__(*args, **kwargs)


def after(field_name: str, what: str) -> filters.IsoDateTimeFilter:
    """`?<name>=<ISO 8601 date or time>`: only rows whose `field_name` is at or after it."""
    return filters.IsoDateTimeFilter(field_name=field_name, lookup_expr="gte",
                                     help_text=f"only {what} at or after this time (ISO 8601 date or date-time)")


def before(field_name: str, what: str) -> filters.IsoDateTimeFilter:
    """`?<name>=<ISO 8601 date or time>`: only rows whose `field_name` is before it."""
    return filters.IsoDateTimeFilter(field_name=field_name, lookup_expr="lt",
                                     help_text=f"only {what} before this time (ISO 8601 date or date-time)")
