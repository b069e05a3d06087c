"""A curator reviews a submission in a real browser: the picture the worker saw is shown beside the
answers, the answers are corrected in a form shaped like them (no JSON), and the queue's counters
follow the decision without a reload."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import ANNOTATOR, CURATOR

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOT = Path("/tmp/review_queue_media.png")
FORM = {"fields": [
    {"name": "caption", "type": "free_text", "label": "Describe the picture.", "min_length": 5, "max_length": 200},
    {"name": "person", "type": "single_choice", "label": "Is there a person?", "options": ["yes", "no"]},
]}


@pytest.fixture
def submission(transactional_db, media_root, astronaut, make_user):
    from annotation.crowd import assignment, submissions
    from tests.conftest import create_study, ingest_path

    image = ingest_path(astronaut)
    study = create_study("pictures", form=FORM, items=0,
                         extra_rows=[{"external_id": "pic-1", "payload": {"n": 1}, "image": image}])
    worker = make_user("wanda", ANNOTATOR)
    claim = assignment.claim_next(study, worker)
    found, _, _ = submissions.submit(claim, worker, {"caption": "A man in a suit.", "person": "no"}, active_seconds=4)
    return found


def test_a_curator_sees_the_picture_edits_through_the_form_and_the_counters_follow(
        live_server, browser_page, make_user, login, submission):
    from annotation.crowd.models import Submission

    page = login(browser_page, make_user("cora", CURATOR))
    page.goto(f"{live_server.url}/studies/{submission.claim.study.slug}/queue/?queue=all&state=pending")
    row = page.locator(f'tr[data-submission-id="{submission.pk}"]')
    picture = row.locator(".review-media img")
    expect(picture).to_be_visible()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=picture.element_handle())
    expect(page.locator('[data-pending-count="all"]')).to_have_text("1")
    expect(page.locator('[data-state-count="approved"]')).to_have_text("0")
    page.evaluate("window.__sameDocument = true")

    row.get_by_text("Edit and approve").click()
    form = row.locator("[data-edit-form]")
    form.get_by_label("Describe the picture.").fill("An astronaut in a white suit.")
    form.get_by_label("yes").check()
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    with page.expect_response(lambda r: "/review/" in r.url) as decided:
        form.get_by_role("button", name="Save and approve").click()
    assert decided.value.status == 200

    expect(row.locator("[data-decision-state]")).to_have_text("Approved")
    expect(page.locator('[data-pending-count="all"]')).to_have_text("0")
    expect(page.locator('[data-state-count="pending"]')).to_have_text("0")
    expect(page.locator('[data-state-count="approved"]')).to_have_text("1")
    assert page.evaluate("window.__sameDocument") is True  # no reload
    assert page.js_errors == []
    submission.refresh_from_db()
    assert submission.review_state == Submission.Review.APPROVED
    assert submission.reviewed_data == {"caption": "An astronaut in a white suit.", "person": "yes"}
