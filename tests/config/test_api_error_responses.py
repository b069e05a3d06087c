"""The schema documents every refusal with the platform's error body (`config.api_errors`), the refusals
the API really gives have that body and are documented on their operation, no response or field of the
schema is an untyped object, and no field the model lets be null is called non-null."""

import jsonschema
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from annotation.crowd.models import Qualification, QualificationTest
from config.api_errors import exception_handler
from config.roles import ANNOTATOR
from generation import jobs
from generation.models import Job
from tests.conftest import PASSWORD, create_study, logged_in_api, make_user

pytestmark = pytest.mark.django_db

ERROR_BODY = {"$ref": "#/components/schemas/Error"}
TYPED = ("type", "$ref", "oneOf", "anyOf", "allOf", "enum")
PUBLIC = {("/api/auth/token/", "post")}
METHODS = ("get", "post", "put", "patch", "delete")
FORM = {"fields": [{"name": "label", "type": "single_choice", "options": ["cat", "dog"]}]}


@pytest.fixture(scope="module")
def schema(django_db_setup, django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema):
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


# --- Every operation documents its refusals -----------------------------------------------------

def test_every_operation_documents_its_refusals_with_the_error_body(schema):
    checked = 0
    for path, method, operation in operations(schema):
        responses = operation["responses"]
        parameters = operation.get("parameters", [])
        expected = set()
        if (path, method) not in PUBLIC:
            expected.add("403")
        if any(p["in"] == "path" for p in parameters):
            expected.add("404")
        if method != "get" or "requestBody" in operation:
            expected.add("400")
        if "requestBody" in operation:
            expected |= {"413", "415"}
        if method != "get" and (path, method) not in PUBLIC:
            expected.add("409")
        assert expected <= set(responses), (method, path, sorted(responses))
        for code, response in responses.items():
            if code.startswith("4"):
                assert response["description"], (method, path, code)
                assert response["content"]["application/json"]["schema"] == ERROR_BODY, (method, path, code)
        checked += 1
    assert checked > 60


def test_rate_limited_operations_document_429(schema):
    limited = {(path, method) for path, method, op in operations(schema) if "429" in op["responses"]}
    assert limited == {("/api/auth/token/", "post"), ("/api/qualification-tests/{id}/attempt/", "post")}


def test_the_error_body_schema(schema):
    body = schema["components"]["schemas"]["Error"]
    assert body["required"] == ["error"]
    assert body["properties"]["error"]["type"] == "string"
    assert body["additionalProperties"] == {"$ref": "#/components/schemas/ErrorMessages"}


# --- No untyped objects ---------------------------------------------------------------------------

def untyped(node, where: str, found: list, documented_map: bool = False) -> None:
    """Collect schema nodes that say nothing of their type: `{}` (or metadata alone), and objects with
    neither properties nor typed values. A free-form map is allowed only as a documented object (a
    description) of free-form values."""
    if not isinstance(node, dict) or "$ref" in node:
        return
    if not any(key in node for key in TYPED):
        if not documented_map:
            found.append(where)
        return
    if node.get("type") == "object" and "properties" not in node:
        values = node.get("additionalProperties")
        free = values is None or values is True or values == {}
        if free and not node.get("description"):
            found.append(where)
    for name, child in node.get("properties", {}).items():
        untyped(child, f"{where}.{name}", found)
    values = node.get("additionalProperties")
    if isinstance(values, dict):
        untyped(values, f"{where}[*]", found, documented_map=bool(node.get("description")))
    if isinstance(node.get("items"), dict):
        untyped(node["items"], f"{where}[]", found)
    for key in ("oneOf", "anyOf", "allOf"):
        for index, child in enumerate(node.get(key, [])):
            untyped(child, f"{where}<{key}{index}>", found)


def bodies(operation):
    for code, response in operation["responses"].items():
        for media_type, content in response.get("content", {}).items():
            yield f"{code} {media_type}", content["schema"]
    for media_type, content in operation.get("requestBody", {}).get("content", {}).items():
        yield f"request {media_type}", content["schema"]


def test_no_response_request_or_component_is_an_untyped_object(schema):
    found = []
    components = schema["components"]["schemas"]
    for path, method, operation in operations(schema):
        for where, body in bodies(operation):
            untyped(body, f"{method.upper()} {path} {where}", found)
            top = components[body["$ref"].rsplit("/", 1)[1]] if "$ref" in body else body
            if where[0] in "2" and top.get("type") == "object" and "properties" not in top:
                found.append(f"{method.upper()} {path} {where}: a free-form object")
    for name, component in components.items():
        untyped(component, f"#{name}", found)
    assert not found, "\n".join(found)


def test_the_walker_finds_what_it_must():
    found = []
    untyped({"type": "object", "properties": {"a": {}, "b": {"type": "object"}, "c": {"description": "x"},
                                              "d": {"type": "object", "additionalProperties": {}},
                                              "e": {"type": "array", "items": {}},
                                              "ok": {"type": "object", "additionalProperties": {}, "description": "y"},
                                              "ok2": {"type": "object", "additionalProperties": {"type": "integer"}}}},
            "#T", found)
    assert found == ["#T.a", "#T.b", "#T.c", "#T.d", "#T.d[*]", "#T.e[]"]


# --- The refusals the API gives have the documented body -----------------------------------------

@pytest.fixture
def validate(schema):
    def check(response, path: str, method: str = "get"):
        """The response's status is documented on the operation and its body fits the error schema."""
        operation = schema["paths"][path][method]
        assert str(response.status_code) in operation["responses"], (response.status_code, method, path)
        documented = operation["responses"][str(response.status_code)]["content"]["application/json"]["schema"]
        jsonschema.validate(response.json(), {**documented, "components": schema["components"]})
        assert isinstance(response.json()["error"], str) and response.json()["error"]
        return response.json()
    return check


def test_400_for_a_filter_a_field_a_body_and_a_list_of_rows(validate, curator_api):
    body = validate(curator_api.get("/api/jobs/", {"status": "nope"}), "/api/jobs/")
    assert body["status"]
    body = validate(curator_api.post("/api/versions/", {"benchmark": "cvqa"}, format="json"),
                    "/api/versions/", "post")
    assert body["error"] == "label: This field is required."
    body = validate(curator_api.post("/api/versions/", data="{not json", content_type="application/json"),
                    "/api/versions/", "post")
    assert "JSON" in body["error"]
    create_study("pets", form=FORM, items=1)
    response = curator_api.post("/api/studies/pets/items/", [{"external_id": "a", "payload": {}}, {"payload": {}}],
                                format="json")
    body = validate(response, "/api/studies/{slug}/items/", "post")
    assert body["error"] == "1: external_id: This field is required."  # the second row
    assert body["1"] == {"external_id": ["This field is required."]}


def test_a_refusal_given_as_a_list_gets_the_error_body_too():
    response = exception_handler(ValidationError(["Too few rows.", "Too many columns."]), {})
    assert response.status_code == 400
    assert response.data == {"error": "Too few rows.", "errors": ["Too few rows.", "Too many columns."]}


def test_403_for_a_role_and_for_anonymous_callers(validate, annotator_api):
    body = validate(annotator_api.get("/api/runs/"), "/api/runs/")
    assert body["error"] == "Your role does not allow this."
    validate(logged_in_api(None).get("/api/runs/"), "/api/runs/")


def test_404_for_a_missing_object_and_a_page_past_the_end(validate, curator_api):
    validate(curator_api.get("/api/jobs/987654/"), "/api/jobs/{id}/")
    validate(curator_api.get("/api/jobs/", {"page": 9}), "/api/jobs/")
    validate(curator_api.post("/api/studies/no-such-study/claim/"), "/api/studies/{slug}/claim/", "post")


def test_409_for_a_state_that_does_not_allow_it(validate, curator, curator_api):
    job = jobs.create("probe_video", user=curator)
    Job.objects.filter(pk=job.pk).update(status=Job.Status.SUCCEEDED)
    body = validate(curator_api.post(f"/api/jobs/{job.pk}/cancel/"), "/api/jobs/{id}/cancel/", "post")
    assert "already finished" in body["error"]
    create_study("shut", form=FORM, items=1, state="closed")
    validate(curator_api.post("/api/studies/shut/open/"), "/api/studies/{slug}/open/", "post")


def test_413_for_a_body_too_large(validate, settings, curator_api):
    settings.JSON_BODY_MAX_BYTES = 64
    response = curator_api.post("/api/versions/", {"benchmark": "cvqa", "label": "x" * 100}, format="json")
    body = validate(response, "/api/versions/", "post")
    assert "larger than the 64 bytes" in body["error"]


def test_415_for_a_content_type_or_file_type_not_accepted(validate, curator_api):
    response = curator_api.post("/api/versions/", data="label=x", content_type="text/plain")
    validate(response, "/api/versions/", "post")
    upload = SimpleUploadedFile("notes.txt", b"plain text", content_type="text/plain")
    validate(curator_api.post("/api/videos/", {"file": upload}, format="multipart"), "/api/videos/", "post")


def test_409_with_the_existing_id_for_a_duplicate_upload(validate, curator_api, astronaut):
    first = curator_api.post("/api/images/", {"file": SimpleUploadedFile("a.png", astronaut.read_bytes())},
                             format="multipart")
    assert first.status_code == 201, first.content
    again = curator_api.post("/api/images/", {"file": SimpleUploadedFile("b.png", astronaut.read_bytes())},
                             format="multipart")
    body = validate(again, "/api/images/", "post")
    assert body["existing_id"] == first.json()["id"]


def test_429_for_too_many_attempts(validate, settings, curator):
    settings.LOGIN_FAILURES_PER_USERNAME = 1
    anonymous = logged_in_api(None)
    wrong = anonymous.post("/api/auth/token/", {"username": "cur", "password": "nope"}, format="json")
    validate(wrong, "/api/auth/token/", "post")
    throttled = anonymous.post("/api/auth/token/", {"username": "cur", "password": PASSWORD}, format="json")
    body = validate(throttled, "/api/auth/token/", "post")
    assert throttled["Retry-After"] and body["detail"] == body["error"]


def test_429_for_a_qualification_test_taken_again_too_soon(validate):
    test = QualificationTest.objects.create(
        name="basics", qualification=Qualification.objects.create(name="basics"),
        questions=[{"id": "q1", "prompt": "2 + 2?", "choices": ["3", "4"], "answer": "4"}], pass_threshold=1.0,
        retry_delay_seconds=3600)
    worker = logged_in_api(make_user("wanda", ANNOTATOR))
    url = reverse("api-qualification-test-attempt", args=[test.pk])
    assert worker.post(url, {"answers": {"q1": "3"}}, format="json").status_code == 201
    validate(worker.post(url, {"answers": {"q1": "4"}}, format="json"), "/api/qualification-tests/{id}/attempt/",
             "post")


# --- What the schema promises of a response's fields ----------------------------------------------------

def api_serializers():
    """Every ModelSerializer an API operation answers with (or reads), by class."""
    generator = SchemaGenerator()
    generator.get_schema(request=None, public=True)
    found = {}
    for _path, _regex, method, callback in generator.endpoints:
        view = generator.create_view(callback, method)
        if not hasattr(view, "get_serializer_class"):
            continue
        try:
            serializer_class = view.get_serializer_class()
        except AssertionError:  # a view that reads its bodies itself
            continue
        if issubclass(serializer_class, serializers.ModelSerializer):
            found[serializer_class] = view
    return found


def test_a_field_the_model_lets_be_null_is_nullable_in_the_schema():
    """A model field (or one on the way to it, `source="a.b"`) that can be null makes the serializer field
    nullable: a response with null there must not break the schema that the field's type promises."""
    checked, wrong = 0, []
    for serializer_class in api_serializers():
        model = serializer_class.Meta.model
        for name, field in serializer_class().fields.items():
            if field.source == "*" or isinstance(field, serializers.SerializerMethodField) or field.write_only:
                continue
            current, nullable = model, False
            for part in field.source.split("."):
                model_field = next((f for f in current._meta.get_fields() if f.name == part), None) if current else None
                if model_field is None or model_field.one_to_many or model_field.many_to_many:
                    break
                nullable = nullable or getattr(model_field, "null", False)
                current = model_field.related_model
            else:
                checked += 1
                if nullable and not field.allow_null:
                    wrong.append(f"{serializer_class.__name__}.{name}")
    assert checked > 50
    assert not wrong, f"nullable in the model, not in the schema: {', '.join(wrong)}"
