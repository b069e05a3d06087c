"""An annotator walks BlackSwanSuite's three steps on a real video in Chromium: Forecaster (only V_pre),
Detective (V_pre and V_post, the middle a marked gap), Reporter (the whole video). Before each step the
page holds no URL of a hidden part, and asking for one directly with the page's own cookies is refused."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.benchmarks.blackswan import splits, staged
from annotation.crowd.models import Claim, Submission
from annotation.models import VideoSplit
from config.roles import ANNOTATOR, CURATOR
from tests.conftest import ingest_path
from tests.generation.test_splitting import make_stamped_clip

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOTS = Path("/tmp")
PARTS = ("pre", "main", "post", "detective", "full")
SCENARIOS = ["The bunny steps out and stretches in the sun.", "A butterfly lands on the bunny's nose.",
             "The bunny trips over a root and rolls down the hill."]


@pytest.fixture
def split(transactional_db, make_user, tmp_path, bigbuckbunny):
    """4 s of Big Buck Bunny (160x90), split by the library's job at 1.2 s and 2.4 s."""

    curator = make_user("cora", CURATOR)
    video = ingest_path(make_stamped_clip(bigbuckbunny, tmp_path / "bunny.mp4"), user=curator)
    split = splits.split_library_video(video, 1.2, 2.4, curator)  # the job runs when this commits
    split.refresh_from_db()
    assert split.status == VideoSplit.Status.DONE, split.message
    split.curator = curator
    return split


@pytest.fixture
def study(split):

    return staged.create_staged_study([split], "Unexpected events", split.curator, open_now=True,
                                      instructions="Paid per video. Take your time.", expert_share=0.0,
                                      expert_first=0, pay_per_item="0.85")


def clip_urls(split) -> dict[str, list[str]]:
    """Every URL a clip (or the parent video) can be fetched by: its file and its poster."""
    ids = {"parent": split.video_id, **{part: getattr(split, f"{part}_video_id") for part in PARTS}}
    return {part: [f"/media/files/videos/{pk}/", f"/media/files/videos/{pk}/poster/"] for part, pk in ids.items()}


def check_reach(page, base: str, split, reachable: set[str]) -> None:
    """The page names no hidden clip, and the page's own session gets exactly the reachable ones."""
    html = page.content()
    sources = page.eval_on_selector_all("video", "nodes => nodes.map(n => n.getAttribute('src'))")
    for part, urls in clip_urls(split).items():
        if part not in reachable:
            assert not any(url in html for url in urls), f"the page names the hidden {part} clip"
        for url in urls:
            for headers in ({}, {"Range": "bytes=0-1023"}):
                response = page.request.get(base + url, headers=headers)
                expected = {200, 206} if part in reachable else {403}
                assert response.status in expected, (part, url, headers, response.status)
                if part in reachable:
                    assert "no-store" in response.headers["cache-control"]
    assert all(src.startswith("/media/files/videos/") for src in sources)


def wait_playable(page, count: int) -> None:
    """Every player on the page has loaded its clip's metadata (the browser can play it)."""
    page.wait_for_function(
        f"() => {{ const v = [...document.querySelectorAll('video')];"
        f" return v.length === {count} && v.every(n => n.readyState >= 1 && n.duration > 0.9); }}")


def test_an_annotator_walks_the_three_steps(live_server, browser_page, make_user, login, split, study, start_work):

    page = browser_page
    page.set_viewport_size({"width": 1366, "height": 768})  # a laptop screen
    base = live_server.url
    worker = make_user("wanda", ANNOTATOR)
    login(page, worker)
    page.goto(f"{base}/work/{study.slug}/")
    check_reach(page, base, split, reachable=set())  # opening the page claims nothing, so nothing streams
    start_work(page)

    # --- Step 1: Forecaster sees V_pre only -------------------------------------------------------
    expect(page.get_by_role("heading", name="Step 1 of 3: Forecaster")).to_be_visible()
    expect(page.locator("[data-progress]")).to_have_text("Video 1 of 1")
    expect(page.locator('.staged-step[aria-current="step"]')).to_contain_text("Forecaster")
    expect(page.locator(".staged-example")).to_contain_text("Example")
    check_reach(page, base, split, reachable={"pre"})
    assert page.locator("video").count() == 1
    assert page.locator("video").get_attribute("src") == clip_urls(split)["pre"][0]
    wait_playable(page, 1)
    media, form = page.locator(".staged-media").bounding_box(), page.locator(".staged-form").bounding_box()
    assert media["x"] + media["width"] <= form["x"], "players and questions sit side by side"
    assert page.locator("video").bounding_box()["height"] <= 768 * 0.45
    expect(page.get_by_label("Scenario 1")).to_be_focused()  # the keyboard starts in the first answer
    page.keyboard.type(SCENARIOS[0])
    page.keyboard.press("Tab")
    page.keyboard.type(SCENARIOS[1])
    expect(page.locator("#save-state")).to_have_text("Saved")
    page.reload()  # the draft of this step comes back
    expect(page.get_by_label("Scenario 2")).to_have_value(SCENARIOS[1])
    expect(page.locator("#save-state")).to_have_text("Draft restored")
    page.get_by_label("Scenario 3").fill(SCENARIOS[2])
    page.screenshot(path=str(SCREENSHOTS / "blackswan_step1.png"), full_page=True)
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")

    # --- Step 2: Detective sees V_pre and V_post, the middle is a marked gap --------------------------
    expect(page.get_by_role("heading", name="Step 2 of 3: Detective")).to_be_visible()
    check_reach(page, base, split, reachable={"pre", "post"})
    assert [page.locator("video").nth(i).get_attribute("src") for i in range(2)] == [
        clip_urls(split)["pre"][0], clip_urls(split)["post"][0]]
    expect(page.locator('[data-hidden-part="main"]')).to_contain_text("The middle of the video is hidden")
    wait_playable(page, 2)
    for index, text in enumerate(SCENARIOS):
        expect(page.locator(f'[data-forecast="{index}"]')).to_have_text(text)
    # with the keyboard: the first "Valid" has the focus; an arrow key moves the choice to "Invalid"
    expect(page.locator('input[name="forecast_valid.0"][value="yes"]')).to_be_focused()
    page.keyboard.press("ArrowRight")
    expect(page.locator('input[name="forecast_valid.0"][value="no"]')).to_be_checked()
    new_first = page.get_by_label("New hypothesis 1: what happened in the middle?")
    expect(new_first).to_be_visible()
    page.get_by_role("button", name="Submit step 2").click()  # the new hypothesis is still missing
    expect(page.locator('[data-error-for="new_hypotheses.0"]')).to_have_text("this answer is required")
    new_first.fill("The bunny slipped on the wet grass and fell.")
    expect(page.locator('[data-error-for="new_hypotheses.0"]')).to_be_empty()  # fixed: its message goes
    page.get_by_label("Valid: it fits the end").nth(1).check()
    page.get_by_label("Invalid: it cannot lead to the end").nth(2).check()
    expect(page.get_by_label("New hypothesis 2: what happened in the middle?")).to_be_hidden()
    page.get_by_label("New hypothesis 3: what happened in the middle?").fill("A bird flew past and startled it.")
    expect(page.locator("#save-state")).to_have_text("Saved")
    page.screenshot(path=str(SCREENSHOTS / "blackswan_step2.png"), full_page=True)
    with page.expect_navigation():
        page.get_by_role("button", name="Submit step 2").click()

    # --- Step 3: Reporter sees the whole video ---------------------------------------------------------
    expect(page.get_by_role("heading", name="Step 3 of 3: Reporter")).to_be_visible()
    check_reach(page, base, split, reachable={"pre", "post", "main", "full"})
    assert page.locator("video").get_attribute("src") == clip_urls(split)["full"][0]
    wait_playable(page, 1)
    expect(page.locator('[data-hypothesis="0"]')).to_have_text("The bunny slipped on the wet grass and fell.")
    expect(page.locator('[data-hypothesis="1"]')).to_have_text(SCENARIOS[1])
    for index, mark in enumerate(("Invalid", "Valid: this is what happened", "Invalid")):
        page.locator(f"#hypothesis-{index + 1}").get_by_label(mark, exact=True).check()
    page.get_by_label("Caption: what happens in the whole video?").fill(
        "A big rabbit comes out of his burrow, stretches and admires a butterfly in a sunny meadow.")
    expect(page.locator("#save-state")).to_have_text("Saved")
    page.screenshot(path=str(SCREENSHOTS / "blackswan_step3.png"), full_page=True)
    with page.expect_response(lambda r: "/steps/reporter/submit/" in r.url, timeout=30_000) as answer:
        page.get_by_role("button", name="Submit the last step").click()
    assert answer.value.status == 201, answer.value.text()
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    # a clean end: no stepper, lease line, players or questions; the last video leads to the finish
    for gone in (".staged-steps", "[data-lease]", "#staged-form", ".instructions"):
        expect(page.locator(gone)).to_be_hidden()
    expect(page.locator("#result-earnings")).to_contain_text("That was the last video for you")
    expect(page.get_by_role("link", name="Finish")).to_be_focused()
    result = page.locator("#task-result").bounding_box()
    assert result["x"] > 0 and result["x"] + result["width"] <= 1366, "the thank-you card fits the screen"
    page.screenshot(path=str(SCREENSHOTS / "blackswan_done.png"), full_page=True)

    # once handed in, nothing streams any longer
    page.goto(f"{base}/work/{study.slug}/")
    expect(page.locator("body")).to_contain_text("There is no item left")
    check_reach(page, base, split, reachable=set())
    claim = Claim.objects.get(worker=worker)
    assert (claim.status, claim.step) == (Claim.Status.SUBMITTED, staged.DONE)
    assert Submission.objects.get(claim=claim).active_seconds > 0
    record = staged.release_record(claim)
    assert record["task1_gt"] == SCENARIOS
    assert record["task2_checkboxes"] == ["no", "yes", "no"]
    assert record["task2_gt"] == ["The bunny slipped on the wet grass and fell.", SCENARIOS[1],
                                  "A bird flew past and startled it."]
    assert record["task3_checkboxes"] == ["no", "yes", "no"]
    assert (record["preevent"], record["event"], record["postevent"]) == (0.0, 1.2, 2.4)
    assert page.js_errors == []


def test_an_italian_staged_study_speaks_italian_until_the_worker_switches(live_server, browser_page, make_user,
                                                                          login, split, start_work):

    study = staged.create_staged_study([split], "Eventi inattesi", split.curator, open_now=True, expert_share=0.0,
                                       expert_first=0, language="it")
    page = browser_page
    worker = make_user("bruna", ANNOTATOR)
    login(page, worker)
    work_url = f"{live_server.url}/work/{study.slug}/"
    page.goto(work_url)
    expect(page.get_by_role("button", name="Inizia")).to_be_visible()
    start_work(page)
    assert page.locator("html").get_attribute("lang") == "it"
    expect(page.get_by_role("heading", name="Fase 1 di 3: Previsore")).to_be_visible()
    expect(page.locator(".staged-player figcaption")).to_have_text("Inizio del video")
    # the script's messages and the server's, in the page's language
    page.get_by_label("Scenario 1").fill(SCENARIOS[0])
    expect(page.locator("#save-state")).to_have_text("Salvato")
    page.get_by_label("Scenario 2").fill(SCENARIOS[0].upper())
    page.get_by_role("button", name="Invia la fase 1").click()
    expect(page.locator("#form-error")).to_have_text("Alcune risposte mancano o non sono valide.")
    expect(page.locator('[data-error-for="scenarios.1"]')).to_have_text(
        "è uguale allo scenario 1: scrivine uno diverso")
    expect(page.locator('[data-error-for="scenarios.2"]')).to_have_text("questa risposta è obbligatoria")
    page.get_by_label("Scenario 2").fill(SCENARIOS[1])
    page.get_by_label("Scenario 3").fill(SCENARIOS[2])
    with page.expect_navigation():
        page.get_by_role("button", name="Invia la fase 1").click()
    expect(page.get_by_role("heading", name="Fase 2 di 3: Detective")).to_be_visible()
    expect(page.locator('[data-hidden-part="main"]')).to_contain_text("La parte centrale del video è nascosta")

    # the worker switches to English: the step page and the server's messages follow
    page.get_by_role("button", name="English").click()
    page.wait_for_url(work_url)
    assert page.locator("html").get_attribute("lang") == "en"
    expect(page.get_by_role("heading", name="Step 2 of 3: Detective")).to_be_visible()
    page.get_by_label("Invalid: it cannot lead to the end").first.check()
    page.get_by_role("button", name="Submit step 2").click()
    expect(page.locator('[data-error-for="new_hypotheses.0"]')).to_have_text("this answer is required")
    assert Claim.objects.get(worker=worker).step == staged.DETECTIVE
    assert page.js_errors == []
