"""A crowd worker's round trip in a real browser: Prolific link → item → autosaved draft → reload
→ submit; a curator approves it in the review queue; the worker's next visit gets another item."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import CURATOR

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    # WhiteNoise warns that STATIC_ROOT was never collected; the live server serves static itself.
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

TASK_SCREENSHOT = Path("/tmp/crowd_task_page.png")
QUEUE_SCREENSHOT = Path("/tmp/crowd_queue_page.png")
FORM = {"fields": [
    {"name": "description", "type": "free_text", "label": "Describe the picture in one sentence.",
     "min_length": 5, "max_length": 300},
    {"name": "person", "type": "single_choice", "label": "Is there a person in the picture?",
     "options": ["yes", "no"], "explanation": "optional"},
    {"name": "clarity", "type": "likert", "label": "How clear is the main subject?", "min": 1, "max": 5,
     "labels": {"1": "not at all", "5": "perfectly clear"}},
]}
PID = "5f1e2d3c4b5a69788796a5b4"


@pytest.fixture
def study(transactional_db):
    from annotation.crowd import assignment
    from annotation.crowd.models import Study

    study = Study.objects.create(
        name="Describe pictures", slug="describe-pictures", form_schema=FORM, annotators_per_item=1,
        state=Study.State.OPEN, instructions="Look at the item and **answer all questions**.\n\n- be short\n- be exact",
        estimated_minutes=1, pay_per_item="0.20", currency="GBP", completion_code="DONE-123",
        recruitment_platform=Study.Recruitment.PROLIFIC, platform_study_id="s1",
    )
    assignment.add_items(study, [
        {"external_id": f"pic-{n}", "payload": {"title": f"Picture {n}", "caption": f"A street scene, take {n}."}}
        for n in range(3)
    ])
    return study


def test_prolific_worker_round_trip_with_curator_approval(live_server, browser_page, make_user, login, study,
                                                          start_work):
    from annotation.crowd.models import Claim, Draft, Submission

    page = browser_page
    work_url = f"{live_server.url}/work/{study.slug}/"

    # 1. The worker arrives from Prolific and gets an item.
    page.goto(f"{live_server.url}/crowd/prolific/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID=s1&SESSION_ID=x1")
    page.wait_for_url(work_url)
    assert not Claim.objects.exists()  # the page claims nothing until its button is pressed
    start_work(page)
    first_item = page.locator("[data-external-id]").inner_text()
    assert first_item.startswith("pic-")
    expect(page.get_by_role("heading", name="Describe pictures")).to_be_visible()
    expect(page.locator(".instructions strong")).to_have_text("answer all questions")

    # 2. Typing saves a draft after a short pause.
    text = page.get_by_label("Describe the picture in one sentence.")
    text.click()
    text.press_sequentially("A red bicycle leans on a wall.")
    expect(page.locator("#save-state")).to_have_text("Saved")
    claim = Claim.objects.get(worker__username=f"prolific-{PID}", status=Claim.Status.ACTIVE)
    assert Draft.objects.get(claim=claim).data["description"] == "A red bicycle leans on a wall."

    # 3. A reload shows the same item with the draft restored.
    page.reload()
    expect(page.locator("[data-external-id]")).to_have_text(first_item)
    expect(text).to_have_value("A red bicycle leans on a wall.")
    expect(page.locator(".char-count [data-count]").first).to_have_text("30")
    page.get_by_role("radio", name="3", exact=True).check()  # the likert scale
    expect(page.locator("#save-state")).to_have_text("Saved")
    page.screenshot(path=str(TASK_SCREENSHOT), full_page=True)

    # 4. Submitting with a missing answer shows the server's message next to the field.
    submit = page.get_by_role("button", name="Submit")
    submit.click()
    expect(page.locator('[data-error-for="person"]')).to_have_text("choose one of the options")
    assert not Submission.objects.exists()

    # 5. A complete answer goes in once, even on a double click.
    submits = []
    page.on("request", lambda r: submits.append(r.url) if r.url.endswith("/submit/") else None)
    page.get_by_role("radio", name="no", exact=True).check()
    page.get_by_role("radio", name="no", exact=True).press("Enter")  # Enter in the form never submits
    text.press("Enter")
    text.press("Backspace")
    with page.expect_response(lambda r: r.url.endswith(f"/api/claims/{claim.pk}/submit/")) as answer:
        submit.dblclick()
    assert answer.value.status == 201, answer.value.text()
    expect(page.get_by_role("button", name="Next item")).to_be_focused()
    assert len(submits) == 1
    submission = Submission.objects.get()
    assert submission.claim_id == claim.pk
    assert submission.data["description"] == "A red bicycle leans on a wall."
    assert submission.data["person"] == "no" and submission.data["clarity"] == 3
    assert submission.active_seconds > 0

    # 6. A curator approves it in the review queue (their own browser context).
    curator = make_user("cora", CURATOR)
    curator_context = page.context.browser.new_context(viewport={"width": 1280, "height": 900})
    curator_context.set_default_timeout(15_000)
    try:
        review_page = curator_context.new_page()
        login(review_page, curator)
        review_page.goto(f"{live_server.url}/studies/{study.slug}/queue/?queue=all&state=pending")
        row = review_page.locator(f'tr[data-submission-id="{submission.pk}"]')
        expect(row).to_contain_text("A red bicycle leans on a wall.")
        expect(row).to_contain_text(f"prolific-{PID}")
        review_page.screenshot(path=str(QUEUE_SCREENSHOT), full_page=True)
        # rejecting without a reason is refused before anything is sent
        row.get_by_role("button", name="Reject").click()
        expect(row.locator("[data-row-error]")).to_have_text("A rejection needs a reason.")
        with review_page.expect_response(lambda r: "/review/" in r.url) as decided:
            row.get_by_role("button", name="Approve").click()
        assert decided.value.status == 200, decided.value.text()
        expect(row.locator("[data-decision-state]")).to_have_text("Approved")
    finally:
        curator_context.close()
    claim.refresh_from_db()
    assert claim.status == Claim.Status.APPROVED

    # 7. Back in the worker's browser, the next visit offers the next item, a different one.
    start_work(page, study.slug)
    second_item = page.locator("[data-external-id]").inner_text()
    assert second_item.startswith("pic-") and second_item != first_item
    expect(page.get_by_label("Describe the picture in one sentence.")).to_have_value("")
    assert page.js_errors == []
