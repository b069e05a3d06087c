"""The curators' study set-up pages: creating a study (settings checked like the API), adding items
from a file (dry run with problems by row), the media library or a frozen version, opening /
pausing / closing, duplicating, the consent page before a worker's first item, and who may do what."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation import versions
from annotation.crowd import assignment, consent
from annotation.crowd.models import Claim, Study, StudyConsent, StudyItem
from annotation.models import Benchmark, BenchmarkVersion
from config.models import StateChange
from config.roles import ANNOTATOR
from tests.conftest import create_study, cvqa_payload, logged_in_api, logged_in_client, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [
    {"name": "answer", "type": "single_choice", "label": "Is it right?", "options": ["yes", "no"],
     "explanation": "required"},
    {"name": "comment", "type": "free_text", "label": "Anything else?", "min_length": 0, "max_length": 300},
]}


def settings_post(**overrides) -> dict:
    values = {
        "name": "Check captions", "slug": "", "step_kind": "form", "form_schema": json.dumps(FORM),
        "annotators_per_item": "3", "count_accepted_only": "on", "lease_seconds": "1800",
        "instructions": "Read **each** caption.", "consent_text": "You agree to take part.",
        "estimated_minutes": "2", "pay_per_item": "0.30", "currency": "GBP", "required_qualification": "",
        "required_attributes": "{}", "gold_share": "0", "expert_share": "0.1", "expert_first": "2",
        "min_accept_rate": "0.7", "min_reviews_for_exclusion": "3", "recruitment_platform": "none",
        "platform_study_id": "", "required_submissions": "1", "completion_code": "", "completion_url": "",
    }
    values.update(overrides)
    return values


def upload(name: str, text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/plain")


# --- Creating ------------------------------------------------------------------------------------

def test_curator_creates_a_study_with_its_form_and_consent_page(curator):
    response = logged_in_client(curator).post(reverse("crowd-study-new"), settings_post())
    study = Study.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("crowd-study-items", args=[study.slug])
    assert study.slug == "check-captions" and study.state == Study.State.DRAFT and study.created_by == curator
    assert study.form_schema == FORM and study.annotators_per_item == 3 and study.lease_seconds == 1800
    assert study.consent_text == "You agree to take part."
    assert StateChange.objects.filter(object_id=study.pk, to_state="draft").exists()


@pytest.mark.parametrize(("overrides", "field"), [
    ({"annotators_per_item": "0"}, "annotators_per_item"),
    ({"form_schema": json.dumps({"fields": [{"name": "a", "type": "dropdown"}]})}, "form_schema"),
    ({"form_schema": "{}"}, "form_schema"),
    ({"recruitment_platform": "prolific"}, "platform_study_id"),
    ({"lease_seconds": "5"}, "lease_seconds"),
    ({"gold_share": "1.5"}, "gold_share"),
    ({"required_attributes": "[1, 2]"}, "required_attributes"),
    ({"name": ""}, "name"),
])
def test_bad_settings_are_form_errors_and_create_nothing(curator, overrides, field):
    response = logged_in_client(curator).post(reverse("crowd-study-new"), settings_post(**overrides))
    assert response.status_code == 400
    assert field in response.context["form"].errors
    assert b"The study was not created" in response.content
    assert not Study.objects.exists()


def test_a_taken_address_is_409_on_the_form(curator):
    create_study("taken", form=FORM, items=0)
    response = logged_in_client(curator).post(reverse("crowd-study-new"), settings_post(slug="taken"))
    assert response.status_code == 409
    assert "slug" in response.context["form"].errors
    assert Study.objects.count() == 1


def test_only_curators_and_admins_set_studies_up(annotator, researcher, curator):
    study = create_study("mine", form=FORM, items=1, state=Study.State.DRAFT)
    for user in (annotator, researcher):
        client = logged_in_client(user)
        assert client.post(reverse("crowd-study-new"), settings_post()).status_code == 403
        assert client.post(reverse("crowd-study-items", args=[study.slug]),
                           {"source": "file", "file": upload("a.jsonl", '{"external_id": "x"}')}).status_code == 403
        assert client.post(reverse("crowd-study-state", args=[study.slug]), {"verb": "open"}).status_code == 403
        assert client.post(reverse("crowd-study-duplicate", args=[study.slug])).status_code == 403
    study.refresh_from_db()
    assert study.state == Study.State.DRAFT and study.items.count() == 1 and Study.objects.count() == 1


def test_markdown_preview_shows_raw_html_as_text(curator):
    response = logged_in_client(curator).post(reverse("crowd-markdown-preview"),
                                              {"text": "**bold** <script>alert(1)</script> [x](javascript:go)"})
    html = response.content.decode()
    assert response.status_code == 200 and "<strong>bold</strong>" in html
    assert "<script>" not in html and "javascript:" not in html


# --- Items ---------------------------------------------------------------------------------------

def test_dry_run_reports_problems_by_row_and_writes_nothing(curator):
    study = create_study("rows", form=FORM, items=1, state=Study.State.DRAFT)
    text = "\n".join([
        '{"external_id": "a", "payload": {"caption": "one"}}',
        '{"external_id": "item-0", "payload": {}}',  # the study has it already
        "not json",
        '{"external_id": "a", "payload": {}}',  # twice in the file
        '{"external_id": "g", "payload": {}, "role": "gold"}',  # gold without an answer key
        '{"payload": {"caption": "no id"}}',
        '{"external_id": "p", "payload": [1]}',
    ])
    client = logged_in_client(curator)
    response = client.post(reverse("crowd-study-items", args=[study.slug]),
                           {"source": "file", "dry_run": "1", "file": upload("items.jsonl", text)})
    assert response.status_code == 200
    problems = {p["row"]: p["problem"] for p in response.context["outcome"].problems}
    assert set(problems) == {2, 3, 4, 5, 6, 7}
    assert "already has an item 'item-0'" in problems[2]
    assert "not valid JSON" in problems[3]
    assert "also on row 1" in problems[4]
    assert "answer_key" in problems[5]
    assert "external_id is missing" in problems[6]
    assert "payload must be a JSON object" in problems[7]
    assert b'data-row="3"' in response.content
    # adding the same file is refused as a whole: 400, nothing written
    response = client.post(reverse("crowd-study-items", args=[study.slug]),
                           {"source": "file", "file": upload("items.jsonl", text)})
    assert response.status_code == 400
    assert list(study.items.values_list("external_id", flat=True)) == ["item-0"]


def test_a_clean_csv_is_checked_then_added(curator):
    study = create_study("csv", form=FORM, items=0, k=2, state=Study.State.DRAFT)
    text = 'external_id,caption,payload,role,answer_key\nc1,A dog,"{""lang"": ""en""}",,\n' \
           'c2,A cat,,gold,"{""fields"": {""answer"": ""yes""}}"\n'
    client = logged_in_client(curator)
    dry = client.post(reverse("crowd-study-items", args=[study.slug]),
                      {"source": "file", "dry_run": "1", "file": upload("items.csv", text)})
    assert dry.status_code == 200 and dry.context["outcome"].problems == [] and not study.items.exists()
    added = client.post(reverse("crowd-study-items", args=[study.slug]),
                        {"source": "file", "file": upload("items.csv", text)})
    assert added.status_code == 302
    first, gold = study.items.order_by("external_id")
    assert first.payload == {"caption": "A dog", "lang": "en"} and first.open_slots == 2
    assert gold.role == StudyItem.Role.GOLD and gold.answer_key == {"fields": {"answer": "yes"}}


def test_csv_without_an_id_column_is_a_file_problem(curator):
    study = create_study("nocol", form=FORM, items=0, state=Study.State.DRAFT)
    response = logged_in_client(curator).post(reverse("crowd-study-items", args=[study.slug]),
                                              {"source": "file", "file": upload("x.csv", "caption\nA dog\n")})
    assert response.status_code == 400
    assert "external_id" in response.context["outcome"].problems[0]["problem"]
    assert not study.items.exists()


def test_items_from_the_media_library(curator, video, image):
    study = create_study("media", form=FORM, items=0, state=Study.State.DRAFT)
    response = logged_in_client(curator).post(reverse("crowd-study-items", args=[study.slug]),
                                              {"source": "media", "video": [video.pk], "image": [image.pk, 987654]})
    assert response.status_code == 400  # the unknown image: nothing added
    assert "no image #987654" in response.context["outcome"].problems[0]["problem"]
    assert not study.items.exists()
    response = logged_in_client(curator).post(reverse("crowd-study-items", args=[study.slug]),
                                              {"source": "media", "video": [video.pk], "image": [image.pk]})
    assert response.status_code == 302
    items = {item.external_id: item for item in study.items.all()}
    assert items[f"video-{video.pk}"].video_id == video.pk and items[f"image-{image.pk}"].image_id == image.pk


def test_items_from_a_frozen_version_only(curator, image):
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="v1")
    versions.add_item(version, "q-001", cvqa_payload(), media={"image": image})
    study = create_study("version", form=FORM, items=0, state=Study.State.DRAFT)
    client = logged_in_client(curator)
    url, choice = reverse("crowd-study-items", args=[study.slug]), {"source": "version", "version": version.pk}
    response = client.post(url, choice)
    assert response.status_code == 400 and not study.items.exists()  # a draft version is refused
    versions.freeze(version)
    response = client.post(url, choice)
    assert response.status_code == 302
    item = study.items.get()
    assert item.external_id == "q-001" and item.image_id == image.pk and item.benchmark_item.version_id == version.pk
    assert item.payload == cvqa_payload()


def test_a_closed_study_takes_no_items(curator):
    study = create_study("closed", form=FORM, items=0, state=Study.State.CLOSED)
    response = logged_in_client(curator).post(reverse("crowd-study-items", args=[study.slug]), {
        "source": "file", "file": upload("a.jsonl", '{"external_id": "x", "payload": {}}')})
    assert response.status_code == 409 and not study.items.exists()


# --- State, duplicate ----------------------------------------------------------------------------

def test_open_pause_close_from_the_study_page(curator):
    study = create_study("states", form=FORM, items=0, state=Study.State.DRAFT)
    client = logged_in_client(curator)
    url = reverse("crowd-study-state", args=[study.slug])
    assert client.post(url, {"verb": "open"}).status_code == 409  # no items yet
    assignment.add_items(study, [{"external_id": "x", "payload": {}}])
    detail = client.get(reverse("crowd-study-detail", args=[study.slug])).content.decode()
    assert 'value="open"' in detail and reverse("crowd-study-report", args=[study.slug]) in detail
    assert client.post(url, {"verb": "open"}).status_code == 302
    study.refresh_from_db()
    assert study.state == Study.State.OPEN
    assert client.post(url, {"verb": "pause"}).status_code == 302
    assert client.post(url, {"verb": "close"}).status_code == 302
    assert client.post(url, {"verb": "open"}).status_code == 409
    assert client.post(url, {"verb": "explode"}).status_code == 400
    study.refresh_from_db()
    assert study.state == Study.State.CLOSED
    assert list(StateChange.objects.filter(object_id=study.pk, scope_id=study.pk).order_by("pk")
                .values_list("to_state", flat=True))[-3:] == ["open", "paused", "closed"]


def test_duplicate_copies_settings_and_items_not_claims(curator, annotator):
    study = create_study("source", form=FORM, items=2, k=2, pay_per_item="0.40", consent_text="Agree?",
                         instructions="Be kind.")
    study.exclude_workers.add(annotator)
    other = make_user("other", ANNOTATOR)
    consent.give(study, other)
    claim = assignment.claim_next(study, other)
    response = logged_in_client(curator).post(reverse("crowd-study-duplicate", args=[study.slug]))
    copy = Study.objects.exclude(pk=study.pk).get()
    assert response.status_code == 302 and response["Location"] == reverse("crowd-study-detail", args=[copy.slug])
    assert copy.name == "Copy of Source" and copy.slug != study.slug and copy.state == Study.State.DRAFT
    assert copy.form_schema == FORM and copy.annotators_per_item == 2 and str(copy.pay_per_item) == "0.40"
    assert copy.consent_text == "Agree?" and copy.instructions == "Be kind." and copy.created_by == curator
    assert list(copy.exclude_workers.all()) == [annotator]
    assert sorted(copy.items.values_list("external_id", "open_slots")) == [("item-0", 2), ("item-1", 2)]
    assert not Claim.objects.filter(study=copy).exists()
    assert Claim.objects.get(study=study) == claim


# --- Consent page --------------------------------------------------------------------------------

def test_consent_page_comes_before_the_first_item(annotator):
    study = create_study("consent", form=FORM, items=2, consent_text="You agree to **take part**.")
    client = logged_in_client(annotator)
    page = client.get(reverse("crowd-work", args=[study.slug]))
    assert page.status_code == 200 and b"data-consent" in page.content and b"<strong>take part</strong>" in page.content
    assert not Claim.objects.exists()  # nothing claimed before the worker agrees
    agreed = client.post(reverse("crowd-work-consent", args=[study.slug]))
    assert agreed.status_code == 302
    page = client.get(reverse("crowd-work", args=[study.slug]))
    assert b"data-external-id" in page.content and Claim.objects.filter(worker=annotator).count() == 1


def test_no_consent_page_for_a_worker_with_items_or_a_study_without_one(annotator):
    study = create_study("later", form=FORM, items=2)
    assignment.claim_next(study, annotator)  # started before the page was added
    Study.objects.filter(pk=study.pk).update(consent_text="Agree.")
    assert b"data-external-id" in logged_in_client(annotator).get(reverse("crowd-work", args=[study.slug])).content
    plain = create_study("plain", form=FORM, items=1)
    other = make_user("worker2", ANNOTATOR)
    assert b"data-external-id" in logged_in_client(other).post(reverse("crowd-work", args=[plain.slug]),
                                                              follow=True).content


def test_researcher_cannot_agree_to_consent(researcher):
    study = create_study("noresearch", form=FORM, items=1, consent_text="Agree.")
    assert logged_in_client(researcher).post(reverse("crowd-work-consent", args=[study.slug])).status_code == 403


def test_the_claim_api_asks_for_consent_until_the_worker_agrees(annotator):
    study = create_study("consent-api", form=FORM, items=2, consent_text="You agree to take part.")
    api = logged_in_api(annotator)
    refused = api.post(reverse("api-study-claim", args=[study.slug]))
    assert refused.status_code == 409 and refused.json()["error"].startswith("this study asks for your consent first")
    assert not Claim.objects.exists() and not StudyConsent.objects.exists()
    agreed = api.post(reverse("api-study-consent", args=[study.slug]))
    assert agreed.status_code == 201 and agreed.json()["study"] == study.slug
    assert api.post(reverse("api-study-consent", args=[study.slug])).status_code == 201  # agreeing again is harmless
    assert StudyConsent.objects.filter(study=study, worker=annotator).count() == 1
    assert api.post(reverse("api-study-claim", args=[study.slug])).status_code == 201
    assert api.post(reverse("api-study-consent", args=["no-such-study"])).status_code == 404


def test_consent_given_on_the_page_is_kept_for_the_api_and_other_sessions(annotator):
    study = create_study("consent-kept", form=FORM, items=2, consent_text="Agree.")
    assert logged_in_client(annotator).post(reverse("crowd-work-consent", args=[study.slug])).status_code == 302
    assert StudyConsent.objects.filter(study=study, worker=annotator).exists()
    fresh = logged_in_client(annotator)  # another browser: no session of the first one
    assert b"data-external-id" in fresh.post(reverse("crowd-work", args=[study.slug]), follow=True).content
    assert logged_in_api(annotator).post(reverse("api-study-claim", args=[study.slug])).status_code == 200
