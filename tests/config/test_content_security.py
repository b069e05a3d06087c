"""Every response carries the Content-Security-Policy, tight enough that inline script does not run: each page
kind (anonymous, worker, curator, researcher, admin, API, error pages) and the views that widen it (the API docs,
the pages Mechanical Turk frames) still allow scripts from this site only."""

import pytest
from django.core.exceptions import SuspiciousOperation
from django.test import Client
from django.urls import include, path, reverse

from config.roles import ANNOTATOR, CURATOR
from tests.conftest import create_study, logged_in_client, make_user


def _crash(request):
    raise RuntimeError("a bug")


def _suspicious(request):
    raise SuspiciousOperation("bad request")


# this module is the URL configuration of the error-page tests: the platform's URLs plus two that fail
urlpatterns = [path("test-crash/", _crash), path("test-suspicious/", _suspicious), path("", include("config.urls"))]

FORM = {"fields": [{"name": "answer", "type": "text", "label": "Your answer"}]}
STRICT = {"script-src": {"'self'"}, "object-src": {"'none'"}, "base-uri": {"'self'"},
          "frame-ancestors": {"'none'"}, "form-action": {"'self'"}, "style-src": {"'self'"},
          "img-src": {"'self'"}, "default-src": {"'self'"}}


def policy(response) -> dict[str, set[str]]:
    header = response.get("Content-Security-Policy")
    assert header, f"{response.status_code} response without a Content-Security-Policy"
    directives = {}
    for part in header.split(";"):
        name, *sources = part.split()
        directives[name] = set(sources)
    return directives


def assert_strict(response):
    directives = policy(response)
    for name, sources in STRICT.items():
        assert directives.get(name) == sources, (name, directives.get(name))


def assert_scripts_from_this_site_only(response):
    directives = policy(response)
    assert directives["script-src"] == {"'self'"} and directives["object-src"] == {"'none'"}
    assert directives["base-uri"] == {"'self'"}


@pytest.fixture
def study(db):
    return create_study("csp-study", form=FORM, instructions="Look **closely**.")


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/login/", "/api/auth/token/"])
def test_anonymous_pages(url):
    assert_strict(Client().get(url))


@pytest.mark.django_db
def test_worker_pages(study):
    client = logged_in_client(make_user("csp-worker", ANNOTATOR))
    for url in (reverse("home"), reverse("my-tasks"), reverse("crowd-work", kwargs={"slug": study.slug}),
                reverse("crowd-work-done", kwargs={"slug": study.slug})):
        response = client.get(url)
        assert response.status_code == 200, url
        assert_strict(response)


@pytest.mark.django_db
def test_curator_pages(study):
    client = logged_in_client(make_user("csp-curator", CURATOR))
    for url in (reverse("crowd-studies"), reverse("crowd-study-detail", kwargs={"slug": study.slug}),
                reverse("crowd-study-settings", kwargs={"slug": study.slug}), reverse("crowd-study-new")):
        response = client.get(url)
        assert response.status_code == 200, url
        assert_strict(response)
    preview = client.post(reverse("crowd-markdown-preview"), {"text": "**x**"})
    assert preview.status_code == 200
    assert_strict(preview)


def test_researcher_pages(researcher_client):
    for url in (reverse("results"), reverse("runs")):
        response = researcher_client.get(url)
        assert response.status_code == 200, url
        assert_strict(response)


def test_admin_pages(admin_client_role):
    for url in ("/admin/", "/admin/auth/user/", "/admin/auth/user/add/"):
        response = admin_client_role.get(url)
        assert response.status_code == 200, url
        assert_strict(response)


def test_api_responses(researcher_api):
    response = researcher_api.get("/api/runs/")
    assert response.status_code == 200
    assert_strict(response)


def test_api_docs_allow_their_bundles_inline_styles_but_scripts_from_this_site_only(researcher_client):
    swagger = researcher_client.get(reverse("api-docs"))
    assert swagger.status_code == 200 and "<script>" not in swagger.content.decode()
    assert_scripts_from_this_site_only(swagger)
    assert policy(swagger)["style-src"] == {"'self'", "'unsafe-inline'"}
    script = researcher_client.get(reverse("api-docs"), {"script": ""})
    assert script.status_code == 200 and "SwaggerUIBundle" in script.content.decode()
    redoc = researcher_client.get(reverse("api-redoc"))
    assert redoc.status_code == 200 and "fonts.googleapis.com" not in redoc.content.decode()
    assert_scripts_from_this_site_only(redoc)
    assert policy(redoc)["worker-src"] == {"'self'", "blob:"}


@pytest.mark.django_db
def test_refusal_and_not_found_pages():
    client = logged_in_client(make_user("csp-worker", ANNOTATOR))
    forbidden = client.get(reverse("results"))
    assert forbidden.status_code == 403
    assert_strict(forbidden)
    missing = client.get("/no-such-page/")
    assert missing.status_code == 404
    assert_strict(missing)
    nul = client.get(reverse("home"), {"q": "a\x00b"})
    assert nul.status_code == 400
    assert_strict(nul)


@pytest.mark.django_db
@pytest.mark.urls("tests.config.test_content_security")
def test_server_error_and_bad_request_pages():
    client = Client(raise_request_exception=False)
    crash = client.get("/test-crash/")
    assert crash.status_code == 500
    assert_strict(crash)
    suspicious = client.get("/test-suspicious/")
    assert suspicious.status_code == 400
    assert_strict(suspicious)


@pytest.mark.django_db
def test_pages_mechanical_turk_frames_keep_the_policy_and_name_mturk_only_where_needed():
    study = create_study("csp-mturk", form=FORM, recruitment_platform="mturk")
    client = Client()
    entry = client.get(reverse("crowd-entry-mturk", kwargs={"slug": study.slug}), {
        "workerId": "A1B2C3D4E5F6G7", "assignmentId": "3ASSIGN0001", "hitId": "3HIT0001",
        "turkSubmitTo": "https://workersandbox.mturk.com"})
    assert entry.status_code == 302
    work = client.get(entry["Location"])
    assert work.status_code == 200 and "X-Frame-Options" not in work
    for response in (entry, work):
        assert_scripts_from_this_site_only(response)
        directives = policy(response)
        mturk = {"'self'", "https://www.mturk.com", "https://workersandbox.mturk.com"}
        assert directives["frame-ancestors"] == mturk and directives["form-action"] == mturk
        assert directives["style-src"] == {"'self'"}
