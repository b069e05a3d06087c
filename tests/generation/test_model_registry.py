"""The model registry: models are configured by admins, never typed. Curators and researchers pick a
registered model on pages, the API and the commands; options outside the backend's allow-list are refused
with a 400 naming the option; endpoint, key and trust_remote_code options are an admin's; a registered
endpoint is called with its registered key; stored errors hold a status and a reason, never the server's
body; a cancelled run stops calling its model within seconds."""

import json
import threading
import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from evaluation import runs
from evaluation.models import EvaluationRun, Prediction
from generation import model_registry
from generation.models import ProposalSet, RegisteredModel
from tests.frontend.test_runs_page import cvrr_version, form_data
from tests.openai_test_server import Reply, openai_test_server

RUNS_API = reverse("api-run-list")
SECRET = "sk-registry-test-0123"


@pytest.fixture
def version(db, video):
    return cvrr_version(video)


@pytest.fixture
def server():
    with openai_test_server() as running:
        yield running


@pytest.fixture
def api_model(register_model, server, monkeypatch):
    """An OpenAI-compatible model on the local test server, with its key in OPENAI_API_KEY."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    return register_model("chat-model", backend="openai", name="local-chat", endpoint=server.base_url,
                          key_variable="OPENAI_API_KEY",
                          options={"max_retries": 0, "backoff_base": 0.001, "timeout": 5.0})


def api_options(version, model: str, **overrides) -> dict:
    return {"version": version.pk, "model_id": model, "frames": "uniform:2@64", "max_new_tokens": 4, "batch_size": 1,
            **overrides}


# --- Entries -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("fields", "message"), [
    ({"endpoint": "ftp://models.example/v1"}, "http:// or https://"),
    ({"endpoint": "http://user:pw@models.example/v1"}, "credentials"),
    ({"key_variable": "DATABASE_URL"}, "not one of MODEL_KEY_VARIABLES"),
    ({"options": {"base_url": "http://elsewhere/v1"}}, "endpoint field"),
    ({"options": {"api_key_env": "DATABASE_URL"}}, "key_variable field"),
    ({"options": {"proxy_url": "http://x"}}, "Unknown option 'proxy_url'"),
    ({"allowed_options": ["extra_body"]}, "'extra_body' is not an option people may pass"),
    ({"uses": ["clip"]}, "clip needs a clip model"),
    ({"uses": []}, "one or more"),
])
def test_entries_are_checked_when_saved(db, fields, message):
    with pytest.raises(model_registry.ModelRefused, match=message):
        model_registry.register("remote", backend="openai", model_id="gpt-4o", **{"uses": ["judge"], **fields})
    assert not RegisteredModel.objects.exists()


def test_only_transformers_models_may_run_their_own_code_and_only_api_models_have_endpoints(db):
    with pytest.raises(model_registry.ModelRefused, match="trust_remote_code"):
        model_registry.register("api", backend="openai", model_id="gpt-4o", uses=["judge"], trust_remote_code=True)
    with pytest.raises(model_registry.ModelRefused, match="endpoint"):
        model_registry.register("local", backend="causal_lm", model_id="/models/lm", uses=["judge"],
                                endpoint="http://x/v1")
    entry = model_registry.register("local", backend="causal_lm", model_id="/models/lm", uses=["judge"],
                                    trust_remote_code=True)
    assert entry.load_options() == {"trust_remote_code": True}


def test_an_unregistered_or_disabled_model_is_refused_with_what_is_registered(register_model):
    register_model("/models/judge", backend="causal_lm", name="judge-lm", uses=["judge"])
    register_model("/models/other", backend="causal_lm", name="off-lm", uses=["judge"], enabled=False)
    with pytest.raises(model_registry.ModelRefused, match=r"Unknown model '/models/x'.*judge: judge-lm"):
        model_registry.choose("/models/x", use="judge")
    with pytest.raises(model_registry.ModelRefused, match="disabled"):
        model_registry.choose("off-lm", use="judge")
    with pytest.raises(model_registry.ModelRefused, match="not registered for proposals"):
        model_registry.choose("judge-lm", use="proposals")
    by_name = model_registry.choose("judge-lm", use="judge")
    by_path = model_registry.choose("/models/judge", use="judge")
    assert by_name.entry == by_path.entry and by_path.model_id == "/models/judge"


# --- The API ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("options", "named"), [
    ({"base_url": "http://127.0.0.1:5432/v1"}, "base_url"),
    ({"api_key_env": "DATABASE_URL"}, "api_key_env"),
    ({"extra_body": {"model": "another"}}, "extra_body"),
    ({"proxies": "http://x"}, "proxies"),
])
def test_a_researcher_passing_endpoint_key_or_unknown_options_gets_400_naming_it(
        version, api_model, researcher_api, options, named):
    response = researcher_api.post(RUNS_API, api_options(version, "local-chat", backend_options=options),
                                   format="json")
    assert response.status_code == 400, response.content
    assert f"'{named}'" in response.json()["error"]
    assert not EvaluationRun.objects.exists()


def test_trust_remote_code_from_a_researcher_is_refused(version, register_model, researcher_api):
    register_model("/models/vlm", backend="transformers", name="vlm", uses=["evaluation"])
    response = researcher_api.post(RUNS_API, api_options(version, "vlm", backend_options={"trust_remote_code": True}),
                                   format="json")
    assert response.status_code == 400
    assert "'trust_remote_code'" in response.json()["error"] and "admin" in response.json()["error"]
    assert not EvaluationRun.objects.exists()


def test_an_unregistered_model_is_refused_on_the_api(version, api_model, researcher_api):
    response = researcher_api.post(RUNS_API, api_options(version, "/srv/models/anything"), format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert "'/srv/models/anything'" in error and "local-chat" in error
    assert not EvaluationRun.objects.exists()


def test_an_admin_may_pass_an_endpoint_but_only_a_listed_key_variable(version, api_model, admin_api):
    refused = admin_api.post(RUNS_API, api_options(version, "local-chat", backend_options={
        "api_key_env": "DATABASE_URL"}), format="json")
    assert refused.status_code == 400 and "MODEL_KEY_VARIABLES" in refused.json()["error"]
    allowed = admin_api.post(RUNS_API, api_options(version, "local-chat", backend_options={
        "base_url": "http://127.0.0.1:9/v1"}), format="json")
    assert allowed.status_code == 201, allowed.content
    assert EvaluationRun.objects.get().backend_options["base_url"] == "http://127.0.0.1:9/v1"


def test_a_registered_endpoint_is_called_with_its_registered_key(
        version, api_model, server, researcher_api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_api.post(RUNS_API, api_options(version, "local-chat",
                                                             limit=1, variants=["qa"]), format="json")
    assert response.status_code == 201, response.content
    run = EvaluationRun.objects.get()
    run.refresh_from_db()
    assert run.status == EvaluationRun.Status.SUCCEEDED, run.message
    assert (run.model_id, run.backend) == ("chat-model", "openai")  # provenance from the entry
    assert server.calls == 1
    assert server.requests[0].headers["Authorization"] == f"Bearer {SECRET}"
    assert server.requests[0].body["model"] == "chat-model"
    assert SECRET not in json.dumps(response.json())


def test_a_stored_error_holds_the_status_and_a_reason_not_the_servers_body(
        version, api_model, server, researcher_api, django_capture_on_commit_callbacks):
    server.script(Reply(status=500, body={"error": {"message": "db at postgres://app:hunter2@10.0.0.9 down"}}))
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_api.post(RUNS_API, api_options(version, "local-chat",
                                                             limit=1, variants=["qa"]), format="json")
    assert response.status_code == 201
    prediction = Prediction.objects.get()
    assert prediction.error == f"openai [{prediction.request_id}]: HTTP 500 Internal Server Error (gave up after 1 " \
                               "attempt)"
    shown = researcher_api.get(reverse("api-run-predictions", args=[prediction.run_id])).json()["results"][0]
    assert "hunter2" not in json.dumps(shown) and "10.0.0.9" not in json.dumps(shown)


def test_the_models_api_lists_what_people_may_pick(api_model, register_model, researcher_api, admin_api,
                                                    annotator_api):
    register_model("/models/off", backend="causal_lm", name="off", uses=["judge"], enabled=False)
    listed = researcher_api.get(reverse("api-model-list"), {"use": "evaluation"}).json()
    assert [row["name"] for row in listed["results"]] == ["local-chat"]
    assert listed["results"][0]["endpoint"] == api_model.endpoint
    assert [row["name"] for row in admin_api.get(reverse("api-model-list")).json()["results"]] == ["local-chat", "off"]
    assert annotator_api.get(reverse("api-model-list")).status_code == 403


# --- Pages ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "named"), [
    ("base_url=http://169.254.169.254/v1", "base_url"), ("api_key_env=DATABASE_URL", "api_key_env"),
    ("trust_remote_code=true", "trust_remote_code"), ("colour=blue", "colour")])
def test_a_researcher_passing_admin_or_unknown_options_on_the_runs_page_gets_400(
        version, register_model, researcher_client, text, named):
    register_model("/models/vlm", backend="transformers", name="vlm", uses=["evaluation"])
    response = researcher_client.post(reverse("runs"), form_data(version, "vlm", backend_options=text))
    assert response.status_code == 400
    assert f"&#x27;{named}&#x27;" in response.content.decode()
    assert not EvaluationRun.objects.exists()


def test_the_runs_page_offers_registered_models_only(version, register_model, researcher_client):
    register_model("/models/vlm", backend="transformers", name="vlm", uses=["evaluation"])
    register_model("/models/nli", backend="nli", name="nli-model", uses=["nli"])
    page = researcher_client.get(reverse("runs"))
    assert [entry.name for entry in page.context["models"]] == ["vlm"]
    assert '<select name="model_id" id="run-model"' in page.content.decode()
    refused = researcher_client.post(reverse("runs"), form_data(version, "/models/unregistered"))
    assert refused.status_code == 400 and "Unknown model &#x27;/models/unregistered&#x27;" in refused.content.decode()


@pytest.mark.parametrize(("text", "named"), [
    ("base_url=http://127.0.0.1:6379/v1", "base_url"), ("api_key_env=DJANGO_SECRET_KEY", "api_key_env"),
    ("trust_remote_code=true", "trust_remote_code")])
def test_a_curator_passing_admin_options_on_the_proposals_page_gets_400(
        db, image, register_model, curator_client, text, named):
    register_model("/models/lm", backend="causal_lm", name="lm", uses=["proposals"])
    response = curator_client.post(reverse("proposals-start"), {
        "task": "caption", "image": [image.pk], "model_id": "lm", "backend_options": text})
    assert response.status_code == 400
    assert f"'{named}'" in response.json()["error"]
    assert not ProposalSet.objects.exists()


def test_an_unregistered_model_is_refused_on_the_proposals_page(db, image, curator_client):
    response = curator_client.post(reverse("proposals-start"), {"task": "caption", "image": [image.pk],
                                                                "model_id": "/srv/anything", "backend": "causal_lm"})
    assert response.status_code == 400 and "Unknown model '/srv/anything'" in response.json()["error"]
    assert not ProposalSet.objects.exists()


def test_the_models_page_lists_entries_for_staff(api_model, researcher_client, admin_client_role, annotator_client):
    page = researcher_client.get(reverse("models"))
    assert page.status_code == 200 and b"local-chat" in page.content and b"$OPENAI_API_KEY" in page.content
    assert b"/admin/generation/registeredmodel/" not in page.content
    assert b"/admin/generation/registeredmodel/" in admin_client_role.get(reverse("models")).content
    assert annotator_client.get(reverse("models")).status_code == 403


def test_admins_manage_entries_in_the_django_admin_and_nobody_else_reaches_them(admin_user, curator, researcher):
    from django.test import Client

    client = Client()
    client.force_login(admin_user)
    add = "/admin/generation/registeredmodel/add/"
    form = {"name": "remote-judge", "description": "", "backend": "openai", "model_id": "gpt-4o", "revision": "",
            "uses": ["judge"], "endpoint": "https://api.example.org/v1", "key_variable": "OPENAI_API_KEY",
            "options": "{}", "allowed_options": "[]", "enabled": "on"}
    refused = client.post(add, {**form, "endpoint": "file:///etc/passwd"})
    assert refused.status_code == 200 and "http:// or https://" in refused.content.decode()
    assert not RegisteredModel.objects.exists()
    page = client.get(add).content.decode()
    assert '<option value="OPENAI_API_KEY">' in page and "DATABASE_URL" not in page  # the key variables listed
    assert client.post(add, form).status_code == 302
    entry = RegisteredModel.objects.get()
    assert (entry.uses, entry.endpoint, entry.key_variable) == (["judge"], "https://api.example.org/v1",
                                                                "OPENAI_API_KEY")
    for user in (curator, researcher):
        other = Client()
        other.force_login(user)
        assert other.get("/admin/generation/registeredmodel/").status_code in (302, 403)
        assert other.post(add, {**form, "name": "mine"}).status_code in (302, 403)
    assert RegisteredModel.objects.count() == 1


# --- Commands -----------------------------------------------------------------------------------------

def test_the_models_command_adds_lists_and_removes_entries(db, capsys):
    call_command("models", "add", "remote-judge", "--backend", "openai", "--model-id", "gpt-4o", "--use", "judge",
                 "--endpoint", "https://api.example.org/v1", "--key-variable", "OPENAI_API_KEY",
                 "--option", "timeout=30")
    entry = RegisteredModel.objects.get(name="remote-judge")
    assert entry.options == {"timeout": 30} and entry.uses == ["judge"]
    assert capsys.readouterr().out == "Registered remote-judge (openai: gpt-4o).\n"
    call_command("models", "list", "--json")
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(row["name"], row["endpoint"]) for row in listed] == [("remote-judge", "https://api.example.org/v1")]
    with pytest.raises(CommandError, match="MODEL_KEY_VARIABLES"):
        call_command("models", "add", "leaky", "--backend", "openai", "--model-id", "gpt-4o", "--use", "judge",
                     "--key-variable", "DATABASE_URL")
    call_command("models", "remove", "remote-judge")
    assert not RegisteredModel.objects.exists()


def test_evaluate_refuses_an_unregistered_model_and_lists_the_registered_ones(version, api_model):
    with pytest.raises(CommandError, match=r"Unknown model 'gpt-9'.*local-chat"):
        call_command("evaluate", "--benchmark", "cvrr", "--version", "web", "--model", "gpt-9")
    assert not EvaluationRun.objects.exists()


# --- Cancelling ---------------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_a_cancelled_run_stops_calling_its_model_within_seconds(video, register_model, server, settings):
    """The server answers 429 with Retry-After: 60 (and 503 with it too) to every call; the run is cancelled a
    second in. Without the cancellation reaching the retry loop the chunk would wait a minute per retry."""
    settings.EVAL_CANCEL_POLL_SECONDS = 0.2
    version = cvrr_version(video)
    register_model("chat-model", backend="openai", name="slow-chat", endpoint=server.base_url,
                   options={"max_retries": 5, "max_retry_after": 120})
    server.script(*[Reply(status=429 if i % 2 else 503, retry_after="60") for i in range(20)])
    run = runs.create_run(version, **model_registry.choose("slow-chat", use="evaluation").service_kwargs(),
                           variants=["qa"], limit=1, workers="local")
    threading.Timer(1.0, lambda: runs.cancel_run(run.pk, reason="Cancelled in the test")).start()
    started = time.monotonic()
    run = runs.start_run(run, workers="local")
    elapsed = time.monotonic() - started
    assert run.status == EvaluationRun.Status.CANCELLED
    assert elapsed < 6, f"the run went on for {elapsed:.1f} s after its cancel"
    assert server.calls == 1  # no retry after the cancel
    calls = server.calls
    time.sleep(0.5)
    assert server.calls == calls
    assert "cancelled while waiting to retry" in Prediction.objects.get(run=run).error
