"""MAIA question writing in a real browser: a worker reads the category guides beside the video, writes
24 questions, gets a yes/no question refused next to its field (in Italian), rewrites it and submits; a
second worker keeps a refused question by ticking "open question"; the curator sees that flag in the
review queue and approves, and the questions become question drafts of the curation version."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.benchmarks.maia import question_writing
from annotation.benchmarks.maia.yes_no import YES_NO_MESSAGE
from annotation.crowd.models import Submission
from annotation.curation_models import CurationRecord
from annotation.models import BenchmarkItem
from config.roles import ANNOTATOR, CURATOR
from tests.conftest import ingest_path

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOT = Path("/tmp/maia_question_queue.png")
TASK_SCREENSHOT = Path("/tmp/maia_question_task.png")
YES_NO = "Il coniglio è felice?"


def _write(page, slots, questions):
    for slot in slots:
        page.locator(f'[data-field="{slot}"] textarea').fill(questions[slot])


def test_a_worker_writes_questions_and_a_curator_approves(live_server, browser_page, make_user, login,
                                                          bigbuckbunny, bikes, start_work):

    curator = make_user("cora", CURATOR)
    videos = [ingest_path(bigbuckbunny, user=curator), ingest_path(bikes, user=curator)]
    study = question_writing.create_question_study(curator, "MAIA: scrivi le domande", videos=videos,
                                                   open_now=True)
    slots = question_writing.SLOT_NAMES
    questions = {slot: f"Che cosa si vede nella scena numero {n}?" for n, slot in enumerate(slots, 1)}

    # 1. A worker writes 24 questions; a yes/no question is refused next to its field, then rewritten.
    page = login(browser_page, make_user("ada", ANNOTATOR))
    start_work(page, study.slug)
    expect(page.locator("video")).to_have_count(1)
    expect(page.locator('[data-payload-key="category-incertezza"]')).to_contain_text("Uncertainty")
    expect(page.get_by_text("non sono ammesse domande sull'audio").first).to_be_visible()
    _write(page, slots, {**questions, slots[3]: YES_NO})
    page.get_by_role("button", name="Invia").click()
    expect(page.locator(f'[data-error-for="{slots[3]}"]')).to_have_text(YES_NO_MESSAGE["it"])
    page.screenshot(path=str(TASK_SCREENSHOT), full_page=True)
    assert Submission.objects.count() == 0
    page.locator(f'[data-field="{slots[3]}"] textarea').fill("Come si sente il coniglio?")
    with page.expect_response(lambda r: r.url.endswith("/submit/")) as answer:
        page.get_by_role("button", name="Invia").click()
    assert answer.value.status == 201, answer.value.text()
    written = Submission.objects.get(claim__worker__username="ada")
    assert written.data[slots[3]] == "Come si sente il coniglio?"
    assert page.js_errors == []

    # 2. A second worker keeps a question the check refuses by ticking "open question".
    other = browser_page.context.browser.new_context(viewport={"width": 1280, "height": 900})
    other.set_default_timeout(15_000)
    try:
        second = login(other.new_page(), make_user("bruno", ANNOTATOR))
        start_work(second, study.slug)
        _write(second, slots, {**questions, slots[5]: YES_NO})
        second.locator(f'[data-field="{question_writing.override_field(slots[5])}"] input').check()
        with second.expect_response(lambda r: r.url.endswith("/submit/")) as answer:
            second.get_by_role("button", name="Invia").click()
        assert answer.value.status == 201, answer.value.text()
    finally:
        other.close()
    flagged = Submission.objects.get(claim__worker__username="bruno")

    # 3. The curator sees the flag in the review queue and approves both.
    curator_context = browser_page.context.browser.new_context(viewport={"width": 1400, "height": 900})
    curator_context.set_default_timeout(15_000)
    try:
        errors = []
        review = curator_context.new_page()
        review.on("pageerror", lambda exc: errors.append(str(exc)))
        review = login(review, curator)
        review.goto(f"{live_server.url}/maia/categories/")
        review.locator(f'tr[data-study="{study.slug}"]').get_by_role("link", name="review queue").click()
        review.goto(f"{live_server.url}/studies/{study.slug}/queue/?queue=all&state=pending")
        row = review.locator(f'tr[data-submission-id="{flagged.pk}"]')
        expect(row.locator("[data-yes-no-flags]")).to_contain_text(YES_NO)
        expect(review.locator(f'tr[data-submission-id="{written.pk}"] [data-yes-no-flags]')).to_have_count(0)
        review.screenshot(path=str(SCREENSHOT), full_page=True)
        for submission in (written, flagged):
            mine = review.locator(f'tr[data-submission-id="{submission.pk}"]')
            with review.expect_response(lambda r: "/review/" in r.url) as decided:
                mine.get_by_role("button", name="Approve").click()
            assert decided.value.status == 200, decided.value.text()
            expect(mine.locator("[data-decision-state]")).to_have_text("Approved")
        assert errors == []
    finally:
        curator_context.close()

    drafts = BenchmarkItem.objects.filter(version=study.output_version, payload__kind="question_draft")
    assert drafts.count() == 48
    override = CurationRecord.objects.get(item__payload__question=YES_NO).working["yes_no_override"]
    assert (override["by"], override["approved_by"]) == ("bruno", "cora")
