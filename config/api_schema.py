"""How the API describes itself (drf-spectacular): every operation lists the refusals it can give, each
with the platform's error body (`config.api_errors`), and each list's filters come from its FilterSet.

Which refusals an operation documents is read from the operation itself:

- 400 everywhere: a query parameter the operation does not take (`config.query_parameters`), and a body
  (a write) or a filter value that is refused; 413 and 415 where a body is accepted;
- 403 unless the endpoint is public (not signed in, or the role or ownership does not allow it);
- 404 for an object route (a path parameter) and for a paginated list (a page past the last);
- 409 for writes: a state that does not allow them (done, frozen, closed, taken, changed meanwhile);
- 429 where the view is rate limited: DRF throttles, or `rate_limited = True` on the view (or on
  `@action(...)`) for views that count attempts themselves.

An explicit `@extend_schema(responses={<code>: …})` wins over these.
"""

from drf_spectacular import openapi
from drf_spectacular.contrib.django_filters import DjangoFilterExtension
from drf_spectacular.drainage import add_trace_message
from drf_spectacular.extensions import OpenApiSerializerExtension, OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import ResolvedComponent, get_view_model
from rest_framework.permissions import AllowAny
from rest_framework.schemas.utils import get_pk_description

from config.api_errors import ErrorSerializer
from config.api_fields import JSONListField, JSONObjectField, JSONValueField

WRITES = ("POST", "PUT", "PATCH", "DELETE")

ERROR_DESCRIPTIONS = {
    400: "Refused input: a field, a filter value or the body is not valid, or the query names a parameter the "
         "operation does not take. `error` says what to fix; each refused field, filter or unknown parameter "
         "carries its messages under its own name.",
    403: "Not signed in, or the caller's role (or, for some objects, not being their owner) does not allow this.",
    404: "No such object, or none the caller may see; for a list, a page past the last one.",
    409: "The object's current state does not allow this (already done, frozen, closed, taken, or changed "
         "meanwhile); nothing was written.",
    413: "The request body or an uploaded file is larger than the platform accepts.",
    415: "The body's content type, or an uploaded file's type, is not accepted.",
    429: "Too many attempts: wait as long as the Retry-After header says.",
}

MESSAGES = ResolvedComponent(
    name="ErrorMessages", type=ResolvedComponent.SCHEMA, object="ErrorMessages",
    schema={"description": "A message, or messages by field name or by position, nested as the refused input is.",
            "oneOf": [{"type": "string"},
                      {"type": "array", "items": {"$ref": "#/components/schemas/ErrorMessages"}},
                      {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/ErrorMessages"}}]})


JSON_VALUE = ResolvedComponent(
    name="JsonValue", type=ResolvedComponent.SCHEMA, object="JsonValue",
    schema={"description": "Any JSON value: a string, a number, a boolean, null, a list or an object of JSON values.",
            "nullable": True,
            "oneOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"},
                      {"type": "array", "items": {"$ref": "#/components/schemas/JsonValue"}},
                      {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/JsonValue"}}]})


class JSONValueFieldExtension(OpenApiSerializerFieldExtension):
    target_class = JSONValueField

    def map_serializer_field(self, auto_schema, direction):
        auto_schema.registry.register_on_missing(JSON_VALUE)
        return {"allOf": [JSON_VALUE.ref]}


class JSONListFieldExtension(OpenApiSerializerFieldExtension):
    target_class = JSONListField

    def map_serializer_field(self, auto_schema, direction):
        auto_schema.registry.register_on_missing(JSON_VALUE)
        return {"type": "array", "items": JSON_VALUE.ref}


class JSONObjectFieldExtension(OpenApiSerializerFieldExtension):
    target_class = JSONObjectField

    def map_serializer_field(self, auto_schema, direction):
        auto_schema.registry.register_on_missing(JSON_VALUE)
        return {"type": "object", "additionalProperties": JSON_VALUE.ref}


class ErrorBodyExtension(OpenApiSerializerExtension):
    """The error body's schema: `ErrorSerializer`'s keys, messages typed as `ErrorMessages`, and any other
    key a refused field's messages."""

    target_class = ErrorSerializer

    def get_name(self, auto_schema, direction):
        return "Error"

    def map_serializer(self, auto_schema, direction):
        auto_schema.registry.register_on_missing(MESSAGES)
        schema = auto_schema._map_serializer(self.target_class, direction, bypass_extensions=True)
        for name in ("details", "errors"):
            schema["properties"][name] = {"allOf": [MESSAGES.ref],
                                          "description": self.target_class().fields[name].help_text}
        schema["additionalProperties"] = MESSAGES.ref
        return schema


class FilterSetExtension(DjangoFilterExtension):
    """The parameters of the FilterSet that narrows a list (`config.api_filters.ListFilterBackend`), read from
    the FilterSet's own model: an action may list rows of another model than its view's (a run's
    predictions). Choices given as a function are listed too: the API's choice functions read registries,
    never the database."""

    target_class = "config.api_filters.ListFilterBackend"
    priority = 1

    def get_schema_operation_parameters(self, auto_schema, *args, **kwargs):
        filterset_class = self.target.listed_filterset(auto_schema.view)
        if filterset_class is None:
            return []
        parameters = []
        with add_trace_message(filterset_class):
            for name, field in filterset_class.base_filters.items():
                parameters += self.resolve_filter_field(auto_schema, filterset_class._meta.model, filterset_class,
                                                        name, field)
        return parameters

    def _get_explicit_filter_choices(self, filter_field):
        choices = filter_field.extra.get("choices")
        if callable(choices):
            return [value for value, _label in choices()]
        return super()._get_explicit_filter_choices(filter_field)


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's AutoSchema, with the refusals each operation can give (see the module's docstring)."""

    def get_operation(self, *args, **kwargs):
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        error_body = self.resolve_serializer(ErrorSerializer, "response").ref
        responses = operation["responses"]
        for status in self.error_statuses(operation):
            responses.setdefault(str(status), {
                "description": ERROR_DESCRIPTIONS[status],
                "content": {"application/json": {"schema": error_body}},
            })
        operation["responses"] = dict(sorted(responses.items()))
        return operation

    def _resolve_path_parameters(self, variables):
        """drf-spectacular's, with the object lookup's description kept where the path converter gives its type
        (`<id:pk>`, `<slug:slug>`: `config.api_routes`)."""
        parameters = super()._resolve_path_parameters(variables)
        model = get_view_model(self.view, emit_warnings=False)
        lookup_field = getattr(self.view, "lookup_field", "pk")
        lookup = "id" if lookup_field == "pk" else getattr(self.view, "lookup_url_kwarg", None) or lookup_field
        for parameter in parameters:
            if model is not None and parameter["name"] == lookup and not parameter.get("description"):
                field = model._meta.pk if lookup_field == "pk" else model._meta.get_field(lookup_field)
                parameter["description"] = str(field.help_text or get_pk_description(model, field))
        return parameters

    def get_paginated_name(self, serializer_name: str) -> str:
        """A paginator whose pages carry more than the list names its own component (`component_name`)."""
        return getattr(self._get_paginator(), "component_name", None) or super().get_paginated_name(serializer_name)

    def error_statuses(self, operation: dict) -> list[int]:
        parameters = operation.get("parameters", [])
        paginated = any(p["in"] == "query" and p["name"] == "page" for p in parameters)
        has_body = "requestBody" in operation
        write = self.method in WRITES
        statuses = {400}
        if not self._is_public():
            statuses.add(403)
        if any(p["in"] == "path" for p in parameters) or paginated:
            statuses.add(404)
        if write and not self._is_public():
            statuses.add(409)
        if has_body:
            statuses |= {413, 415}
        if getattr(self.view, "rate_limited", False) or self.view.get_throttles():
            statuses.add(429)
        return sorted(statuses)

    def _is_public(self) -> bool:
        return all(isinstance(permission, AllowAny) for permission in self.view.get_permissions())
