"""A curator augments an NL-EYE triplet's scenes into image prompts in a real browser: picks the triplet
and a model on /nleye/triplets/, sees the job start in place, finds the proposal in the proposals queue
with the word that changed ("boy" → "teenager") struck out, corrects it, and finds the corrected prompts
and their provenance on the triplet's page."""

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import CURATOR
from tests.benchmarks.nleye.test_augmentation import (
    CHANGED,
    GOOD,
    SCENES,
    make_triplet,
    pool_version,
    record_of,
    scripted,  # noqa: F401 (fixture)
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOT = Path("/tmp/nleye_augmentation_queue.png")
TRIPLET_SCREENSHOT = Path("/tmp/nleye_triplet_page.png")


def test_curator_augments_checks_the_diff_corrects_and_sees_the_prompts(live_server, browser_page, make_user,
                                                                       login, scripted):  # noqa: F811
    curator = make_user("cora", CURATOR)
    triplet = make_triplet(pool_version(), "t-1")
    scripted.REPLIES[SCENES["premise"]] = json.dumps(CHANGED)

    page = login(browser_page, curator)
    page.goto(live_server.url + "/nleye/triplets/")
    page.locator(f'tr[data-item-id="{triplet.pk}"] input[name="item"]').check()
    page.locator("#start-model").select_option("scripted-augmenter")  # a registered model
    page.get_by_role("button", name="Propose prompts for the selected triplets").click()
    expect(page.locator("#start-status .set-job")).to_contain_text("Job #")

    page.goto(live_server.url + "/generation/?kind=nleye_prompts")
    premise = page.locator('[data-compare="premise"]')
    expect(premise.locator("del")).to_have_text("boy")
    expect(premise.locator('[data-role="removed"]')).to_have_text("Dropped or changed: boy")
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    page.locator("summary", has_text="Edit").click()
    page.locator('[name="field_premise"]').fill(GOOD["premise"])
    page.get_by_role("button", name="Save the correction").click()
    expect(page.locator('[data-role="outcome"]')).to_have_text("Corrected")
    assert record_of(triplet).working["prompts"]["premise"] == GOOD["premise"]

    page.goto(live_server.url + f"/nleye/triplets/{triplet.pk}/")
    expect(page.locator("#stage")).to_have_text("Prompts approved")
    expect(page.locator('[data-prompt="premise"]')).to_contain_text(GOOD["premise"])
    expect(page.locator("#provenance")).to_contain_text("corrected by cora")
    page.screenshot(path=str(TRIPLET_SCREENSHOT), full_page=True)
