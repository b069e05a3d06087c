"""The API refuses query parameters an operation does not document, with a 400 that names them, and takes
every one it documents (`config.query_parameters`); every operation documents that 400."""

import pytest
from drf_spectacular.generators import SchemaGenerator

from tests.conftest import logged_in_api

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def schema(django_db_setup, django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


def test_a_misspelt_filter_is_refused_and_named(curator):
    response = logged_in_api(curator).get("/api/videos/?stauts=ready&status=ready")
    assert response.status_code == 400
    body = response.json()
    assert body["error"].startswith("Unknown query parameter 'stauts': it takes ")
    assert "status" in body["error"] and body["stauts"] == ["Unknown query parameter."]


def test_an_object_route_takes_no_list_filter(curator, video):
    api = logged_in_api(curator)
    response = api.get(f"/api/videos/{video.pk}/?status=ready&x=1")
    assert response.status_code == 400
    assert response.json()["error"] == "Unknown query parameters 'status', 'x': it takes none."
    assert api.get(f"/api/videos/{video.pk}.json?bogus=1").status_code == 400  # the format suffix route too
    assert api.get(f"/api/videos/{video.pk}/?format=json").status_code == 200


def test_writes_refuse_unknown_query_parameters_before_anything_is_written(curator):
    from annotation.crowd.models import Study

    response = logged_in_api(curator).post("/api/studies/?dry_run=1", {
        "name": "Pets", "slug": "pets", "form_schema": {"fields": [
            {"name": "label", "type": "single_choice", "options": ["cat", "dog"]}]}}, format="json")
    assert response.status_code == 400 and "'dry_run'" in response.json()["error"]
    assert not Study.objects.exists()


def test_documented_parameters_are_taken(curator):
    api = logged_in_api(curator)
    response = api.get("/api/videos/?status=ready&q=x&page=1&format=json&source=upload")
    assert response.status_code == 200, response.content


def test_every_documented_query_parameter_is_taken(schema, admin_user):
    """Each operation's documented parameters, given one by one, are never refused as unknown (a value may
    still be refused as not valid)."""
    api = logged_in_api(admin_user)
    checked = 0
    for path, item in schema["paths"].items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            url = path.replace("{id}", "987654").replace("{slug}", "no-such").replace("{step}", "forecaster")
            for parameter in operation.get("parameters", []):
                if parameter["in"] != "query":
                    continue
                response = api.generic(method.upper(), f"{url}?{parameter['name']}=1")
                checked += 1
                assert "Unknown query parameter" not in response.content.decode(), (method, url, parameter["name"])
    assert checked > 50


def test_every_operation_documents_the_400(schema):
    for path, item in schema["paths"].items():
        for method in METHODS:
            if method in item:
                assert "400" in item[method]["responses"], (method, path)
