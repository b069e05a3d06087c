"""A curator chooses a CVRR-ES video's caption in a real browser: finds the video with both captions in on
/cvrr/captions/, sees the two captions side by side with the video, picks one, then merges them into an
edited text, and finds the caption and its provenance on the page and in the video's item."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.benchmarks.cvrr import captions, stages, video_pool
from annotation.crowd import assignment, submissions
from annotation.curation_models import CurationRecord
from config.roles import ANNOTATOR, CURATOR
from tests.benchmarks.cvrr.test_captions import CAPTION_A, CAPTION_B, MERGED
from tests.conftest import ingest_path

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOT = Path("/tmp/cvrr_caption_page.png")


def _submit(study, worker, text):
    claim = submissions.load_claim(assignment.claim_next(study, worker).pk)
    submission, created, _ = submissions.submit(claim, worker, {"caption": text})
    assert created
    return submission


def test_curator_picks_then_merges_a_caption(live_server, browser_page, make_user, login, bigbuckbunny):
    curator = make_user("cora", CURATOR)
    video = ingest_path(bigbuckbunny, user=curator)
    item = video_pool.assign_video(curator, video, "interpretation_of_visual_context", "internet",
                                   "title: Big Buck Bunny")
    study = captions.create_caption_study(curator, "Caption the videos", open_now=True)
    first = _submit(study, make_user("writer1", ANNOTATOR), CAPTION_A)
    second = _submit(study, make_user("writer2", ANNOTATOR), CAPTION_B)

    page = login(browser_page, curator)
    page.goto(live_server.url + "/cvrr/")
    page.get_by_role("link", name="Captioning").click()
    row = page.locator(f'#ready tr[data-item-id="{item.pk}"]')
    expect(row).to_contain_text("not chosen yet")
    row.get_by_role("link").click()

    expect(page.locator("video")).to_have_count(1)
    expect(page.locator(f'[data-submission="{first.pk}"]')).to_contain_text(CAPTION_A)
    expect(page.locator(f'[data-submission="{second.pk}"]')).to_contain_text(CAPTION_B)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    page.locator(f'[data-pick="{first.pk}"]').click()
    expect(page.locator("[data-chosen]")).to_have_text(CAPTION_A)
    expect(page.locator("#chosen-provenance")).to_contain_text(f"Picked by cora from submission #{first.pk}")
    expect(page.locator("#stage")).to_have_text("Caption chosen")

    page.locator("#merged-text").fill("Too short.")
    page.locator("#save-merged").click()
    expect(page.locator("#caption-error")).to_contain_text("The merged caption")
    item.refresh_from_db()
    assert item.payload["caption"] == CAPTION_A

    page.locator("#merged-text").fill(MERGED)
    page.locator("#save-merged").click()
    expect(page.locator("[data-chosen]")).to_have_text(MERGED)
    expect(page.locator("#chosen-provenance")).to_contain_text("Merged by cora")
    item.refresh_from_db()
    assert item.payload["caption"] == MERGED
    record = CurationRecord.objects.get(item=item)
    assert record.stage == stages.CAPTIONED
    assert record.working["caption"]["how"] == "merged"
    assert record.working["caption"]["from"] == sorted([first.pk, second.pk])
    assert not page.js_errors
