"""BlackSwanSuite's +P/+PC captions in a real browser: a worker sees V_pre and V_post (no address of V_main on
the page, and V_main refused to the page's own session), is refused a comparison that is too short, hands in
the two captions and the comparison; a curator approves them in the review queue beside both clips, finds
them on the study's captions page and applies them to an unfrozen version."""

import pytest
from playwright.sync_api import expect

from annotation.benchmarks.blackswan import caption_study
from annotation.models import Benchmark, BenchmarkVersion
from annotation.versions import add_item
from config.roles import ANNOTATOR, CURATOR
from tests.benchmarks.blackswan.test_captions import CAPTIONS, record
from tests.benchmarks.blackswan.test_staged import make_split

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]


def test_a_worker_captions_the_two_clips_and_a_curator_applies_them(live_server, browser_page, make_user, login,
                                                                    tmp_path, start_work):
    curator = make_user("cora", CURATOR)
    worker = make_user("wanda", ANNOTATOR)
    split = make_split(tmp_path / "clips", curator)
    study = caption_study.create_caption_study(curator, [split], name="Beginning and end", open_now=True)
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="blackswan"), label="draft",
                                              created_by=curator)
    add_item(version, "v1", {"kind": "video", **record("v1")}, {"video": split.video})

    # 1. The worker sees the beginning and the end only.
    page = login(browser_page, worker)
    start_work(page, study.slug)
    sources = page.eval_on_selector_all("video", "nodes => nodes.map(n => n.getAttribute('src'))")
    assert sources == [f"/media/files/videos/{split.pre_video_id}/", f"/media/files/videos/{split.post_video_id}/"]
    html = page.content()
    for hidden in (split.video_id, split.main_video_id, split.full_video_id, split.detective_video_id):
        assert f"/media/files/videos/{hidden}/" not in html
        assert page.request.get(f"{live_server.url}/media/files/videos/{hidden}/").status == 403
    assert page.request.get(f"{live_server.url}/media/files/videos/{split.post_video_id}/").status == 200
    expect(page.locator("figcaption")).to_have_text(["Beginning of the video", "End of the video"])

    page.get_by_label("Caption of the beginning of the video").fill(CAPTIONS["pc_preevent"])
    page.get_by_label("Caption of the end of the video").fill(CAPTIONS["pc_postevent"])
    comparison = page.get_by_label("What changed between the beginning and the end?")
    comparison.fill("Now fallen.")
    submit = page.get_by_role("button", name="Submit")
    with page.expect_response(lambda r: r.url.endswith("/submit/")) as refused:
        submit.click()
    assert refused.value.status == 400
    expect(page.locator('[data-error-for="pc_comp"]')).to_contain_text("write at least 3 words")
    comparison.fill(CAPTIONS["pc_comp"])
    with page.expect_response(lambda r: r.url.endswith("/submit/")) as answered:
        submit.click()
    assert answered.value.status == 201, answered.value.text()
    expect(page.get_by_role("button", name="Next item")).to_be_visible()
    submission = study.claims.get(worker=worker).submission
    assert submission.data == CAPTIONS

    # 2. A curator approves them beside both clips, then applies them to the draft version.
    context = page.context.browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    try:
        curator_page = context.new_page()
        login(curator_page, curator)
        curator_page.goto(f"{live_server.url}/studies/{study.slug}/queue/?queue=all&state=pending")
        row = curator_page.locator(f'tr[data-submission-id="{submission.pk}"]')
        expect(row).to_contain_text(CAPTIONS["pc_comp"])
        expect(curator_page.locator(f'video[src="/media/files/videos/{split.pre_video_id}/"]')).to_have_count(1)
        expect(curator_page.locator(f'video[src="/media/files/videos/{split.post_video_id}/"]')).to_have_count(1)
        with curator_page.expect_response(lambda r: "/review/" in r.url) as decided:
            row.get_by_role("button", name="Approve").click()
        assert decided.value.status == 200, decided.value.text()
        expect(row.locator("[data-decision-state]")).to_have_text("Approved")

        curator_page.goto(f"{live_server.url}/studies/{study.slug}/")
        curator_page.get_by_role("link", name="Captions (+P/+PC)").first.click()
        video_row = curator_page.locator(f'tr[data-video-id="{split.video_id}"]')
        expect(video_row).to_have_attribute("data-accepted", "yes")
        expect(video_row.locator('[data-field="pc_postevent"]')).to_have_text(CAPTIONS["pc_postevent"])
        curator_page.locator("#apply-captions select").select_option("draft")
        curator_page.get_by_role("button", name="Apply the captions").click()
        expect(curator_page.get_by_text("Captions applied to 1 video(s) of")).to_be_visible()
    finally:
        context.close()
    item = version.items.get(external_id="v1")
    assert {name: item.payload[name] for name in caption_study.FIELDS} == CAPTIONS
