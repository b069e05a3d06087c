"""MAIA answer collection in a real browser: a worker opens the answer-collection task page, in Italian
(the video, the question with its category, the reminder that the audio is not used), is refused a yes/no
answer in Italian, writes
the question's 8th answer, a curator approves it in the review queue, which completes the pool; the
curator runs the pool checks from the pool report (a forced contradiction) and finds the pool on the
review page."""

import pytest
from playwright.sync_api import expect

from annotation.benchmarks.maia import answer_collection, pool_checks, stages
from annotation.curation_models import CurationRecord
from annotation.models import Benchmark, BenchmarkItem, BenchmarkVersion, ItemMedia
from config.roles import ANNOTATOR, CURATOR
from tests.benchmarks.maia.test_pool_checks import AGREEING, ODD_ANSWER, QUESTION, ForcedScorer
from tests.conftest import ingest_path
from tests.registry_support import register_model

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]


def test_a_worker_answers_a_curator_approves_and_the_pool_is_checked(live_server, browser_page, make_user, login,
                                                                      bikes, settings, monkeypatch, start_work):
    curator = make_user("cora", CURATOR)
    worker = make_user("wanda", ANNOTATOR)
    video = ingest_path(bikes, user=curator)
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label="curation-b",
                                              created_by=curator, source=BenchmarkVersion.Source.CURATION)
    draft = BenchmarkItem.objects.create(version=version, external_id="bikes/SpazialeTotale_A/0", payload={
        "kind": "question_draft", "video": "bikes", "category": "SpazialeTotale_A", "question": QUESTION,
        "answers": AGREEING[:7]})
    ItemMedia.objects.create(item=draft, role="video", video=video)
    CurationRecord.objects.create(item=draft, stage=stages.QUESTION_WRITTEN)
    study = answer_collection.create_answer_study(curator, version, name="Risposte MAIA", open_now=True)

    # 1. The worker reads the question, its category and the reminder, and writes an answer.
    page = login(browser_page, worker)
    start_work(page, study.slug)
    expect(page.locator("video")).to_have_count(1)
    expect(page.get_by_text(QUESTION)).to_be_visible()
    expect(page.get_by_text("Di che cosa chiede la categoria")).to_be_visible()
    expect(page.locator("html")).to_have_attribute("lang", "it")
    expect(page.get_by_text("L'audio non viene usato")).to_be_visible()
    box = page.get_by_label("La tua risposta (in italiano)")
    box.fill("Sì.")
    submit = page.get_by_role("button", name="Invia")
    submit.click()
    expect(page.locator('[data-error-for="answer"]')).to_contain_text("non con sì o no")
    box.fill(ODD_ANSWER)
    with page.expect_response(lambda r: r.url.endswith("/submit/")) as answered:
        submit.click()
    assert answered.value.status == 201, answered.value.text()
    expect(page.get_by_role("button", name="Elemento successivo")).to_be_visible()
    submission = study.claims.get(worker=worker).submission
    assert submission.data == {"answer": ODD_ANSWER}

    # 2. A curator approves it: the pool has its 8 answers.
    context = page.context.browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    try:
        curator_page = context.new_page()
        login(curator_page, curator)
        curator_page.goto(f"{live_server.url}/studies/{study.slug}/queue/?queue=all&state=pending")
        row = curator_page.locator(f'tr[data-submission-id="{submission.pk}"]')
        expect(row).to_contain_text(ODD_ANSWER)
        with curator_page.expect_response(lambda r: "/review/" in r.url) as decided:
            row.get_by_role("button", name="Approve").click()
        assert decided.value.status == 200, decided.value.text()
        expect(row.locator("[data-decision-state]")).to_have_text("Approved")
        draft.refresh_from_db()
        assert draft.payload["kind"] == "question" and draft.payload["answers"] == [*AGREEING[:7], ODD_ANSWER]
        assert CurationRecord.objects.get(item=draft).stage == stages.POOL_COMPLETE

        # 3. The pool checks run from the report; the contradicting pool waits on the review page.
        settings.MAIA_NLI_MODEL = "forced"
        register_model("forced", backend="nli")  # the setting names a registered NLI model
        monkeypatch.setattr(pool_checks, "load_scorer", lambda model_id=None: ForcedScorer())
        curator_page.goto(f"{live_server.url}/maia/versions/{version.pk}/pools/")
        curator_page.get_by_role("button", name="Run pool checks").click()
        expect(curator_page.get_by_text("Pool checks queued")).to_be_visible()
        expect(curator_page.locator("#check-jobs")).to_contain_text("1 with a contradiction")
        curator_page.get_by_role("link", name="Review queue").click()
        pool = curator_page.locator(f'[data-item="{draft.external_id}"]')
        expect(pool).to_contain_text(ODD_ANSWER)
        expect(pool.get_by_role("button", name="Confirm contradiction")).to_be_visible()
        assert CurationRecord.objects.get(item=draft).stage == stages.POOL_CHECKED
    finally:
        context.close()
    assert not page.js_errors
