"""The guards every request passes before a view or the database sees it: JSON bodies (size, nesting,
NUL characters and lone surrogates, `config.json_bodies`) and NUL characters in addresses, query
strings and forms (`config.middleware`). Each refusal is a 400 or 413 with a message, never a 500,
and writes nothing."""

import io
import json

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from rest_framework.authtoken.models import Token
from rest_framework.parsers import JSONParser
from rest_framework.views import APIView

from annotation.crowd.models import Study
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, VideoSplit
from config import json_bodies
from config.json_bodies import GuardedJSONParser
from tests.conftest import PASSWORD, logged_in_api

pytestmark = pytest.mark.django_db


def nested(depth: int):
    value = "leaf"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def study_body(**extra) -> dict:
    return {"name": "Pets", "slug": "pets", "form_schema": {"fields": []}, **extra}


# raw JSON text, and the words of the refusal
REFUSED_BODIES = [
    (json.dumps(study_body(name="Pe\u0000ts")), "NUL character (\\u0000) in the text at name"),
    (json.dumps(study_body(instructions={"bad\u0000key": 1})), "NUL character (\\u0000) in a key at instructions"),
    ('{"name": "Pets \\ud800", "slug": "pets"}', "lone surrogate (\\ud800) in the text at name"),
    ('{"name": "Pets", "slug": "pets", "form_schema": {"fields": [{"label": "x\\udfff"}]}}',
     "lone surrogate (\\udfff) in the text at form_schema.fields[0].label"),
    (json.dumps(study_body(required_attributes=nested(65))), "nested more than 64 levels deep"),
    ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep"),
    ('{"name": "Pets",', "not valid JSON"),
    ('{"name": "Pets", "slug": "pets", "form_schema": {"fields": [], "max": NaN}}', "NaN is not a JSON number"),
]


@pytest.mark.parametrize(("body", "words"), REFUSED_BODIES)
def test_a_refused_json_body_is_400_in_the_api_and_writes_nothing(curator_api, body, words):
    response = curator_api.generic("POST", "/api/studies/", body, content_type="application/json")
    assert response.status_code == 400, response.content
    assert words in response.json()["error"]
    assert not Study.objects.exists()


def test_paired_surrogates_and_escaped_backslashes_pass(curator_api):
    """An emoji written as a surrogate pair and the text "\\u0000" (an escaped backslash) are fine."""
    body = ('{"name": "Pets \\ud83d\\ude00", "slug": "pets", "instructions": "a \\\\u0000 b", '
            '"form_schema": {"fields": [{"name": "label", "type": "single_choice", "options": ["cat", "dog"]}]}}')
    response = curator_api.generic("POST", "/api/studies/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    study = Study.objects.get()
    assert study.name == "Pets \U0001F600" and study.instructions == "a \\u0000 b"


def test_nesting_is_allowed_up_to_the_limit(settings):
    assert json_bodies.loads(json.dumps(nested(64)).encode()) == nested(64)
    with pytest.raises(json_bodies.JsonBodyError, match="nested more than 64 levels deep"):
        json_bodies.loads(json.dumps(nested(65)).encode())
    settings.JSON_BODY_MAX_DEPTH = 3
    with pytest.raises(json_bodies.JsonBodyError, match="nested more than 3 levels deep"):
        json_bodies.loads(b'{"a": [{"b": []}]}')


def test_a_json_body_over_the_limit_is_413(curator_api, settings):
    settings.JSON_BODY_MAX_BYTES = 200
    body = json.dumps(study_body(instructions="x" * 300))
    response = curator_api.generic("POST", "/api/studies/", body, content_type="application/json")
    assert response.status_code == 413
    assert response.json()["error"] == "The request body is larger than the 200 bytes a JSON body may have."
    assert not Study.objects.exists()
    # a stream longer than it said is cut off one byte past the limit and refused all the same
    stream = io.BytesIO(body.encode())
    with pytest.raises(json_bodies.JsonBodyError) as refused:
        json_bodies.read_limited(stream, declared=10)
    assert refused.value.status == 413 and stream.tell() == 201


@pytest.mark.parametrize("body", ["[null, null]", '"text"', "3"])
def test_a_json_body_that_is_not_an_object_is_400_where_fields_are_read(curator_api, body):
    """Views that read their fields themselves take the body through `json_bodies.body_fields`."""
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="nleye"), label="pool")
    item = BenchmarkItem.objects.create(version=version, external_id="t1", payload={
        "kind": "triplet", "premise": "A wet floor.", "hypothesis1": "He slips.", "hypothesis2": "He dances.",
        "label": 1})
    for url in ("/api/auth/token/", "/api/image-attempts/", f"/api/nleye/triplets/{item.pk}/checks/",
                f"/api/nleye/triplets/{item.pk}/explanation/"):
        response = curator_api.generic("POST", url, body, content_type="application/json")
        assert response.status_code == 400, (url, response.content)
        assert response.json()["error"].startswith("The request body must be a JSON object of fields"), url


def test_the_token_endpoint_parses_json_through_the_guard(annotator):
    body = json.dumps({"username": "ann\u0000", "password": PASSWORD})
    response = logged_in_api(None).generic("POST", "/api/auth/token/", body, content_type="application/json")
    assert response.status_code == 400 and "NUL character" in response.json()["error"]
    assert not Token.objects.exists()


def _api_views(resolver=None):
    for entry in (resolver or get_resolver()).url_patterns:
        if isinstance(entry, URLResolver):
            yield from _api_views(entry)
        elif isinstance(entry, URLPattern):
            view = getattr(entry.callback, "cls", None)
            if isinstance(view, type) and issubclass(view, APIView):
                yield entry.name, view


def test_every_api_view_parses_json_only_through_the_guard():
    views = list(_api_views())
    assert len(views) > 30
    for name, view in views:
        for parser in view.parser_classes:
            assert not issubclass(parser, JSONParser) or issubclass(parser, GuardedJSONParser), (name, parser)


# --- A plain Django view that reads JSON (the split timeline) ------------------------------------

@pytest.mark.parametrize(("body", "status", "words"), [
    ('{"decision": "filter_out", "reason": "a\\u0000b"}', 400, "NUL character"),
    ('{"decision": "filter_out\\udc00"}', 400, "lone surrogate"),
    (json.dumps({"decision": "filter_out", "reason": nested(80)}), 400, "nested more than 64 levels deep"),
    (json.dumps({"decision": "filter_out", "reason": "x" * 300}), 413, "larger than the 200 bytes"),
])
def test_the_split_pages_json_goes_through_the_same_guard(video, curator_client, settings, body, status, words):
    settings.JSON_BODY_MAX_BYTES = 200 if status == 413 else 10_000
    split = VideoSplit.objects.create(video=video, status=VideoSplit.Status.FLAGGED, event_start=1.0, event_end=2.0)
    response = curator_client.post(reverse("video-split-resolve", kwargs={"pk": split.pk}), body,
                                   content_type="application/json")
    assert response.status_code == status, response.content
    assert words in response.json()["error"]
    split.refresh_from_db()
    assert split.status == VideoSplit.Status.FLAGGED


# --- NUL characters in addresses, query strings and forms ------------------------------------------

@pytest.mark.parametrize("address", [
    "/api/videos/?status=%00",
    "/api/jobs/?kind=a%00b",
    "/api/runs/?model=%00",
    "/api/studies/pets/queue/?state=x%00",
    "/api/videos/?st%00atus=ready",
])
def test_a_nul_in_an_api_query_is_400(curator_api, address):
    response = curator_api.get(address)
    assert response.status_code == 400
    assert response.json() == {"error": "A NUL character (%00) in the query string is not allowed."}


@pytest.mark.parametrize("address", ["/library/?vpage=%00", "/jobs/?page=1%00", "/studies/pets/queue/?queue=%00"])
def test_a_nul_in_a_page_query_is_400(curator_client, address):
    response = curator_client.get(address)
    assert response.status_code == 400
    assert response.content.decode() == "A NUL character (%00) in the query string is not allowed."


@pytest.mark.parametrize("encoded", [True, False])
def test_a_nul_in_a_page_form_field_is_400(curator_client, encoded):
    if encoded:
        response = curator_client.post(reverse("blackswan-variants"), "study=pets%00&x=1",
                                       content_type="application/x-www-form-urlencoded")
    else:  # multipart, the test client's default
        response = curator_client.post(reverse("blackswan-variants"), {"study": "pets\x00"})
    assert response.status_code == 400
    assert response.content.decode() == "A NUL character (%00) in the form is not allowed."


def test_a_nul_in_an_api_form_is_400(annotator):
    response = logged_in_api(None).post("/api/auth/token/", "username=ann%00&password=x",
                                        content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400
    assert response.json() == {"error": "A NUL character (%00) in the form is not allowed."}


def test_a_nul_in_the_address_is_400(curator_client):
    assert curator_client.get("/results/runs/1/metrics/a%00b/").status_code == 400


def test_a_nul_in_an_api_token_is_refused_like_a_wrong_token(annotator):
    client = logged_in_api(None)
    client.credentials(HTTP_AUTHORIZATION="Token abc\x00def")
    response = client.get("/api/auth/me/")
    assert response.status_code in (401, 403) and response.json()["error"] == "Invalid token."


@pytest.mark.postgres
def test_nul_characters_never_reach_postgresql(curator_api, curator_client):
    """On PostgreSQL a NUL in a filter would make the driver raise (a 500): the guards answer first."""
    from django.db import connection

    assert connection.vendor == "postgresql"
    assert curator_api.get("/api/videos/?status=%00").status_code == 400
    body = json.dumps(study_body(name="Pe\u0000ts"))
    assert curator_api.generic("POST", "/api/studies/", body, content_type="application/json").status_code == 400
    assert curator_client.post(reverse("blackswan-variants"), {"study": "pets\x00"}).status_code == 400
    assert curator_client.get("/studies/pets%00/queue/").status_code in (400, 404)
