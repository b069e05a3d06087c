"""A curator decides model proposals in the queue (/generation/) in a real browser: the picture a
caption was made from is shown beside it; one proposal accepted, one corrected through the form of
its fields, one rejected (first without a reason: the page shows why it is refused), and two
accepted at once with the bulk bar. Every answer shows in place, without a reload."""

from contextlib import nullcontext
from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import CURATOR
from generation import proposals
from generation.models import Proposal
from tests.frontend.test_proposals_queue import FACT_OK, IMAGE_PROMPT, fact_set, scripted  # noqa: F401 (fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
    pytest.mark.usefixtures("scripted"),
]

SCREENSHOT = Path("/tmp/proposals_queue_page.png")


def no_capture(**kwargs):
    return nullcontext()  # Celery is eager and a transactional test commits at once: jobs run inline


def test_curator_accepts_corrects_rejects_and_bulk_accepts(live_server, browser_page, make_user, login, image,
                                                          scripted):  # noqa: F811 (the imported fixture)
    from annotation import proposal_media

    curator = make_user("cora", CURATOR)
    scripted.REPLIES[IMAGE_PROMPT] = "An astronaut holds a helmet."
    proposals.start_proposals("caption", proposal_media.library_entries([], [image.pk]), user=curator,
                              backend="scripted", model_id="scripted/captioner", name="Library captions")
    facts = fact_set(scripted, no_capture, {"Cups.": FACT_OK, "Noise.": "not json",
                                            "Dogs.": '{"statement": "A dog runs.", "label": false, "objects": 1}'})
    bulk = fact_set(scripted, no_capture, {"Birds.": FACT_OK, "Fish.": FACT_OK}, model_id="scripted/bulk")
    by_caption = {p.inputs["caption"]: p for p in Proposal.objects.filter(proposal_set__in=[facts, bulk])}

    page = login(browser_page, curator)
    page.goto(live_server.url + "/generation/")

    def row(caption):
        return page.locator(f'tr[data-proposal-id="{by_caption[caption].pk}"]')

    caption_row = page.locator("section.proposal-set", has_text="Library captions").locator("tbody tr")
    caption_row.locator("img").scroll_into_view_if_needed()  # the page loads pictures lazily
    expect(caption_row.locator("img")).to_be_visible()
    caption_row.locator("img").evaluate("img => img.decode()")  # resolves once the picture is loaded
    assert caption_row.locator("img").evaluate("img => img.naturalWidth") > 0
    expect(caption_row).to_contain_text("An astronaut holds a helmet.")

    row("Cups.").get_by_role("button", name="Accept").click()
    expect(row("Cups.").locator('[data-role="outcome"]')).to_have_text("Accepted")

    row("Dogs.").locator("summary", has_text="Edit").click()
    row("Dogs.").locator('[name="field_statement"]').fill("A dog sleeps on a sofa.")
    row("Dogs.").get_by_role("button", name="Save the correction").click()
    expect(row("Dogs.").locator('[data-role="outcome"]')).to_have_text("Corrected")
    expect(row("Dogs.").locator('[data-field-name="statement"]')).to_have_text("A dog sleeps on a sofa.")

    row("Noise.").get_by_role("button", name="Reject").click()
    expect(row("Noise.").locator('[data-role="form-error"]')).to_have_text("A rejection needs a reason.")
    row("Noise.").get_by_placeholder("reason").fill("The model answered no JSON.")
    row("Noise.").get_by_role("button", name="Reject").click()
    expect(row("Noise.").locator('[data-role="outcome"]')).to_have_text("Rejected")
    expect(row("Noise.").locator('[data-role="form-error"]')).to_have_text("")

    row("Birds.").locator('input[name="proposal"]').check()
    row("Fish.").locator('input[name="proposal"]').check()
    expect(page.locator('[data-role="selected-count"]')).to_have_text("2 selected")
    page.get_by_role("button", name="Accept selected").click()
    expect(page.locator('#bulk-form [data-role="form-message"]')).to_have_text("2 proposal(s) accepted.")
    for caption in ("Birds.", "Fish."):
        expect(row(caption).locator('[data-role="outcome"]')).to_have_text("Accepted")
    page.screenshot(path=str(SCREENSHOT), full_page=True)

    outcomes = {p.inputs["caption"]: (p.outcome, p.final_fields)
                for p in Proposal.objects.filter(proposal_set__in=[facts, bulk])}
    assert outcomes["Cups."][0] == outcomes["Birds."][0] == outcomes["Fish."][0] == "accepted"
    assert outcomes["Dogs."] == ("corrected", {"statement": "A dog sleeps on a sofa.", "label": False, "objects": 1})
    assert outcomes["Noise."] == ("rejected", None)
    assert page.js_errors == []
