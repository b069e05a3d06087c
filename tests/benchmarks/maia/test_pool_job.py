"""MAIA pool checks as a background job: the pool report's "Run pool checks" button queues it, the job
checks the complete pools with the MAIA_NLI_MODEL setting (a tiny NLI model, or a forced contradiction),
moves them to stage POOL_CHECKED and puts a contradicting pool in the review queue; refusals and roles."""

import pytest
from django.urls import reverse

from annotation.benchmarks.maia import pool_check_job, pool_checks, stages
from annotation.curation_models import CurationRecord, ItemCheck
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion
from generation.models import Job
from tests.benchmarks.maia.test_pool_checks import AGREEING, ODD_ANSWER, ForcedScorer, payload

pytestmark = pytest.mark.django_db


@pytest.fixture
def curation(db, curator, register_model):
    register_model("forced", backend="nli")  # MAIA_NLI_MODEL names a registered NLI model
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label="curation-2",
                                              created_by=curator, source=BenchmarkVersion.Source.CURATION)
    for external_id, answers in (("agree", AGREEING), ("odd", AGREEING[:7] + [ODD_ANSWER])):
        item = BenchmarkItem.objects.create(version=version, external_id=external_id,
                                            payload=payload("SpazialeTotale_A", answers))
        CurationRecord.objects.create(item=item, stage=stages.POOL_COMPLETE)
    draft = BenchmarkItem.objects.create(version=version, external_id="draft", payload={
        "kind": "question_draft", "video": "v1", "category": "Sentiment_A", "question": "Perché?", "answers": []})
    CurationRecord.objects.create(item=draft, stage=stages.QUESTION_WRITTEN)
    return version


def run_from_the_page(client, version, capture):
    with capture(execute=True):  # the job is sent when the request's transaction commits; Celery runs it eagerly
        return client.post(reverse("maia-pool-run", kwargs={"pk": version.pk}))


def test_the_button_runs_the_checks_with_the_setting_s_model(curation, curator, curator_client, settings,
                                                              tiny_models_dir, tiny_registry,
                                                              django_capture_on_commit_callbacks):
    settings.MAIA_NLI_MODEL = str(tiny_models_dir / "nli")
    page = curator_client.get(reverse("maia-pool-report", kwargs={"pk": curation.pk})).content.decode()
    assert "Run pool checks" in page
    response = run_from_the_page(curator_client, curation, django_capture_on_commit_callbacks)
    assert response.status_code == 302
    job = Job.objects.get(kind=pool_check_job.JOB_KIND)
    assert job.status == Job.Status.SUCCEEDED, job.message
    assert job.requested_by == curator and job.params["model_id"] == settings.MAIA_NLI_MODEL
    assert job.result["checked"] == 2
    checks = ItemCheck.objects.filter(aspect=pool_checks.ASPECT)
    assert sorted(checks.values_list("item__external_id", flat=True)) == ["agree", "odd"]
    assert set(checks.values_list("checked_by", flat=True)) == {curator.pk}
    assert dict(CurationRecord.objects.values_list("item__external_id", "stage")) == {
        "agree": stages.POOL_CHECKED, "odd": stages.POOL_CHECKED, "draft": stages.QUESTION_WRITTEN}
    page = curator_client.get(reverse("maia-pool-report", kwargs={"pk": curation.pk})).content.decode()
    assert f"#{job.pk}" in page and "2 pools checked" in page


def test_a_contradicting_pool_reaches_the_review_queue(curation, curator_client, settings, monkeypatch,
                                                      django_capture_on_commit_callbacks):
    settings.MAIA_NLI_MODEL = "forced"
    monkeypatch.setattr(pool_checks, "load_scorer", lambda model_id=None: ForcedScorer())
    run_from_the_page(curator_client, curation, django_capture_on_commit_callbacks)
    assert Job.objects.get(kind=pool_check_job.JOB_KIND).result["contradicting"] == ["odd"]
    assert [item.external_id for item, _check in pool_checks.review_queue(curation)] == ["odd"]
    page = curator_client.get(reverse("maia-pool-review", kwargs={"pk": curation.pk})).content.decode()
    assert ODD_ANSWER in page


def test_no_model_or_no_complete_pool_is_400_and_queues_nothing(curation, curator, curator_client, settings,
                                                                 django_capture_on_commit_callbacks):
    settings.MAIA_NLI_MODEL = ""
    response = run_from_the_page(curator_client, curation, django_capture_on_commit_callbacks)
    assert response.status_code == 400 and "Name an NLI model" in response.content.decode()
    settings.MAIA_NLI_MODEL = "forced"
    empty = BenchmarkVersion.objects.create(benchmark=curation.benchmark, label="empty", created_by=curator)
    response = run_from_the_page(curator_client, empty, django_capture_on_commit_callbacks)
    assert response.status_code == 400 and "no question with its 8 answers" in response.content.decode()
    assert not Job.objects.exists()


def test_only_curators_run_the_checks(curation, annotator_client, researcher_client, settings):
    settings.MAIA_NLI_MODEL = "forced"
    url = reverse("maia-pool-run", kwargs={"pk": curation.pk})
    assert annotator_client.post(url).status_code == 403
    assert researcher_client.post(url).status_code == 403
    assert annotator_client.get(reverse("maia-pool-report", kwargs={"pk": curation.pk})).status_code == 403
    assert not Job.objects.exists()
