"""BlackSwanSuite's localization study in a real browser: three annotators find the unexpected event in the
bikes video with the frame-step control (buttons and keys) and mark it; the curator sees the marks and the
suggested split on the study's page and on the video's split timeline, accepts the suggestion, and the split
is recorded with the suggested boundaries (0.8·t and 0.8·duration, 0.17 s trimmed from the start of V_pre and the
end of V_post) and cut by a background worker."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.benchmarks.blackswan import localization_study
from annotation.models import VideoSplit
from config.roles import ANNOTATOR, CURATOR
from tests.conftest import ingest_path

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOT_TASK = Path("/tmp/blackswan_localization_task.png")
SCREENSHOT_TIMELINE = Path("/tmp/blackswan_localization_timeline.png")
FPS = 25


def seek_to_frame(page, frame: int) -> None:
    """Move the player to the middle of `frame`, as a worker scrubbing with the native controls would."""
    page.locator(".task-item video").evaluate(f"(v) => {{ v.pause(); v.currentTime = {(frame + 0.5) / FPS}; }}")
    expect(page.locator('[data-part="now-frame"]')).to_have_text(str(frame))


def test_three_marks_suggest_a_split_the_curator_accepts(
    live_server, browser_page, celery_worker, media_root, make_user, login, bikes, start_work
):
    page = browser_page
    curator = make_user("cora", CURATOR)
    video = ingest_path(bikes, user=curator)
    study = localization_study.create_localization_study(curator, [video], k=3, name="Where is the surprise?")

    # frame where each annotator starts (scrubbing), how they step, and the frame they mark
    plans = [(122, [("button", 1)] * 3, 125), (127, [("key", ",")], 126), (128, [("button", 1)], 129)]
    for index, (start, steps, marked) in enumerate(plans):
        annotator = make_user(f"ann{index}", ANNOTATOR)
        page.context.clear_cookies()
        login(page, annotator)
        start_work(page, study.slug)
        field = page.locator('[data-kind="time_mark"]')
        expect(field).to_be_visible()
        expect(page.locator(".task-item")).to_contain_text("10.000 s (250 frames at 25 fps)")
        seek_to_frame(page, start)
        frame = start
        for how, step in steps:
            if how == "button":
                field.get_by_role("button", name="One frame on ▶").click()
                frame += step
            else:
                page.locator("body").press(step)  # "," steps one frame back
                frame -= 1
            expect(field.locator('[data-part="now-frame"]')).to_have_text(str(frame))
        assert frame == marked
        expect(field.locator('[data-part="now-seconds"]')).to_have_text(f"{marked / FPS:.3f}")
        field.get_by_role("button", name="Mark this moment").click()
        expect(field.locator('input[data-part="seconds"]')).to_have_value(f"{marked / FPS:g}")
        expect(field.locator('[data-part="marked-frame"]')).to_have_text(str(marked))
        if index == 0:
            page.screenshot(path=str(SCREENSHOT_TASK), full_page=True)
        page.get_by_role("button", name="Submit").click()
        expect(page.locator("#task-result")).to_be_visible()

    report = localization_study.localization_report(study)
    [row] = report["videos"]
    assert row["marks"] == [5.0, 5.04, 5.16]
    assert row["time"] == pytest.approx(15.2 / 3) and not row["poor_agreement"]

    # The curator reads the marks on the study's page, then opens the video's split timeline.
    page.context.clear_cookies()
    login(page, curator)
    page.goto(f"{live_server.url}/blackswan/localization/{study.slug}/")
    video_row = page.locator(f'#localization-videos tr[data-video-id="{video.pk}"]')
    expect(video_row.locator('[data-field="marks"]')).to_contain_text("5.000, 5.040, 5.160")
    expect(video_row.locator('[data-field="time"]')).to_contain_text("5.067 s")
    expect(video_row).to_have_attribute("data-poor", "false")
    video_row.get_by_role("link", name="split timeline").click()
    page.wait_for_url(f"{live_server.url}/library/videos/{video.pk}/split/")

    # 0.8 · 5.0667 s = 4.053 s (frame 101) and 0.8 · 10 s = 8 s (frame 200) are where the handles start
    expect(page.locator("#split-app")).to_have_attribute("data-state", "ready")
    expect(page.locator("#suggestion")).to_be_visible()
    expect(page.locator("#suggestion-label")).to_contain_text("suggested from 3 marks of Where is the surprise?")
    expect(page.locator("#suggestion-label")).to_contain_text("agreement: 3 marks")
    expect(page.locator("#suggestion-warning")).to_be_hidden()
    expect(page.locator("#timeline .suggested")).to_have_count(2)
    expect(page.locator("#start-frame")).to_have_value("101")
    expect(page.locator("#end-frame")).to_have_value("200")
    expect(page.locator("#trim-start")).to_have_value("0.17")
    expect(page.locator("#trim-end")).to_have_value("0.17")
    expect(page.locator("#suggestion-parts")).to_contain_text(
        "trimming 0.170 s from the start and 0.170 s from the end")
    expect(page.locator('#plan-parts tr[data-part="pre"] [data-field="range"]')).to_have_text("4–100")
    expect(page.locator('#plan-parts tr[data-part="post"] [data-field="range"]')).to_have_text("200–245")
    expect(page.locator("#video-facts")).to_contain_text(f"boundaries from the localization study {study.slug}")
    expect(page.locator("#plan-state")).to_have_text(re.compile(r"cut at frames \d+ and \d+"))
    page.screenshot(path=str(SCREENSHOT_TIMELINE), full_page=True)

    with page.expect_response(lambda r: r.url.endswith("/split/create/") and r.request.method == "POST") as answer:
        page.get_by_role("button", name="Accept the suggestion").click()
    assert answer.value.status == 201, answer.value.text()
    split_id = answer.value.json()["split"]["id"]
    expect(page.locator("#split-status")).to_contain_text(f"Split #{split_id} queued with the suggested boundaries")

    split = VideoSplit.objects.get(pk=split_id)
    assert split.event_start == pytest.approx(0.8 * 15.2 / 3, abs=1e-6)
    assert split.event_end == pytest.approx(8.0)
    assert (split.trim_start, split.trim_end) == (0.17, pytest.approx(0.17))
    assert split.requested_by_id == curator.pk
    row = page.locator(f'#split-table tr[data-split-id="{split_id}"]')
    expect(row).to_have_attribute("data-status", re.compile("done|flagged"), timeout=60_000)
    expect(row.locator('[data-field="event"]')).to_contain_text("trimmed 0.170 s / 0.170 s")
    assert page.js_errors == []
    assert celery_worker.failures == []
