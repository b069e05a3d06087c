"""The API's list filters (django-filter FilterSets): each narrows its list, a value that does not parse is
a 400 with the platform's error body naming the parameter, the schema lists every filter, and the
caller's permissions apply before any filter."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator

from annotation.crowd import assignment, submissions
from annotation.crowd.models import Claim, Study, Submission
from annotation.curation_models import ImageAttempt
from annotation.models import Benchmark, BenchmarkVersion, Image, MediaTag, Video
from config.roles import ANNOTATOR
from evaluation.models import EvaluationRun, Prediction
from generation import jobs
from generation.models import Job
from tests.conftest import create_study, logged_in_api, make_user
from tests.frontend.test_runs_page import api_model_run, cvrr_version

pytestmark = pytest.mark.django_db

FORM = {"fields": [{"name": "label", "type": "single_choice", "options": ["cat", "dog"]}]}

# every list and the filters its schema must list (the query parameters researchers' scripts already use first)
LIST_FILTERS = {
    ("/api/jobs/", "get"): {"status", "kind", "queue", "created_after", "created_before"},
    ("/api/videos/", "get"): {"status", "q", "source", "tag", "created_after", "created_before"},
    ("/api/images/", "get"): {"status", "q", "source", "tag", "created_after", "created_before"},
    ("/api/versions/", "get"): {"benchmark", "label", "frozen", "source", "created_after", "created_before"},
    ("/api/studies/", "get"): {"state", "step_kind", "language", "recruitment_platform", "created_after",
                               "created_before"},
    ("/api/submissions/", "get"): {"study", "queue", "state", "review_state", "worker", "item", "item_role",
                                   "check_passed", "submitted_after", "submitted_before"},
    ("/api/studies/{slug}/queue/", "get"): {"queue", "state", "review_state", "worker", "item", "item_role",
                                            "check_passed", "submitted_after", "submitted_before"},
    ("/api/runs/", "get"): {"status", "benchmark", "version", "model", "backend", "prompting", "created_by",
                            "created_after", "created_before"},
    ("/api/runs/{id}/predictions/", "get"): {"variant", "errors", "parse_status", "item", "request_id", "from_cache"},
    ("/api/claims/", "get"): {"study", "status", "claimed_after", "claimed_before"},
    ("/api/image-attempts/", "get"): {"item", "slot", "status", "mode", "created_after", "created_before"},
}


@pytest.fixture(scope="module")
def schema(django_db_setup, django_db_blocker) -> dict:
    with django_db_blocker.unblock():
        return SchemaGenerator().get_schema(request=None, public=True)


def query_parameters(operation: dict) -> dict:
    return {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "query"}


def ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def refused(response, parameter: str) -> dict:
    """A 400 with the error body: `error` names the parameter, and its messages are under its name."""
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["error"].startswith(f"{parameter}: "), body
    assert isinstance(body[parameter], list) and body[parameter], body
    return body


# --- The schema ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "method"), sorted(LIST_FILTERS))
def test_the_schema_lists_each_lists_filters(schema, path, method):
    listed = query_parameters(schema["paths"][path][method])
    assert LIST_FILTERS[(path, method)] <= set(listed), set(listed)
    assert "page" in listed
    assert all(parameter.get("description") for name, parameter in listed.items() if name != "page"), listed


def test_filter_parameters_are_typed(schema):
    jobs_ = query_parameters(schema["paths"]["/api/jobs/"]["get"])
    assert jobs_["status"]["schema"]["enum"] == sorted(Job.Status.values)
    assert "probe_video" in jobs_["kind"]["schema"]["enum"]
    assert jobs_["created_after"]["schema"] == {"type": "string", "format": "date-time"}
    versions = query_parameters(schema["paths"]["/api/versions/"]["get"])
    assert {"cvqa", "cvrr", "nleye"} <= set(versions["benchmark"]["schema"]["enum"])
    assert versions["frozen"]["schema"]["type"] == "boolean"
    runs = query_parameters(schema["paths"]["/api/runs/"]["get"])
    assert runs["version"]["schema"]["type"] == "integer"
    predictions = query_parameters(schema["paths"]["/api/runs/{id}/predictions/"]["get"])
    assert predictions["errors"]["schema"]["type"] == "boolean"


def test_object_routes_take_no_list_filters(schema):
    for path in ("/api/jobs/{id}/", "/api/runs/{id}/", "/api/submissions/{id}/history/", "/api/versions/{id}/items/"):
        listed = set(query_parameters(schema["paths"][path]["get"])) - {"page"}
        assert not listed, (path, listed)


def test_the_review_queue_documents_its_counts_and_the_submissions_list_does_not(schema):
    def page(path):
        ref = schema["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        return schema["components"]["schemas"][ref.rsplit("/", 1)[1]]["properties"]

    assert page("/api/studies/{slug}/queue/")["counts"]["additionalProperties"]["additionalProperties"] == {
        "type": "integer"}
    assert "counts" not in page("/api/submissions/")


# --- Jobs ----------------------------------------------------------------------------------------

def test_jobs_filter_and_refuse_bad_values(annotator, annotator_api, curator_api):
    other = make_user("ann2", ANNOTATOR)
    mine = jobs.create("probe_video", user=annotator)
    image_job = jobs.create("probe_image", user=annotator)
    theirs = jobs.create("probe_video", user=other)
    Job.objects.filter(pk=image_job.pk).update(status=Job.Status.SUCCEEDED)
    Job.objects.filter(pk=theirs.pk).update(created_at=timezone.now() - timedelta(days=3))

    assert ids(curator_api.get("/api/jobs/", {"kind": "probe_video"})) == [mine.pk, theirs.pk]
    assert ids(curator_api.get("/api/jobs/", {"status": "succeeded"})) == [image_job.pk]
    assert ids(curator_api.get("/api/jobs/", {"status": "queued", "kind": "probe_video"})) == [mine.pk, theirs.pk]
    day_ago = (timezone.now() - timedelta(days=1)).isoformat()
    assert set(ids(curator_api.get("/api/jobs/", {"created_after": day_ago}))) == {mine.pk, image_job.pk}
    assert ids(curator_api.get("/api/jobs/", {"created_before": day_ago})) == [theirs.pk]
    # an annotator's filters narrow their own jobs only
    assert ids(annotator_api.get("/api/jobs/", {"kind": "probe_video"})) == [mine.pk]
    assert ids(annotator_api.get("/api/jobs/", {"created_before": day_ago})) == []

    refused(curator_api.get("/api/jobs/", {"status": "done"}), "status")
    refused(curator_api.get("/api/jobs/", {"kind": "no_such_kind"}), "kind")
    refused(curator_api.get("/api/jobs/", {"created_after": "last tuesday"}), "created_after")
    # a job's own route takes none of the list's filters: it names the one it was given (config.query_parameters)
    unknown = curator_api.get(f"/api/jobs/{mine.pk}/", {"status": "succeeded"})
    assert unknown.status_code == 400 and unknown.json()["status"] == ["Unknown query parameter."]
    assert curator_api.get(f"/api/jobs/{mine.pk}/").status_code == 200


# --- Media ---------------------------------------------------------------------------------------

def _asset(model, name: str, status: str, **fields):
    return model.objects.create(title=name, original_name=f"{name}.bin", size_bytes=1, checksum=name.ljust(64, "0"),
                                status=status, file=f"{model.__name__.lower()}s/{name}.bin", **fields)


@pytest.mark.parametrize(("model", "path"), [(Video, "/api/videos/"), (Image, "/api/images/")])
def test_media_filter_and_refuse_bad_values(curator_api, model, path):
    ready = _asset(model, "beach", "ready")
    probing = _asset(model, "street", "probing", source="import")
    ready.tags.add(MediaTag.objects.create(name="outdoor"))

    assert ids(curator_api.get(path, {"status": "ready"})) == [ready.pk]
    assert ids(curator_api.get(path, {"status": "probing"})) == [probing.pk]
    assert ids(curator_api.get(path, {"q": "STRE"})) == [probing.pk]
    assert ids(curator_api.get(path, {"tag": "outdoor"})) == [ready.pk]
    assert ids(curator_api.get(path, {"source": "import"})) == [probing.pk]

    refused(curator_api.get(path, {"status": "gone"}), "status")
    refused(curator_api.get(path, {"tag": "no-such-tag"}), "tag")
    refused(curator_api.get(path, {"created_before": "2024-13-45"}), "created_before")


# --- Versions ------------------------------------------------------------------------------------

def test_versions_filter_and_refuse_bad_values(curator_api):
    cvqa = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="one")
    cvrr = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvrr"), label="two", frozen=True,
                                           frozen_at=timezone.now(), checksum="0" * 64)

    assert ids(curator_api.get("/api/versions/", {"benchmark": "cvqa"})) == [cvqa.pk]
    assert ids(curator_api.get("/api/versions/", {"frozen": "true"})) == [cvrr.pk]
    assert ids(curator_api.get("/api/versions/", {"frozen": "0"})) == [cvqa.pk]
    assert ids(curator_api.get("/api/versions/", {"label": "two"})) == [cvrr.pk]
    assert ids(curator_api.get("/api/versions/", {"benchmark": "maia"})) == []

    refused(curator_api.get("/api/versions/", {"benchmark": "imagenet"}), "benchmark")
    refused(curator_api.get("/api/versions/", {"frozen": "maybe"}), "frozen")


# --- Studies, submissions, the review queue, claims -----------------------------------------------

@pytest.fixture
def handed_in(db):
    """Two studies; in `pets` one submission awaiting review and one approved, in `cars` one pending."""
    pets = create_study("pets", form=FORM, items=3)
    cars = create_study("cars", form=FORM, items=2, state="draft")
    Study.objects.filter(pk=cars.pk).update(state="open")
    cars.refresh_from_db()
    wanda, walt = make_user("wanda", ANNOTATOR), make_user("walt", ANNOTATOR)
    made = {}
    for name, study, worker in (("pending", pets, wanda), ("approved", pets, walt), ("cars", cars, wanda)):
        made[name], _, _ = submissions.submit(assignment.claim_next(study, worker), worker, {"label": "dog"})
    Claim.objects.filter(submission=made["approved"]).update(status=Claim.Status.APPROVED)
    return made


def test_studies_filter_and_refuse_bad_values(curator_api):
    open_ = create_study("open-one", form=FORM, items=1)
    draft = create_study("draft-one", form=FORM, items=1, state="draft")

    assert ids(curator_api.get("/api/studies/", {"state": "open"})) == [open_.pk]
    assert ids(curator_api.get("/api/studies/", {"state": "draft", "step_kind": "form"})) == [draft.pk]
    future = (timezone.now() + timedelta(days=1)).isoformat()
    assert ids(curator_api.get("/api/studies/", {"created_after": future})) == []

    refused(curator_api.get("/api/studies/", {"state": "archived"}), "state")
    refused(curator_api.get("/api/studies/", {"step_kind": "no_such_kind"}), "step_kind")


def test_submissions_filter_and_refuse_bad_values(handed_in, researcher_api):
    everything = {s.pk for s in handed_in.values()}
    assert set(ids(researcher_api.get("/api/submissions/"))) == everything
    assert set(ids(researcher_api.get("/api/submissions/", {"study": "pets"}))) == {
        handed_in["pending"].pk, handed_in["approved"].pk}
    assert ids(researcher_api.get("/api/submissions/", {"study": "pets", "state": "pending"})) == [
        handed_in["pending"].pk]
    assert set(ids(researcher_api.get("/api/submissions/", {"worker": "wanda"}))) == {
        handed_in["pending"].pk, handed_in["cars"].pk}
    assert ids(researcher_api.get("/api/submissions/", {"state": "approved"})) == [handed_in["approved"].pk]

    refused(researcher_api.get("/api/submissions/", {"study": "no-such-study"}), "study")
    refused(researcher_api.get("/api/submissions/", {"queue": "everything"}), "queue")
    refused(researcher_api.get("/api/submissions/", {"check_passed": "perhaps"}), "check_passed")


def test_workers_read_no_submissions_whatever_they_filter(handed_in):
    wanda = logged_in_api(Submission.objects.get(pk=handed_in["pending"].pk).claim.worker)
    for query in ({}, {"worker": "wanda"}, {"study": "pets"}):
        response = wanda.get("/api/submissions/", query)
        assert response.status_code == 403
        assert response.json()["error"] == "Your role does not allow this."


def test_the_review_queue_keeps_its_defaults(handed_in, curator_api):
    url = reverse("api-study-queue", args=["pets"])
    # no `state`: those awaiting a decision; an empty one: every state
    assert ids(curator_api.get(url)) == [handed_in["pending"].pk]
    assert [row["id"] for row in curator_api.get(url, {"state": ""}).json()["results"]] == [
        handed_in["pending"].pk, handed_in["approved"].pk]
    assert ids(curator_api.get(url, {"state": "approved", "queue": "all"})) == [handed_in["approved"].pk]
    assert ids(curator_api.get(url, {"queue": "gold"})) == []
    assert curator_api.get(url).json()["counts"]["all"] == {"pending": 1, "approved": 1, "rejected": 0}

    refused(curator_api.get(url, {"queue": "everything"}), "queue")
    refused(curator_api.get(url, {"state": "lost"}), "state")


def test_a_workers_claims_filter_within_their_own(handed_in):
    wanda = Submission.objects.get(pk=handed_in["pending"].pk).claim.worker
    api = logged_in_api(wanda)
    mine = list(Claim.objects.filter(worker=wanda).order_by("-claimed_at").values_list("pk", flat=True))
    assert ids(api.get("/api/claims/")) == mine
    assert ids(api.get("/api/claims/", {"study": "cars"})) == [handed_in["cars"].claim_id]
    assert ids(api.get("/api/claims/", {"status": "approved"})) == []  # walt's approved claim is not hers
    assert ids(api.get("/api/claims/", {"status": "submitted"})) == mine

    # a study she has no claim in is refused like one that does not exist: nothing to learn about it
    unknown = refused(api.get("/api/claims/", {"study": "secret"}), "study")
    create_study("secret", form=FORM, items=1)
    assert refused(api.get("/api/claims/", {"study": "secret"}), "study") == unknown
    refused(api.get("/api/claims/", {"status": "finished"}), "status")
    refused(api.get("/api/claims/", {"claimed_after": "soon"}), "claimed_after")


# --- Runs and predictions ------------------------------------------------------------------------

@pytest.fixture
def run_version(db, video):
    return cvrr_version(video)


def test_runs_filter_and_refuse_bad_values(run_version, researcher, researcher_api):
    pending = api_model_run(run_version, researcher)
    cancelled = api_model_run(run_version, researcher, prompting="cot")
    EvaluationRun.objects.filter(pk=cancelled.pk).update(status=EvaluationRun.Status.CANCELLED)

    assert ids(researcher_api.get("/api/runs/", {"status": "cancelled"})) == [cancelled.pk]
    assert ids(researcher_api.get("/api/runs/", {"prompting": "standard"})) == [pending.pk]
    assert ids(researcher_api.get("/api/runs/", {"created_by": researcher.username, "model": "CHAT"})) == [
        cancelled.pk, pending.pk]
    assert ids(researcher_api.get("/api/runs/", {"version": run_version.pk, "benchmark": "cvrr"})) == [
        cancelled.pk, pending.pk]

    refused(researcher_api.get("/api/runs/", {"version": "web"}), "version")  # once silently ignored
    refused(researcher_api.get("/api/runs/", {"version": 987654}), "version")
    refused(researcher_api.get("/api/runs/", {"status": "lost"}), "status")
    refused(researcher_api.get("/api/runs/", {"benchmark": "imagenet"}), "benchmark")


def test_predictions_filter_and_refuse_bad_values(run_version, researcher, researcher_api):
    run = api_model_run(run_version, researcher)
    first, second = run_version.items.order_by("external_id")[:2]
    fine = Prediction.objects.create(run=run, request_id="a:qa", item=first, variant="qa", prompt=[],
                                     raw_output="yes", parse_status="ok")
    failed = Prediction.objects.create(run=run, request_id="b:qa", item=second, variant="qa", prompt=[],
                                       error="timeout", parse_status="empty")
    url = reverse("api-run-predictions", args=[run.pk])

    assert ids(researcher_api.get(url, {"errors": "true"})) == [failed.pk]
    assert ids(researcher_api.get(url, {"errors": "yes"})) == [failed.pk]
    assert ids(researcher_api.get(url, {"errors": "false"})) == [fine.pk, failed.pk]
    assert ids(researcher_api.get(url, {"item": first.pk})) == [fine.pk]
    assert ids(researcher_api.get(url, {"parse_status": "ok", "variant": "qa"})) == [fine.pk]
    assert ids(researcher_api.get(url, {"request_id": "b:qa"})) == [failed.pk]

    refused(researcher_api.get(url, {"errors": "sometimes"}), "errors")
    refused(researcher_api.get(url, {"item": "first"}), "item")
    refused(researcher_api.get(url, {"parse_status": "great"}), "parse_status")


# --- Image studio attempts ----------------------------------------------------------------------

def test_image_attempts_refuse_an_item_that_is_not_an_id(curator, curator_api, draft_version):
    item = draft_version.items.create(external_id="t-1", payload={})
    made = ImageAttempt.objects.create(item=item, slot="premise", mode="text2image", prompt="a cat", seed=1,
                                       model_id="tiny", created_by=curator)
    assert ids(curator_api.get("/api/image-attempts/", {"item": item.pk, "slot": "premise"})) == [made.pk]
    assert ids(curator_api.get("/api/image-attempts/", {"item": item.pk, "slot": "hypothesis1"})) == []
    refused(curator_api.get("/api/image-attempts/", {"item": "t-1"}), "item")  # once silently ignored
    refused(curator_api.get("/api/image-attempts/", {"item": 987654}), "item")
    refused(curator_api.get("/api/image-attempts/", {"mode": "paint"}), "mode")
