"""The OpenAPI schema and its documentation pages, and API token authentication."""

import io

import pytest
import yaml
from django.core.management import call_command
from drf_spectacular.drainage import GENERATOR_STATS
from rest_framework.authtoken.models import Token

from tests.conftest import PASSWORD, logged_in_api, logged_in_client, make_user

pytestmark = pytest.mark.django_db


def test_schema_lists_the_endpoints(researcher_api):
    response = researcher_api.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "Vision-language benchmark platform API"
    paths = schema["paths"]
    for path in ("/api/videos/", "/api/images/", "/api/jobs/", "/api/jobs/{id}/", "/api/jobs/{id}/cancel/",
                 "/api/versions/{id}/freeze/", "/api/auth/token/", "/api/auth/me/"):
        assert path in paths, path
    upload = paths["/api/videos/"]["post"]["requestBody"]["content"]
    assert "multipart/form-data" in upload
    job_id = next(p for p in paths["/api/jobs/{id}/"]["get"]["parameters"] if p["name"] == "id")
    assert job_id["schema"]["type"] == "integer"


def test_schema_as_yaml_for_every_role(role_users):
    for user in role_users.values():
        response = logged_in_client(user).get("/api/schema/")
        assert response.status_code == 200
        assert "/api/videos/" in yaml.safe_load(response.content)["paths"]


def test_schema_and_docs_need_a_login():
    anonymous = logged_in_api(None)
    assert anonymous.get("/api/schema/").status_code in (401, 403)
    assert anonymous.get("/api/docs/").status_code in (401, 403)


def test_docs_pages_render(curator_client):
    docs = curator_client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"swagger-ui" in docs.content
    # the start-up script (which names the schema) is a file of its own, so the page carries no inline script
    script = curator_client.get("/api/docs/", {"script": ""})
    assert script.status_code == 200 and script["Content-Type"].startswith("application/javascript")
    assert b"/api/schema/" in script.content
    redoc = curator_client.get("/api/redoc/")
    assert redoc.status_code == 200
    assert b"redoc" in redoc.content.lower()


def test_spectacular_validates_without_warnings(tmp_path):
    """`manage.py spectacular --validate --fail-on-warn` passes: no schema warning is left."""
    GENERATOR_STATS.reset()
    target = tmp_path / "schema.yml"
    err = io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target), stderr=err)
    schema = yaml.safe_load(target.read_text())
    assert "/api/videos/" in schema["paths"] and "/api/jobs/" in schema["paths"]
    assert "Warning" not in err.getvalue(), err.getvalue()
    # Choice sets shared between models have stable names (settings.SPECTACULAR_SETTINGS).
    assert {"JobStatusEnum", "MediaStatusEnum", "BenchmarkSlugEnum"} <= set(schema["components"]["schemas"])


# --- Token authentication -------------------------------------------------------------------

def test_token_login_and_use(curator):
    anonymous = logged_in_api(None)
    response = anonymous.post("/api/auth/token/", {"username": "cur", "password": PASSWORD}, format="json")
    assert response.status_code == 200
    key = response.json()["token"]
    assert Token.objects.get(user=curator).key == key
    # Asking again returns the same token.
    again = anonymous.post("/api/auth/token/", {"username": "cur", "password": PASSWORD}, format="json")
    assert again.json()["token"] == key

    client = logged_in_api(None)
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    me = client.get("/api/auth/me/")
    assert me.status_code == 200
    assert me.json() == {"username": "cur", "roles": ["curator"]}
    assert client.get("/api/videos/").status_code == 200


def test_token_with_form_data(annotator):
    response = logged_in_api(None).post("/api/auth/token/", {"username": "ann", "password": PASSWORD})
    assert response.status_code == 200 and len(response.json()["token"]) == 40


def test_wrong_password_gets_no_token(curator):
    response = logged_in_api(None).post("/api/auth/token/", {"username": "cur", "password": "nope"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"] == "Unable to log in with provided credentials."
    assert not Token.objects.filter(user=curator).exists()


def test_bad_or_missing_token_is_refused(curator):
    client = logged_in_api(None)
    assert client.get("/api/auth/me/").status_code in (401, 403)
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-key")
    response = client.get("/api/auth/me/")
    assert response.status_code in (401, 403)
    assert response.json()["error"] == "Invalid token."


def test_admin_roles_and_user_without_role(admin_user):
    me = logged_in_api(admin_user).get("/api/auth/me/").json()
    assert me["roles"] == ["admin", "annotator", "curator", "researcher"]
    nobody = make_user("nobody")
    response = logged_in_api(nobody).get("/api/auth/me/")
    assert response.status_code == 403
    assert response.json()["error"] == "Your role does not allow this."
    inactive = make_user("gone", "curator")
    inactive.is_active = False
    inactive.save()
    token = Token.objects.create(user=inactive)
    client = logged_in_api(None)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    assert client.get("/api/auth/me/").status_code in (401, 403)
