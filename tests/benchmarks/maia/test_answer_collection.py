"""MAIA answer collection (SPEC §5): the `maia_answers` study kind over a curation version's question
drafts (k = 8, at most 12 questions of a video per worker), its answer checks, the task page, the
pool filled on approval (the 8th answer makes the draft a `question`, a 9th is refused, a rejection
frees the place) and who may create such a study."""

import pytest
from django.urls import reverse

from annotation.benchmarks.maia import answer_collection, stages
from annotation.crowd import assignment, review, submissions
from annotation.crowd.errors import CrowdError, InvalidSubmission
from annotation.crowd.models import Claim, Study, StudyItem
from annotation.curation_models import CurationRecord
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, ItemMedia
from config.roles import ANNOTATOR
from tests.conftest import logged_in_api, logged_in_client, make_user
from tests.frontend.test_study_setup_pages import settings_post

pytestmark = pytest.mark.django_db

ANSWERS = ["In un prato.", "Su un prato verde.", "In mezzo all'erba.", "Vicino agli alberi.", "All'aperto.",
           "Sul prato.", "In un campo erboso.", "Nell'erba.", "Fra i fiori."]


def add_draft(version, video, external_id: str, *, answers=(), category="SpazialeTotale_A",
              question="Dove si trova il coniglio?") -> BenchmarkItem:
    item = BenchmarkItem.objects.create(version=version, external_id=external_id, payload={
        "kind": "question_draft", "video": "bikes", "category": category, "question": question,
        "answers": list(answers)})
    ItemMedia.objects.create(item=item, role="video", video=video)
    CurationRecord.objects.create(item=item, stage=stages.QUESTION_WRITTEN)
    return item


@pytest.fixture
def version(db, curator):
    return BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label="curation-1",
                                           created_by=curator, source=BenchmarkVersion.Source.CURATION)


@pytest.fixture
def draft(version, video):
    return add_draft(version, video, "bikes/SpazialeTotale_A/0")


def answer(study, worker, text):
    claim = assignment.claim_next(study, worker)
    assert claim is not None
    submission, created, _ = submissions.submit(submissions.load_claim(claim.pk), worker, {"answer": text})
    assert created
    return submission


def test_a_study_holds_the_drafts_with_their_video_k_8_and_a_cap_of_12(curator, version, draft, video):
    add_draft(version, video, "full", answers=ANSWERS[:8])  # a full pool is no longer collecting
    study = answer_collection.create_answer_study(curator, version, open_now=True)
    assert study.step_kind == "maia_answers" and study.annotators_per_item == 8
    assert study.max_items_per_video == 12 and study.expert_share == 1.0 and study.count_accepted_only
    assert study.output_version == version
    item, = study.items.all()
    assert item.benchmark_item == draft and item.video == video
    assert item.payload["question"] == "Dove si trova il coniglio?"
    assert item.payload["category_name"] and item.payload["category_definition"]


def test_eight_approved_answers_make_the_draft_a_question_with_its_provenance(curator, draft):
    study = answer_collection.create_answer_study(curator, draft.version, open_now=True)
    workers = [make_user(f"w{n}", ANNOTATOR) for n in range(9)]
    done = [answer(study, worker, text) for worker, text in zip(workers[:8], ANSWERS[:8], strict=True)]
    assert assignment.claim_next(study, workers[8]) is None  # k = 8
    for number, submission in enumerate(done, start=1):
        review.approve(submission, curator)
        draft.refresh_from_db()
        assert len(draft.payload["answers"]) == number
        assert draft.payload["kind"] == ("question" if number == 8 else "question_draft")
    assert draft.payload == {"kind": "question", "video": "bikes", "category": "SpazialeTotale_A",
                             "question": "Dove si trova il coniglio?", "answers": ANSWERS[:8]}
    record = CurationRecord.objects.get(item=draft)
    assert record.stage == stages.POOL_COMPLETE
    assert [(a["worker"], a["submission"], a["answer"]) for a in record.working["answers"]] == [
        (w.pk, s.pk, t) for w, s, t in zip(workers, done, ANSWERS, strict=False)]


def test_a_ninth_approval_is_refused_and_undone(curator, draft):
    study = answer_collection.create_answer_study(curator, draft.version, open_now=True, k=9)
    done = [answer(study, make_user(f"w{n}", ANNOTATOR), text) for n, text in enumerate(ANSWERS)]
    for submission in done[:8]:
        review.approve(submission, curator)
    with pytest.raises(CrowdError, match="already has its 8 answers") as refused:
        review.approve(done[8], curator)
    assert refused.value.status == 409
    assert Claim.objects.get(pk=done[8].claim_id).status == Claim.Status.SUBMITTED
    draft.refresh_from_db()
    assert draft.payload["answers"] == ANSWERS[:8]
    review.reject(done[8], curator, reason="the pool is complete")


def test_a_rejected_answer_frees_its_place(curator, draft):
    study = answer_collection.create_answer_study(curator, draft.version, open_now=True)
    done = [answer(study, make_user(f"w{n}", ANNOTATOR), text) for n, text in enumerate(ANSWERS[:8])]
    review.reject(done[0], curator, reason="not about the video")
    assert StudyItem.objects.get(study=study).open_slots == 1
    late = answer(study, make_user("late", ANNOTATOR), ANSWERS[8])
    for submission in [*done[1:], late]:
        review.approve(submission, curator)
    draft.refresh_from_db()
    assert draft.payload["kind"] == "question" and draft.payload["answers"] == [*ANSWERS[1:8], ANSWERS[8]]


def test_a_worker_answers_at_most_12_questions_of_a_video(curator, version, video):
    for n in range(24):
        add_draft(version, video, f"q{n}", question=f"Domanda {n}?")
    study = answer_collection.create_answer_study(curator, version, open_now=True)
    worker = make_user("w", ANNOTATOR)
    for _ in range(12):
        answer(study, worker, "Pedalano.")
    assert assignment.claim_next(study, worker) is None


@pytest.mark.parametrize(("text", "phrase"), [
    ("", "Write your answer"), ("   ", "Write your answer"), ("Sì.", "not with yes or no"), ("no", "yes or no"),
    ("parola " * 30, "short"), ("x" * 250, "short"),
])
def test_bad_answers_are_refused_with_a_message(curator, draft, text, phrase):
    study = answer_collection.create_answer_study(curator, draft.version, open_now=True)
    worker = make_user("w", ANNOTATOR)
    claim = submissions.load_claim(assignment.claim_next(study, worker).pk)
    with pytest.raises(InvalidSubmission, match=phrase) as refused:
        submissions.submit(claim, worker, {"answer": text})
    assert refused.value.status == 400 and "answer" in refused.value.details


def test_a_bad_answer_through_the_api_is_400(curator, draft):
    study = answer_collection.create_answer_study(curator, draft.version, open_now=True)
    worker = make_user("w", ANNOTATOR)
    claim = assignment.claim_next(study, worker)
    api = logged_in_api(worker)
    response = api.post(reverse("api-claim-submit", args=[claim.pk]), {"data": {"answer": "Sì"}}, format="json")
    assert response.status_code == 400 and "yes or no" in response.content.decode()
    response = api.post(reverse("api-claim-submit", args=[claim.pk]), {"data": {"answer": "In un prato."}},
                        format="json")
    assert response.status_code == 201


def test_the_task_page_shows_the_video_the_question_its_category_and_the_audio_reminder(curator, draft):
    study = answer_collection.create_answer_study(curator, draft.version, open_now=True)
    page = logged_in_client(make_user("w", ANNOTATOR)).post(reverse("crowd-work", args=[study.slug]), follow=True)
    assert page.status_code == 200
    text = page.content.decode()
    assert "<video" in text and "Dove si trova il coniglio?" in text
    assert '<html lang="it">' in text  # the study's pages are Italian by default
    assert "Di che cosa chiede la categoria" in text and "L'audio non viene usato" in text
    assert "La tua risposta (in italiano)" in text and "Invia" in text
    english = answer_collection.create_answer_study(curator, draft.version, open_now=True, language="en")
    text = logged_in_client(make_user("w2", ANNOTATOR)).post(reverse("crowd-work", args=[english.slug]),
                                                             follow=True).content.decode()
    assert "What the category asks about" in text and "audio is not used" in text
    assert "Your answer (in Italian)" in text


def test_only_curators_create_answer_studies_from_unfrozen_maia_versions(annotator, curator, draft, version):
    with pytest.raises(CrowdError) as refused:
        answer_collection.create_answer_study(annotator, version)
    assert refused.value.status == 403
    other = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="cvqa"), label="x")
    with pytest.raises(CrowdError) as refused:
        answer_collection.create_answer_study(curator, other)
    assert refused.value.status == 404
    empty = BenchmarkVersion.objects.create(benchmark=version.benchmark, label="empty")
    with pytest.raises(CrowdError) as refused:
        answer_collection.create_answer_study(curator, empty)
    assert refused.value.status == 409
    assert not Study.objects.exists()


def test_the_study_page_makes_an_answer_study_and_items_are_added_by_question(curator, curator_client, version,
                                                                              draft, video):
    response = curator_client.post(reverse("crowd-study-new"), settings_post(
        name="Risposte", step_kind="maia_answers", form_schema="{}", output_version=str(version.pk),
        annotators_per_item="8", max_items_per_video="12", expert_share="1"))
    assert response.status_code == 302, response.content.decode()[:3000]
    study = Study.objects.get(slug="risposte")
    assert study.items.get().benchmark_item == draft
    second = add_draft(version, video, "second", question="Che cosa fa il ciclista?")
    assert answer_collection.item_row(study, {"payload": {"question_item": second.pk}}) is None
    assert "already has" in answer_collection.item_row(study, {"payload": {"question_item": draft.pk}})
    assert "not a question" in answer_collection.item_row(study, {"payload": {"question_item": 10**6}})
    assert "MAIA questions" in answer_collection.item_row(study, {"payload": {"video": 1}})
