"""MAIA question writing (seeds/004 §3.1; SPEC §5): a study of kind `maia_questions` holds each library
video once; its worker writes two open questions per category (24), checked field by field (missing,
not a question, duplicates, yes/no in Italian and English); a worker may override the yes/no check,
which flags the submission in the review queue; an approval writes 24 `question_draft` items with
their video and curation records, and a second approval for the same video is refused."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.benchmarks.maia import categories, demo, question_writing, stages
from annotation.benchmarks.maia.yes_no import YES_NO_MESSAGE
from annotation.crowd import assignment, item_sources, kinds, review, submissions
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.models import Study
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem, BenchmarkVersion, ItemMedia
from config.roles import ANNOTATOR
from tests.conftest import ingest_path, logged_in_client, make_user

pytestmark = pytest.mark.django_db

SLOTS = question_writing.SLOT_NAMES
YES_NO_IT = "Il coniglio è felice?"
YES_NO_EN = "Is the rabbit happy?"


def answers(**changes) -> dict:
    """24 different open questions, with `changes` applied."""
    data = {slot: f"Che cosa fa il coniglio nella scena numero {number}?" for number, slot in enumerate(SLOTS, 1)}
    data.update(changes)
    return data


@pytest.fixture
def bunny(db, bigbuckbunny, curator):
    return ingest_path(bigbuckbunny, user=curator)


@pytest.fixture
def study(curator, bunny):
    return question_writing.create_question_study(curator, "Scrivi le domande", videos=[bunny], open_now=True)


def _claim(study, worker):
    claim = assignment.claim_next(study, worker)
    assert claim is not None
    return submissions.load_claim(claim.pk)


def _submit(study, worker, data):
    submission, created, _ = submissions.submit(_claim(study, worker), worker, data)
    assert created
    return submission


def _refusal(study, data, worker=None):
    worker = worker or make_user("writer", ANNOTATOR)
    with pytest.raises(InvalidSubmission) as refused:
        submissions.submit(_claim(study, worker), worker, data)
    return refused.value.details


# --- The kind and its study ------------------------------------------------------------------------

def test_the_kind_has_24_fields_two_per_category_and_one_item_per_video(study, bunny):
    kind = kinds.of(study)
    assert kind.one_item_per_video and kind.output_benchmark == categories.SLUG and kind.on_approved
    assert len(SLOTS) == 24 == len(set(SLOTS))
    assert len(categories.DEFAULTS) * stages.QUESTIONS_PER_CATEGORY == 24
    for key, texts in categories.DEFAULTS.items():
        mine = [slot for slot in question_writing.SLOTS if slot["key"] == key]
        assert [slot["name"][-2:] for slot in mine] == ["_A", "_B"]
        assert all(categories.category_key(slot["name"]) == key for slot in mine)
        assert all(texts["name_it"] in slot["label"] for slot in mine)
    assert study.form_schema == question_writing.FORM
    assert study.output_version.benchmark.slug == categories.SLUG and not study.output_version.frozen
    item = study.items.get()
    assert item.video_id == bunny.pk and item.payload["video"] == f"video{bunny.pk}"
    assert [guide["key"] for guide in item.payload["categories"]] == list(categories.DEFAULTS)
    assert "audio" in study.instructions and "sì/no" in study.instructions


def test_the_item_shows_the_category_guides_as_curators_last_saved_them(curator, bunny):
    categories.ensure_categories()
    data = {**categories.initial(categories.category("incertezza")), "description": "Definizione rivista."}
    categories.edit_category("incertezza", data, curator)
    study = question_writing.create_question_study(curator, "Domande", videos=[bunny])
    rows = question_writing.item_rows(study.items.get().payload)
    assert rows[1]["key"] == "reminder" and "audio" in rows[1]["value"]
    uncertainty = next(row for row in rows if row["key"] == "category-incertezza")
    assert uncertainty["label"] == "Incertezza"
    assert uncertainty["value"][:2] == ["Uncertainty", "Definizione rivista."]
    assert any(part.startswith("Example:") for part in uncertainty["value"])


def test_a_video_is_held_once_and_only_videos_are_items(study, bunny, curator_client):

    outcome = item_sources.add(study, item_sources.from_media([bunny.pk], []), dry_run=True)
    assert any("already in this study" in p["problem"] or "already has" in p["problem"] for p in outcome.problems)
    batch = item_sources.Batch()
    batch.add(1, {"external_id": "x", "payload": {"video": "whatever"}})
    problems = item_sources.check(study, batch)
    assert problems and "library videos" in problems[0]["problem"]


def test_videos_added_on_the_items_page_get_the_category_guides(curator, curator_client, bunny, bikes):

    study = question_writing.create_question_study(curator, "Domande")
    assert study.items.count() == 0
    other = ingest_path(bikes, user=curator)
    outcome = item_sources.add(study, item_sources.from_media([bunny.pk, other.pk], []))
    assert not outcome.problems
    payloads = {item.video_id: item.payload for item in study.items.all()}
    assert payloads[other.pk]["video"] == f"video{other.pk}" and len(payloads[bunny.pk]["categories"]) == 12


def test_only_curators_create_question_studies(annotator, bunny):
    with pytest.raises(CrowdError) as refused:
        question_writing.create_question_study(annotator, "Mine", videos=[bunny])
    assert refused.value.status == 403


# --- The form ------------------------------------------------------------------------------------

def test_every_question_is_required_and_must_be_a_question(study):
    worker = make_user("writer", ANNOTATOR)
    details = _refusal(study, answers(**{SLOTS[0]: "  ", SLOTS[1]: "Descrivi il prato"}) | {SLOTS[2]: None}, worker)
    assert details[SLOTS[0]] == details[SLOTS[2]] == "write this question"
    assert "question mark" in details[SLOTS[1]]
    assert set(details) == {SLOTS[0], SLOTS[1], SLOTS[2]}
    details = _refusal(study, answers(**{SLOTS[0]: "Perché " + "x" * 300 + "?", SLOTS[1]: "Chi?"}), worker)
    assert details == {SLOTS[0]: "write at most 300 characters",
                       SLOTS[1]: "write the question in full (at least 8 characters)"}


def test_a_repeated_question_is_refused_on_the_second_field(study):
    details = _refusal(study, answers(**{SLOTS[5]: answers()[SLOTS[1]].upper()}))
    assert set(details) == {SLOTS[5]} and question_writing.LABELS[SLOTS[1]] in details[SLOTS[5]]


@pytest.mark.parametrize("question", [YES_NO_IT, YES_NO_EN, "C'è un albero nel prato?", "Il coniglio corre o no?"])
def test_a_yes_no_question_is_refused_in_italian_by_default(study, question):
    details = _refusal(study, answers(**{SLOTS[3]: question}))
    assert details == {SLOTS[3]: YES_NO_MESSAGE["it"]}


def test_the_message_follows_the_study_language(curator, bunny):
    study = question_writing.create_question_study(curator, "Questions", videos=[bunny], open_now=True,
                                                   language="en")
    payload = study.items.get().payload
    assert payload["language"] == "en"
    with pytest.raises(InvalidSubmission) as refused:
        question_writing.clean_answers({}, payload, answers(**{SLOTS[0]: YES_NO_EN}))
    assert refused.value.details == {SLOTS[0]: YES_NO_MESSAGE["en"]}
    with pytest.raises(InvalidSubmission) as refused:  # an unknown language falls back to Italian
        question_writing.clean_answers({}, {**payload, "language": "xx"}, answers(**{SLOTS[0]: YES_NO_EN}))
    assert refused.value.details == {SLOTS[0]: YES_NO_MESSAGE["it"]}


def test_the_override_accepts_a_refused_question_and_flags_it(study):
    worker = make_user("writer", ANNOTATOR)
    data = answers(**{SLOTS[4]: YES_NO_IT, question_writing.override_field(SLOTS[4]): ["open"],
                      question_writing.override_field(SLOTS[6]): ["open"]})
    submission = _submit(study, worker, data)
    assert question_writing.overridden(submission.data) == [SLOTS[4]]  # a tick on an open question is no flag
    rows = question_writing.readable(study.form_schema, {}, submission.data)
    assert [row["label"] for row in rows] == [question_writing.LABELS[slot] for slot in SLOTS]
    flagged = next(row for row in rows if row["value"] == YES_NO_IT)
    assert "overridden" in flagged["extra"][0]
    extra = question_writing.review_extra(study, [submission])
    assert extra[submission.pk]["flags"] == [{"slot": SLOTS[4], "label": question_writing.LABELS[SLOTS[4]],
                                              "question": YES_NO_IT}]


def test_unknown_fields_are_refused(study):
    details = _refusal(study, answers(extra="x"))
    assert details == {"extra": "unknown field"}


# --- Approval --------------------------------------------------------------------------------------

def test_an_approval_writes_24_question_drafts_with_video_and_records(study, curator, bunny):
    worker = make_user("writer", ANNOTATOR)
    submission = _submit(study, worker, answers())
    review.approve(submission, curator)
    version = study.output_version
    items = BenchmarkItem.objects.filter(version=version).order_by("external_id")
    assert items.count() == 24
    assert set(items.values_list("external_id", flat=True)) == {f"video{bunny.pk}-{slot}" for slot in SLOTS}
    item = items.get(external_id=f"video{bunny.pk}-{SLOTS[0]}")
    assert item.payload == {"kind": "question_draft", "video": f"video{bunny.pk}", "category": SLOTS[0],
                            "question": answers()[SLOTS[0]], "answers": []}
    assert ItemMedia.objects.filter(item__version=version, role="video", video=bunny).count() == 24
    records = CurationRecord.objects.filter(item__version=version)
    assert records.count() == 24 and {r.stage for r in records} == {stages.QUESTION_WRITTEN}
    assert {r.author_id for r in records} == {worker.pk}
    assert {(r.working["submission"], r.working["study"], r.working["yes_no_override"]) for r in records} == {
        (submission.pk, study.slug, None)}
    assert stages.freeze_check(version)  # drafts still collect their answers


def test_the_override_is_recorded_with_who_and_when(study, curator, bunny):
    worker = make_user("writer", ANNOTATOR)
    submission = _submit(study, worker, answers(**{SLOTS[2]: YES_NO_IT,
                                                   question_writing.override_field(SLOTS[2]): ["open"]}))
    review.approve(submission, curator)
    record = CurationRecord.objects.get(item__external_id=f"video{bunny.pk}-{SLOTS[2]}")
    override = record.working["yes_no_override"]
    assert (override["question"], override["by"], override["role"], override["approved_by"]) == (
        YES_NO_IT, worker.username, "worker", curator.username)
    assert override["at"]


def test_a_reviewers_edit_is_not_blocked_by_the_detector_and_is_recorded(study, curator, bunny):
    worker = make_user("writer", ANNOTATOR)
    submission = _submit(study, worker, answers())
    edited = {**answers(**{SLOTS[7]: YES_NO_EN}),
              **{question_writing.override_field(slot): ["open"] for slot in SLOTS}}
    review.approve(submission, curator, edited=edited)
    submission.refresh_from_db()
    assert question_writing.overridden(submission.final_data) == [SLOTS[7]]
    override = CurationRecord.objects.get(item__external_id=f"video{bunny.pk}-{SLOTS[7]}").working["yes_no_override"]
    assert (override["by"], override["role"]) == (curator.username, "reviewer")
    edit = question_writing.edit_form(study.form_schema, {}, submission.final_data)
    assert [q["name"] for q in edit["questions"]] == SLOTS and len(edit["overrides"]) == 24


def test_a_second_approval_for_the_same_video_is_refused_and_writes_nothing(curator, bunny):
    study = question_writing.create_question_study(curator, "Due", videos=[bunny], open_now=True,
                                                   k=2)
    first = _submit(study, make_user("w1", ANNOTATOR), answers())
    second = _submit(study, make_user("w2", ANNOTATOR), answers(**{SLOTS[0]: "Dove corre il coniglio?"}))
    review.approve(first, curator)
    with pytest.raises(CrowdError) as refused:
        review.approve(second, curator)
    assert refused.value.status == 409 and "already holds questions" in refused.value.message
    assert BenchmarkItem.objects.filter(version=study.output_version).count() == 24
    second.refresh_from_db()
    assert second.claim.status == "submitted"


def test_a_frozen_version_refuses_the_approval(study, curator):
    submission = _submit(study, make_user("w1", ANNOTATOR), answers())
    BenchmarkVersion.objects.filter(pk=study.output_version_id).update(frozen=True, checksum="0" * 64)
    with pytest.raises(CrowdError) as refused:
        review.approve(submission, curator)
    assert refused.value.status == 409


# --- Pages and permissions ---------------------------------------------------------------------------

def test_workers_submit_only_their_own_claims(study):
    owner, other = make_user("owner", ANNOTATOR), make_user("other", ANNOTATOR)
    claim = _claim(study, owner)
    response = logged_in_client(other).post(reverse("api-claim-submit", args=[claim.pk]), {"data": answers()},
                                            content_type="application/json")
    assert response.status_code in (403, 404)
    client = logged_in_client(owner)
    response = client.post(reverse("api-claim-submit", args=[claim.pk]),
                           {"data": answers(**{SLOTS[0]: YES_NO_IT})}, content_type="application/json")
    assert response.status_code == 400 and response.json()["details"] == {SLOTS[0]: YES_NO_MESSAGE["it"]}
    response = client.post(reverse("api-claim-submit", args=[claim.pk]), {"data": answers()},
                           content_type="application/json")
    assert response.status_code in (200, 201)


def test_the_task_page_shows_the_guides_the_reminder_and_24_questions(study):
    worker = make_user("writer", ANNOTATOR)
    page = logged_in_client(worker).post(reverse("crowd-work", args=[study.slug]), follow=True)
    html = page.content.decode()
    assert page.status_code == 200
    assert html.count('data-kind="free_text"') == 24
    assert "non sono ammesse domande" in html and "Uncertainty" in html and "Esempio: «" in html
    assert "È una domanda aperta" in html and "<video" in html


def test_the_review_queue_shows_the_flag_and_readable_rows(study, curator):
    worker = make_user("writer", ANNOTATOR)
    _submit(study, worker, answers(**{SLOTS[4]: YES_NO_IT, question_writing.override_field(SLOTS[4]): ["open"]}))
    html = logged_in_client(curator).get(reverse("crowd-study-queue", args=[study.slug])).content.decode()
    assert "data-yes-no-flags" in html and f'data-flag="{SLOTS[4]}"' in html and YES_NO_IT in html
    assert question_writing.LABELS[SLOTS[0]] in html and "Save and approve" in html


def test_the_maia_categories_page_links_the_question_studies(study, curator_client, annotator_client):
    html = curator_client.get(reverse("maia-categories")).content.decode()
    assert f'data-study="{study.slug}"' in html
    for name in ("crowd-study-detail", "crowd-study-items", "crowd-work", "crowd-study-queue"):
        assert reverse(name, args=[study.slug]) in html
    assert f"?step_kind={question_writing.STUDY_KIND}" in html
    assert annotator_client.get(reverse("maia-categories")).status_code == 403


def test_the_new_study_page_preselects_the_kind_and_makes_the_curation_version(curator, curator_client):
    page = curator_client.get(reverse("crowd-study-new") + f"?step_kind={question_writing.STUDY_KIND}")
    assert page.status_code == 200
    assert f'value="{question_writing.STUDY_KIND}" selected' in page.content.decode()
    form = {"step_kind": question_writing.STUDY_KIND, "form_schema": "{}", "annotators_per_item": 1,
            "count_accepted_only": "on", "lease_seconds": 3600, "estimated_minutes": 30, "pay_per_item": "0",
            "currency": "EUR", "gold_share": 0, "expert_share": 1, "expert_first": 0, "min_accept_rate": 0,
            "min_reviews_for_exclusion": 3, "recruitment_platform": "none", "required_submissions": 1,
            "name": "Domande dalla pagina"}
    response = curator_client.post(reverse("crowd-study-new"), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    study = Study.objects.get(name="Domande dalla pagina")
    assert response["Location"] == reverse("crowd-study-items", args=[study.slug])
    assert study.form_schema == question_writing.FORM
    assert study.output_version.label == question_writing.CURATION_LABEL


def test_the_demo_opens_an_italian_question_study_once(curator, bunny):
    made = demo.demo_studies(curator)
    assert [s.slug for s in made] == [demo.DEMO_QUESTIONS_SLUG, demo.DEMO_ANSWERS_SLUG]
    study = made[0]
    assert (study.state, study.step_kind) == (Study.State.OPEN, question_writing.STUDY_KIND)
    assert study.items.get().video_id == bunny.pk and "domande" in study.instructions
    assert study.output_version.label == question_writing.CURATION_LABEL
    assert demo.demo_studies(curator) == made and Study.objects.filter(step_kind=study.step_kind).count() == 1


def test_the_command_opens_a_study_over_library_videos(curator, bunny):
    out = StringIO()
    call_command("maia_question_study", "--name", "Domande da riga di comando", "--curator", curator.username,
                 "--video", str(bunny.pk), "--into", "questions-2", "--open", stdout=out)
    study = Study.objects.get(name="Domande da riga di comando")
    assert (study.state, study.step_kind, study.items.get().video_id) == ("open", question_writing.STUDY_KIND, bunny.pk)
    assert study.output_version.label == "questions-2" and "questions-2" in out.getvalue()
    with pytest.raises(CommandError, match="no ready library video #999"):
        call_command("maia_question_study", "--name", "X", "--curator", curator.username, "--video", "999")
    with pytest.raises(CommandError, match="no user"):
        call_command("maia_question_study", "--name", "X", "--curator", "nobody")


def test_the_api_adds_videos_by_id_and_refuses_anything_else(curator, bunny):
    study = question_writing.create_question_study(curator, "Domande via API")
    api = logged_in_client(curator)
    url = reverse("api-study-items", kwargs={"slug": study.slug})
    for bad in ({"title": "x"}, {"video_id": "abc"}, {"video_id": 999}):
        response = api.post(url, [{"external_id": "v", "payload": bad}], content_type="application/json")
        assert response.status_code == 400, (bad, response.content)
    assert study.items.count() == 0
    response = api.post(url, [{"external_id": "v", "payload": {"video_id": bunny.pk}}], content_type="application/json")
    assert response.status_code == 201, response.content
    item = study.items.get()
    assert (item.video_id, item.payload["video"], len(item.payload["categories"])) == (bunny.pk, f"video{bunny.pk}", 12)
    again = api.post(url, [{"external_id": "w", "payload": {"video_id": bunny.pk}}], content_type="application/json")
    assert again.status_code == 400 and "already in this study" in again.json()["details"][0]
    denied = logged_in_client(make_user("worker", ANNOTATOR)).post(
        url, [{"external_id": "z", "payload": {"video_id": bunny.pk}}], content_type="application/json")
    assert denied.status_code == 403


def test_workers_cannot_open_the_review_queue(study):
    worker = make_user("writer", ANNOTATOR)
    _submit(study, worker, answers())
    assert logged_in_client(worker).get(reverse("crowd-study-queue", args=[study.slug])).status_code == 403
