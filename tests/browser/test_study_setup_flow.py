"""A curator sets a study up in the browser — the form builder with its live preview, Markdown
previews, a JSON Lines file checked by a dry run then added, opening the study — and a worker agrees
to its consent page and completes an item."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import ANNOTATOR, CURATOR

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

NEW_SCREENSHOT = Path("/tmp/study_new_page.png")
ITEMS_SCREENSHOT = Path("/tmp/study_items_page.png")
DETAIL_SCREENSHOT = Path("/tmp/study_detail_page.png")
ITEMS = "\n".join(f'{{"external_id": "cap-{n}", "payload": {{"caption": "A dog on a beach, take {n}."}}}}'
                  for n in range(2))


def test_curator_builds_a_study_and_a_worker_completes_an_item(live_server, browser_page, make_user, login, tmp_path):
    from annotation.crowd.models import Study, Submission

    curator, worker = make_user("cora", CURATOR), make_user("wendy", ANNOTATOR)
    page = login(browser_page, curator)

    # 1. The studies page leads to the new-study form.
    page.goto(live_server.url + "/studies/")
    page.get_by_role("link", name="New study").click()
    page.get_by_label("Name", exact=True).fill("Caption check")

    # 2. The form builder: two fields, the preview follows every change.
    page.get_by_label("Type of the new field").select_option("single_choice")
    page.get_by_role("button", name="Add field").click()
    page.get_by_label("Field 1 label").fill("Does the caption fit?")
    page.get_by_label("Field 1 name (stored with the answers)").fill("fits")
    page.get_by_label("Field 1 options").fill("yes\nno\nunsure")
    page.get_by_label("Field 1 explanation").select_option("optional")
    preview = page.locator("[data-form-preview]")
    expect(preview.locator("legend")).to_have_text("Does the caption fit?")
    expect(preview.locator("input[type=radio]")).to_have_count(3)
    expect(preview.locator("textarea")).to_have_count(1)
    page.get_by_label("Type of the new field").select_option("free_text")
    page.get_by_role("button", name="Add field").click()
    page.get_by_label("Field 2 label").fill("A better caption")
    page.get_by_label("Field 2 name (stored with the answers)").fill("better")
    page.get_by_label("Field 2 required").uncheck()
    page.get_by_label("Field 2 at most (characters)").fill("120")
    expect(preview.locator("fieldset")).to_have_count(2)
    expect(preview.locator("textarea[maxlength='120']")).to_have_count(1)

    # 3. Instructions and consent page in Markdown, previewed as the workers will see them.
    page.get_by_label("Instructions").fill("Read **each** caption.")
    expect(page.locator("[data-markdown-preview] strong").first).to_have_text("each")
    page.get_by_label("Consent / introduction page").fill("You agree to take *part*.")
    expect(page.locator("[data-markdown-preview] em")).to_have_text("part")
    page.get_by_label("Annotators per item (k)").fill("2")
    page.screenshot(path=str(NEW_SCREENSHOT), full_page=True)
    page.get_by_role("button", name="Create study").click()

    # 4. Items: a dry run of a file with a problem, then the fixed file added.
    page.wait_for_url("**/studies/caption-check/items/")
    study = Study.objects.get(slug="caption-check")
    assert study.form_schema["fields"][0]["options"] == ["yes", "no", "unsure"]
    assert study.form_schema["fields"][1]["min_length"] == 0 and study.annotators_per_item == 2
    bad, good = tmp_path / "bad.jsonl", tmp_path / "items.jsonl"
    bad.write_text(ITEMS + "\n{oops\n")
    good.write_text(ITEMS + "\n")
    upload = page.locator("form[data-source=file]")
    upload.locator("input[type=file]").set_input_files(str(bad))
    upload.get_by_role("button", name="Dry run").click()
    expect(page.locator(".item-problems tr[data-row='3']")).to_contain_text("not valid JSON")
    assert not study.items.exists()
    page.screenshot(path=str(ITEMS_SCREENSHOT), full_page=True)
    upload = page.locator("form[data-source=file]")
    upload.locator("input[type=file]").set_input_files(str(good))
    upload.get_by_role("button", name="Add items").click()

    # 5. The study page: open it; its report is one click away.
    page.wait_for_url("**/studies/caption-check/")
    expect(page.locator(".messages")).to_contain_text("2 items added")
    expect(page.get_by_role("link", name="Report (agreement, workers, throughput)")).to_be_visible()
    page.get_by_role("button", name="Open", exact=True).click()
    expect(page.locator("h1 .badge")).to_have_text("Open")
    page.screenshot(path=str(DETAIL_SCREENSHOT), full_page=True)
    assert page.js_errors == []

    # 6. A worker agrees to the consent page and completes an item.
    worker_context = page.context.browser.new_context(viewport={"width": 1280, "height": 900})
    worker_context.set_default_timeout(15_000)
    try:
        work = login(worker_context.new_page(), worker)
        work.goto(live_server.url + "/work/caption-check/")
        expect(work.locator("[data-consent] em")).to_have_text("part")
        work.get_by_role("button", name="I agree, start").click()
        expect(work.locator("[data-external-id]")).to_have_text("cap-0")
        work.get_by_role("radio", name="yes", exact=True).check()
        work.get_by_label("A better caption").fill("A dog runs on a sandy beach.")
        with work.expect_response(lambda r: r.url.endswith("/submit/")) as answer:
            work.get_by_role("button", name="Submit").click()
        assert answer.value.status == 201, answer.value.text()
    finally:
        worker_context.close()
    submission = Submission.objects.get()
    assert submission.data["fits"] == "yes" and submission.data["better"] == "A dog runs on a sandy beach."
