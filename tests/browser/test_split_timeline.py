"""The split timeline in a real browser: a curator moves the boundaries with the keyboard, sees the
server's plan follow, splits, and a background worker cuts the five clips the page then lists."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import CURATOR
from tests.conftest import ingest_path

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(150),
    # WhiteNoise warns that STATIC_ROOT was never collected; the live server serves static itself.
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOT = Path("/tmp/split_timeline_page.png")


def part_row(page, name: str):
    return page.locator(f'#plan-parts tr[data-part="{name}"]')


def test_curator_moves_a_boundary_by_keyboard_and_splits(
    live_server, browser_page, celery_worker, media_root, make_user, login, bunny_file
):
    from annotation.models import VideoSplit

    page = browser_page
    curator = make_user("cora", CURATOR)
    video = ingest_path(bunny_file, user=curator)
    login(page, curator)
    page.goto(f"{live_server.url}/library/videos/{video.pk}/split/")

    # The timeline opens on thirds of the video, and the server's plan fills the table in.
    app = page.locator("#split-app")
    expect(app).to_have_attribute("data-state", "ready")
    expect(page.locator("#plan-state")).to_have_text("cut at frames 33 and 66")
    expect(part_row(page, "main").locator('[data-field="frames"]')).to_have_text("33 frames")
    expect(page.locator("#video-facts")).to_contain_text("100 frames at 25 fps")
    expect(page.locator("#thumb-strip")).to_be_visible()
    expect(page.locator("#frames-end [data-caption=after]")).to_have_text("frame 66 · 2.640 s")

    # One frame later with → on the focused end handle: the plan, the inputs and the frames follow.
    end_handle = page.locator("#handle-end")
    end_handle.focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator("#end-frame")).to_have_value("67")
    expect(page.locator("#end-seconds")).to_have_value("2.680")
    expect(end_handle).to_have_attribute("aria-valuenow", "67")
    expect(page.locator("#plan-state")).to_have_text("cut at frames 33 and 67")
    expect(part_row(page, "main").locator('[data-field="frames"]')).to_have_text("34 frames")
    expect(part_row(page, "main").locator('[data-field="seconds"]')).to_have_text("1.36 s")
    expect(part_row(page, "post").locator('[data-field="range"]')).to_have_text("67–99")
    expect(page.locator("#frames-end [data-caption=before]")).to_have_text("frame 66 · 2.640 s")
    expect(page.locator("#frames-end [data-caption=after]")).to_have_text("frame 67 · 2.680 s")
    expect(page.locator("#player-frame")).to_have_text("67")

    # Three frames earlier on the start handle.
    page.locator("#handle-start").focus()
    for _ in range(3):
        page.keyboard.press("ArrowLeft")
    expect(page.locator("#plan-state")).to_have_text("cut at frames 30 and 67")
    expect(part_row(page, "pre").locator('[data-field="seconds"]')).to_have_text("1.20 s")

    # A part under one second: the server refuses the plan, the page says why and will not split.
    page.locator("#end-frame").fill("40")
    page.locator("#end-frame").press("Enter")
    expect(page.locator("#plan-state")).to_have_text("refused")
    expect(page.locator('#plan-warnings li[data-code="refused"]')).to_contain_text("V_main would hold 10 frames")
    expect(page.locator("#part-main")).to_have_class("part too-short")
    expect(page.locator("#split-button")).to_be_disabled()
    page.locator("#end-frame").fill("67")
    page.locator("#end-frame").press("Enter")
    expect(page.locator("#plan-state")).to_have_text("cut at frames 30 and 67")
    expect(page.locator("#split-button")).to_be_enabled()

    with page.expect_response(lambda r: r.url.endswith("/split/create/") and r.request.method == "POST") as answer:
        page.locator("#split-button").click()
    assert answer.value.status == 201, answer.value.text()
    split_id = answer.value.json()["split"]["id"]

    # The worker thread cuts the clips; the page polls the list until the split is done.
    row = page.locator(f'#split-table tr[data-split-id="{split_id}"]')
    expect(row).to_have_attribute("data-status", "done", timeout=60_000)
    expect(row.locator("[data-field=state] .badge")).to_have_text("Done")
    clips = row.locator("a[data-clip]")
    expect(clips).to_have_count(5)
    expect(clips).to_have_text(["V_pre", "V_main", "V_post", "Detective", "full video"])
    expect(row.locator("[data-field=clips]")).to_contain_text("V_main (37 frames, 1.48 s)")
    page.screenshot(path=str(SCREENSHOT), full_page=True)

    split = VideoSplit.objects.get(pk=split_id)
    assert split.status == VideoSplit.Status.DONE
    assert (split.main_start_frame, split.main_end_frame, split.requested_by_id) == (30, 67, curator.pk)
    clip_urls = [clips.nth(i).get_attribute("href") for i in range(5)]
    assert clip_urls == [f"/library/videos/{clip.pk}/" for clip in split.clips().values()]

    clips.nth(1).click()
    page.wait_for_url(f"{live_server.url}{clip_urls[1]}")
    expect(page.get_by_role("heading", level=1)).to_contain_text("V_main")
    assert page.js_errors == []
    assert celery_worker.failures == []


def test_a_flagged_multi_scene_video_is_split_anyway_from_the_list(
    live_server, browser_page, celery_worker, media_root, make_user, login, bunny_bikes_file
):
    from annotation.models import VideoSplit

    page = browser_page
    curator = make_user("cora", CURATOR)
    video = ingest_path(bunny_bikes_file, user=curator)
    login(page, curator)
    page.goto(f"{live_server.url}/library/videos/{video.pk}/split/")

    # The scene cut is drawn and the server warns before anything is split.
    expect(page.locator("#split-app")).to_have_attribute("data-state", "ready")
    expect(page.locator("#timeline .cut")).to_have_count(1)
    expect(page.locator("#timeline .cut")).to_have_attribute("title", "scene cut at frame 75 (3.000 s)")
    expect(page.locator("#video-facts")).to_contain_text("2 scenes")
    expect(page.locator('#plan-warnings li[data-code="multi_scene"]')).to_contain_text("the split will be flagged")
    # the end handle opens at frame 69 (two thirds), 0.24 s before the cut: the plan snaps it to frame 75
    expect(page.locator("#end-frame")).to_have_value("69")
    expect(page.locator("#plan-state")).to_have_text("cut at frames 34 and 75")
    expect(page.locator('#plan-notes li[data-code="snapped"]')).to_contain_text("from frame 69 to the scene cut")
    expect(page.locator("#timeline .snapped-to")).to_have_count(1)

    with page.expect_response(lambda r: r.url.endswith("/split/create/")) as answer:
        page.locator("#split-button").click()
    flagged_id = answer.value.json()["split"]["id"]
    flagged = page.locator(f'#split-table tr[data-split-id="{flagged_id}"]')
    expect(flagged).to_have_attribute("data-status", "flagged", timeout=60_000)
    expect(flagged).to_contain_text("holds 2 scenes")

    with page.expect_response(lambda r: "/resolve/" in r.url) as decided:
        flagged.get_by_role("button", name="Split anyway").click()
    assert decided.value.status == 200, decided.value.text()
    new_id = decided.value.json()["new_split"]
    expect(flagged).to_have_attribute("data-status", "overridden")
    expect(flagged.get_by_role("button")).to_have_count(0)
    anyway = page.locator(f'#split-table tr[data-split-id="{new_id}"]')
    expect(anyway).to_have_attribute("data-status", "done", timeout=60_000)
    expect(anyway.locator("a[data-clip]")).to_have_count(5)
    assert page.js_errors == []

    split = VideoSplit.objects.get(pk=new_id)
    assert split.allow_multi_scene and (split.main_start_frame, split.main_end_frame) == (34, 75)
    assert VideoSplit.objects.get(pk=flagged_id).status == VideoSplit.Status.OVERRIDDEN
