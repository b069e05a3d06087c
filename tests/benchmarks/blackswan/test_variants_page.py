"""The curators' BlackSwanSuite variants pages (frontend/benchmarks/blackswan/variants_views.py): a preview built
from a finished staged-reveal study, shown, then frozen as a version (or refused with the reason and nothing
created)."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.benchmarks.blackswan import variants, versions
from annotation.models import BenchmarkVersion
from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER
from generation.models import Job
from tests.conftest import ingest_path, logged_in_client

pytestmark = pytest.mark.django_db

YES, NO = "yes", "no"
LIST = "/blackswan/variants/"


@pytest.fixture
def staged_study(curator, tmp_path, bigbuckbunny, django_capture_on_commit_callbacks):
    """A real split of Big Buck Bunny, a staged study over it, one worker through the three steps
    (as in tests/benchmarks/blackswan/test_variants.py): forecasts 0 and 2 invalidated, then only hypothesis 1
    validated."""
    from annotation.benchmarks.blackswan import splits, staged
    from annotation.crowd import assignment
    from tests.conftest import make_user
    from tests.generation.test_splitting import make_stamped_clip

    video = ingest_path(make_stamped_clip(bigbuckbunny, tmp_path / "bunny.mp4"), user=curator)
    with django_capture_on_commit_callbacks(execute=True):
        split = splits.split_library_video(video, 1.2, 2.4, curator)
    split.refresh_from_db()
    assert split.status == "done", split.message
    study = staged.create_staged_study([split], "Variants", curator, open_now=True, expert_first=0, expert_share=0)
    worker = make_user("wanda", ANNOTATOR)
    claim = assignment.claim_next(study, worker)
    answers = {staged.FORECASTER: {"scenarios": ["The rabbit keeps sleeping.", "The rabbit wakes up.",
                                                 "A bird lands on the rabbit."]},
               staged.DETECTIVE: {"forecast_valid": [NO, YES, NO],
                                  "new_hypotheses": ["The rabbit stretches.", "", "The rabbit yawns widely."]},
               staged.REPORTER: {"hypothesis_valid": [NO, YES, NO],
                                 "caption": "The rabbit wakes up, yawns and leaves its burrow."}}
    for step in staged.STEPS:
        staged.submit_step(claim, worker, step, answers[step])
    return study


def preview_url(job) -> str:
    return reverse("blackswan-variants-preview", kwargs={"pk": job.pk})


def cell(html: str, attribute: str, name: str) -> str:
    """The count cell of the row `<tr data-<attribute>="<name>">`."""
    found = re.search(rf'<tr data-{attribute}="{name}"><td>{name}</td><td>(\d+)</td></tr>', html)
    assert found, f"no {attribute} row {name}"
    return found.group(1)


def built(client, study, django_capture_on_commit_callbacks, rules="paper"):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(LIST, {"study": study.slug, "mcq_rules": rules})
    job = Job.objects.get(kind=versions.JOB_KIND)
    assert response.status_code == 302 and response["Location"] == preview_url(job)
    job.refresh_from_db()
    return job


def test_only_curators_and_admins(role_users, curator):
    job = versions.start_build([], here=True)  # a preview of nothing
    for role, user in role_users.items():
        client = logged_in_client(user)
        allowed = role in (CURATOR, ADMIN)
        for url in (LIST, preview_url(job)):
            assert client.get(url).status_code == (200 if allowed else 403), (role, url)
        if role in (ANNOTATOR, RESEARCHER):
            assert client.post(LIST, {"study": "anything"}).status_code == 403
            assert client.post(preview_url(job), {"label": "x", "skip_pending": "on"}).status_code == 403
    response = Client().get(LIST)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert not BenchmarkVersion.objects.exists() and Job.objects.filter(kind=versions.JOB_KIND).count() == 1


def test_build_a_preview_from_a_staged_study(staged_study, curator, django_capture_on_commit_callbacks):
    client = logged_in_client(curator)
    listing = client.get(LIST).content.decode()
    assert re.search(rf'<tr data-study="{staged_study.slug}">.*?<td data-field="finished">1</td>', listing, re.S)
    assert "No preview built yet." in listing

    job = built(client, staged_study, django_capture_on_commit_callbacks)

    assert job.status == Job.Status.SUCCEEDED, job.message
    assert job.requested_by == curator and len(job.params["entries"]) == 1
    assert job.result["counts"]["variants"] == {"forecaster_gen": 1, "detective_gen": 1, "reporter_gen": 1,
                                                "detective_mcq": 3, "reporter_mcq": 2, "detective_yn": 3,
                                                "reporter_yn": 2}
    listing = client.get(LIST).content.decode()
    assert f'<tr data-job="{job.pk}">' in listing and job.message in listing


def test_the_release_rules_are_the_default_choice(staged_study, curator, django_capture_on_commit_callbacks):
    client = logged_in_client(curator)
    listing = client.get(LIST).content.decode()
    assert re.search(r'<select name="mcq_rules"><option value="release" selected>', listing)
    assert '<option value="paper">' in listing
    with django_capture_on_commit_callbacks(execute=True):
        client.post(LIST, {"study": staged_study.slug})  # no choice sent: release
    job = Job.objects.get(kind=versions.JOB_KIND)
    assert job.params["mcq_rules"] == "release" and job.result["mcq_rules"] == "release"
    # W = forecasts 0 and 2 → one distractor set, one Detective MCQ per invalidated forecast; the Reporter's
    # invalidated hypotheses "stretches" and "yawns" → one set, one MCQ with the caption
    counts = job.result["counts"]["variants"]
    assert (counts["detective_mcq"], counts["reporter_mcq"]) == (2, 1)
    assert 'MCQ rules <span id="preview-mcq-rules">release</span>' in client.get(preview_url(job)).content.decode()


def test_bad_build_requests_are_refused_with_the_reason(staged_study, curator):
    from annotation.crowd.models import Study

    client = logged_in_client(curator)
    form_study = Study.objects.create(name="A form", slug="a-form")
    for data, message in (({}, "Choose a staged-reveal study"),
                          ({"study": "nope"}, "There is no study &#x27;nope&#x27;"),
                          ({"study": form_study.slug}, "is not a BlackSwanSuite staged-reveal study"),
                          ({"study": staged_study.slug, "mcq_rules": "mine"}, "Unknown MCQ rule set &#x27;mine&#x27;")):
        response = client.post(LIST, data)
        assert response.status_code == 400 and message in response.content.decode()
    assert not Job.objects.filter(kind=versions.JOB_KIND).exists()


def test_the_preview_shows_counts_items_and_freezes(staged_study, curator, django_capture_on_commit_callbacks):
    client = logged_in_client(curator)
    job = built(client, staged_study, django_capture_on_commit_callbacks)

    html = client.get(preview_url(job)).content.decode()
    assert {name: cell(html, "variant", name) for name in variants.VARIANTS} == {
        "forecaster_gen": "1", "detective_gen": "1", "reporter_gen": "1", "detective_mcq": "3", "reporter_mcq": "2",
        "detective_yn": "3", "reporter_yn": "2"}
    assert cell(html, "hard", "videos") == "0" and cell(html, "hard", "detective_mcq") == "0"
    assert cell(html, "pending", "detective_mcq") == "0" and "No problem in the records." in html
    # the correct options are marked: each Detective hypothesis, then the caption and the hypothesis validated in
    # step 3; the forecasts invalidated in step 2 are only distractors
    correct = re.findall(r'<li class="correct"><strong>(.*?)</strong>', html)
    assert correct == ["The rabbit stretches.", "The rabbit wakes up.", "The rabbit yawns widely.",
                       "The rabbit wakes up, yawns and leaves its burrow.", "The rabbit wakes up."]
    assert html.count("<li>The rabbit keeps sleeping.</li>") == 3  # a distractor of each Detective MCQ
    assert html.count('<tr data-item="') == 5  # the Y/N rows

    response = client.post(preview_url(job), {"label": "from-the-page"})

    version = BenchmarkVersion.objects.get(benchmark__slug="blackswan", label="from-the-page")
    assert response.status_code == 302 and response["Location"] == reverse("version-detail", kwargs={"pk": version.pk})
    assert version.frozen and version.item_count == 1 + 5 + 3 + 2 and version.created_by == curator
    assert {item["external_id"] for item in job.result["items"]} == set(version.items.values_list("external_id",
                                                                                                  flat=True))

    taken = client.post(preview_url(job), {"label": "from-the-page"})
    assert taken.status_code == 400 and "blackswan already has a version &#x27;from-the-page&#x27;" in (
        taken.content.decode())
    empty = client.post(preview_url(job), {"label": "  "})
    assert empty.status_code == 400 and "A version label is needed." in empty.content.decode()
    assert BenchmarkVersion.objects.filter(benchmark__slug="blackswan").count() == 1


def test_pending_mcqs_need_skip_pending(staged_study, curator):
    """The same claim with every forecast validated in step 2: the Detective MCQs have no distractor to draw."""
    (pair,), origins = versions.staged_pairs(staged_study)
    record, video = pair
    record = {**record, "task2_checkboxes": [YES, YES, YES], "task2_gt": list(record["task1_gt"])}
    job = versions.start_build([(record, video)], origins=origins, user=curator, here=True, mcq_rules="paper")
    assert job.status == Job.Status.SUCCEEDED, job.message
    client = logged_in_client(curator)

    html = client.get(preview_url(job)).content.decode()
    assert cell(html, "pending", "detective_mcq") == "3"
    assert html.count(f'data-fallback-state="{variants.CAPTION_NEEDED}"') == 3
    assert 'id="proposals-link"' in html and reverse("admin:generation_proposal_changelist") in html

    refused = client.post(preview_url(job), {"label": "partial"})
    assert refused.status_code == 400 and "3 MCQ(s) still wait for fallback distractors" in refused.content.decode()
    assert not BenchmarkVersion.objects.filter(benchmark__slug="blackswan").exists()

    response = client.post(preview_url(job), {"label": "partial", "skip_pending": "on"})
    version = BenchmarkVersion.objects.get(benchmark__slug="blackswan", label="partial")
    assert response.status_code == 302 and response["Location"] == reverse("version-detail", kwargs={"pk": version.pk})
    assert "3 MCQs waiting for distractors left out" in version.description
    assert not version.items.filter(payload__kind="mcq", payload__mcq_task=1).exists()


def test_an_unfinished_or_foreign_job_has_no_preview(curator):
    client = logged_in_client(curator)
    queued = Job.objects.create(kind=versions.JOB_KIND)
    page = client.get(preview_url(queued))
    assert page.status_code == 200 and "The preview is not ready yet" in page.content.decode()
    refused = client.post(preview_url(queued), {"label": "early"})
    assert refused.status_code == 400 and "has not succeeded" in refused.content.decode()
    other = Job.objects.create(kind="probe_video")
    assert client.get(reverse("blackswan-variants-preview", kwargs={"pk": other.pk})).status_code == 404
    assert not BenchmarkVersion.objects.exists()
