"""The registry in the OpenAPI schema: benchmark slugs as one enum, item payloads as each benchmark's schema.

Both are computed when the schema is generated, from the benchmarks registered then. Each benchmark's
payload schema is its pydantic models' JSON schema (`<Slug>Payload`, a union told apart by `kind`,
with one component per record kind); an item's `payload` is any of them, the one of its version's
benchmark.
"""

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.plumbing import ResolvedComponent, build_choice_field
from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema
from rest_framework import serializers

from annotation.benchmarks import registry

COMPONENTS = "#/components/schemas/{model}"


def _slug_enum() -> dict:
    return build_choice_field(serializers.ChoiceField(choices=registry.choices()))


class BenchmarkSlugFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "annotation.serializers.BenchmarkSlugField"

    def map_serializer_field(self, auto_schema, direction):
        return _slug_enum()


class BenchmarkRelatedFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "annotation.serializers.BenchmarkRelatedField"

    def map_serializer_field(self, auto_schema, direction):
        return _slug_enum()


def payload_schemas() -> tuple[dict[str, dict], dict[str, dict]]:
    """Each benchmark's payload schema by component name, and the record kinds' schemas they refer to."""
    definitions = registry.all()
    by_key, shared = TypeAdapter.json_schemas(
        [(definition.slug, "validation", definition.payload_adapter) for definition in definitions],
        ref_template=COMPONENTS, schema_generator=OpenApi30JsonSchema)
    schemas = {}
    for definition in definitions:
        schema = dict(by_key[(definition.slug, "validation")])
        if "$ref" in schema:  # a benchmark with one record kind
            schema = {"allOf": [schema]}
        schema["description"] = f"An item of {definition.name}: {definition.description}"
        schemas[definition.schema_name] = schema
    kinds = shared.get("$defs", {})
    return schemas, {**kinds, **_hoisted_enums(kinds)}


class OpenApi30JsonSchema(GenerateJsonSchema):
    """pydantic's JSON Schema in OpenAPI 3.0's dialect: `nullable` instead of a null type, `enum` instead of `const`."""

    def nullable_schema(self, schema):
        inner = self.generate_inner(schema["schema"])
        return {"allOf": [inner], "nullable": True} if "$ref" in inner else {**inner, "nullable": True}

    def literal_schema(self, schema):
        result = super().literal_schema(schema)
        if "const" in result:
            result["enum"] = [result.pop("const")]
        return result


def _hoisted_enums(kinds: dict[str, dict]) -> dict[str, dict]:
    """The record kinds' choice sets as components of their own (`<Kind><Field>Enum`), so that drf-spectacular's
    enum naming, which would merge equal sets of different benchmarks under one name, leaves them alone."""
    enums = {}
    for kind_name, schema in kinds.items():
        for field, prop in schema.get("properties", {}).items():
            if "enum" in prop:
                name = kind_name + "".join(part.capitalize() for part in field.split("_")) + "Enum"
                enums[name] = {key: value for key, value in prop.items() if key != "title"}
                schema["properties"][field] = {"$ref": COMPONENTS.format(model=name)}
    return enums


class PayloadFieldExtension(OpenApiSerializerFieldExtension):
    target_class = "annotation.serializers.PayloadField"

    def map_serializer_field(self, auto_schema, direction):
        schemas, kinds = payload_schemas()
        for name, schema in {**kinds, **schemas}.items():
            auto_schema.registry.register_on_missing(
                ResolvedComponent(name=name, type=ResolvedComponent.SCHEMA, object=name, schema=schema))
        return {
            "description": "The item's record, in the payload schema of its version's benchmark (the `kind` "
                           "field tells the record kinds apart); fields the schema does not name are kept.",
            "anyOf": [{"$ref": COMPONENTS.format(model=name)} for name in schemas],
        }
