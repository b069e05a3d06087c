"""CVRR-ES QA generation and filtration in a real browser: a curator proposes QA pairs for a captioned
video on /cvrr/qa/ and opens a filtration study over them; an annotator filters the three pairs on the
study's task page (the video, the caption, the dimension with its description, the flag): keeps one,
is refused when removing one without a reason, removes it naming the reason, and fixes the flagged one;
the curator records the answers and finds the kept and fixed pairs in the QA pool and the removal in
the noise report."""

import json
from pathlib import Path

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotation.benchmarks.cvrr import filtration, qa_generation, qa_pool
from config.roles import ANNOTATOR, CURATOR
from generation.models import Proposal
from tests.benchmarks.cvrr.test_qa import (
    CAPTION,
    DIMENSION,
    PAIRS,
    make_video,
    scripted,  # noqa: F401 (fixture)
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOT = Path("/tmp/cvrr_filtration_task.png")
FIXED_QUESTION = "What does the girl do for the old man at the crossing?"


def choose(page, label: str) -> None:
    page.locator("label.choice", has_text=label).locator("input").check()


def submit_and_go_on(page) -> None:
    page.get_by_role("button", name="Submit").click()
    expect(page.locator("#task-result")).to_be_visible()
    page.locator("#next-item").click()


def test_keep_one_fix_one_remove_one_with_a_reason(live_server, browser_page, make_user, login, video,
                                                   scripted, start_work):  # noqa: F811
    curator, annotator = make_user("cora", CURATOR), make_user("ann", ANNOTATOR)
    item = make_video("v1", media=video)
    scripted.REPLIES[CAPTION] = json.dumps(PAIRS)

    page = login(browser_page, curator)
    page.goto(live_server.url + "/cvrr/qa/")
    page.locator(f'tr[data-item-id="{item.pk}"] input[name="item"]').check()
    page.locator('input[name="pairs"]').fill("3")
    page.locator("#start-model").select_option("scripted-qa")  # a registered model
    page.get_by_role("button", name="Propose QA pairs for the selected videos").click()
    expect(page.locator("#start-status .set-job")).to_contain_text("Job #")
    assert Proposal.objects.filter(status="ok").count() == 3

    page.reload()
    page.get_by_role("button", name="Open a filtration study").click()
    expect(page.locator("#sets [data-role='form-message']")).to_contain_text("opened with 3 pair(s)")

    page.context.clear_cookies()
    login(page, annotator)
    start_work(page, filtration.studies().get().slug)
    info = qa_generation.DEFAULT_DIMENSIONS[DIMENSION]
    shown = page.locator(".task-item")
    for text in (CAPTION, info.name, info.description, PAIRS[0]["question"]):
        expect(shown).to_contain_text(text)
    expect(shown.locator("video")).to_have_attribute("src", reverse("media-video-file", kwargs={"pk": video.pk}))

    # the first pair is right: keep it
    choose(page, "Keep")
    submit_and_go_on(page)

    # the second is off topic: a removal without its reason is refused, then it names one
    expect(page.locator(".task-item")).to_contain_text(PAIRS[1]["question"])
    choose(page, "Remove")
    page.get_by_role("button", name="Submit").click()
    expect(page.locator('[data-error-for="reason"]')).to_contain_text("A removal names its reason")
    choose(page, "unrelated to the dimension")
    submit_and_go_on(page)

    # the third contains its answer (flagged): fix the question
    expect(page.locator(".task-item")).to_contain_text(qa_generation.ANSWER_IN_QUESTION_FLAG)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    choose(page, "Fix")
    choose(page, "answer in the question")
    page.locator('textarea[name="corrected_question"]').fill(FIXED_QUESTION)
    page.get_by_role("button", name="Submit").click()
    expect(page.locator("#task-result")).to_be_visible()

    page.context.clear_cookies()
    login(page, curator)
    page.goto(live_server.url + "/cvrr/qa/")
    expect(page.locator('#filtration-studies [data-role="waiting"]')).to_have_text("3")
    page.get_by_role("button", name="Record the answers").click()
    expect(page.locator("#filtration-studies [data-role='form-message']")).to_contain_text("3 decision(s) recorded")

    pool = {record.item.payload["question"]: record for record in qa_pool.records()}
    assert set(pool) == {PAIRS[0]["question"], FIXED_QUESTION}
    assert pool[FIXED_QUESTION].working["source"]["criterion"] == "answer_in_question"
    assert all(record.author == annotator for record in pool.values())

    page.goto(live_server.url + "/cvrr/qa/noise/")
    row = page.locator(f'#noise-report tr[data-dimension="{DIMENSION}"]')
    expect(row.locator('[data-col="kept"]')).to_have_text("1")
    expect(row.locator('[data-col="fixed"]')).to_have_text("1")
    expect(row.locator('[data-col="removed"]')).to_have_text("1")
    expect(row.locator('[data-col="removed-1"]')).to_have_text("1")  # unrelated to the dimension
    expect(row.locator('[data-col="noisy-share"]')).to_have_text("66.7%")
    assert page.js_errors == []
