"""Serializer fields for JSON values the API passes through as stored, typed in the schema
(`config.api_schema` maps them): any JSON value is a `JsonValue`, never an untyped `{}`."""

from rest_framework import serializers


class JSONValueField(serializers.JSONField):
    """Any JSON value (a string, a number, a boolean, a list or an object), e.g. a parsed answer."""


class JSONListField(serializers.JSONField):
    """A JSON list as stored (its items are JSON values), e.g. the messages of a prompt."""


class JSONObjectField(serializers.JSONField):
    """A JSON object whose keys are not fixed by the API: they depend on the benchmark, the study's form,
    the job's kind or the backend. Say which in the field's `help_text`; it becomes the schema's description."""
