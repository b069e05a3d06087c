"""NL-EYE scene writing in a real browser: an author writes a premise / plausible / implausible triplet
on the task page (a repeated scene is refused next to its field), and a curator filters the queue:
a rejection asks for its criterion, an approval adds the triplet to the pool."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import ANNOTATOR, CURATOR

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOT = Path("/tmp/scene_writing_queue.png")
EARLIER = {  # the paper's example of a triplet whose premise is not needed (seeds/002, Table 16)
    "premise": "A teacher enters the school.",
    "plausible": "An apple on the teacher's desk.",
    "implausible": "An orange on the teacher's desk.",
    "reasoning_category": "cultural", "time_direction": "forward", "time_duration": "short",
    "domain": "education",
}


@pytest.fixture
def scene_study(transactional_db, make_user):
    from annotation.benchmarks.nleye import scenes
    from annotation.crowd import assignment, submissions

    curator = make_user("cora", CURATOR)
    study = scenes.create_scene_study(curator, "Write NL-EYE scenes", k=1, open_now=True)
    earlier = make_user("eric", ANNOTATOR)
    claim = submissions.load_claim(assignment.claim_next(study, earlier).pk)
    submissions.submit(claim, earlier, EARLIER)
    study.curator = curator
    return study


def test_an_author_writes_a_triplet_and_a_curator_filters_the_queue(live_server, browser_page, make_user, login,
                                                                    scene_study, start_work):
    from annotation.crowd.models import Claim, Submission
    from annotation.curation_models import CurationRecord
    from annotation.models import BenchmarkItem

    # 1. The author writes a triplet on the task page; the brief suggests what to aim for.
    page = login(browser_page, make_user("ada", ANNOTATOR))
    start_work(page, scene_study.slug)
    expect(page.get_by_text("Aim for", exact=False).first).to_be_visible()
    page.get_by_label("Premise scene", exact=True).fill("A teacher opens the classroom door in the morning.")
    page.get_by_label("Plausible hypothesis scene", exact=True).fill("Children sit at desks with open notebooks.")
    page.get_by_label("Implausible hypothesis scene", exact=True).fill("Children sit at desks with open notebooks.")
    page.get_by_role("radio", name="logical", exact=True).check()
    page.get_by_role("radio", name="forward: the hypotheses happen after the premise").check()
    page.get_by_role("radio", name="short: seconds to hours").check()
    page.get_by_role("radio", name="education", exact=True).check()
    page.get_by_role("button", name="Submit").click()
    expect(page.locator('[data-error-for="implausible"]')).to_contain_text("the same as the plausible")
    assert Submission.objects.count() == 1

    page.get_by_label("Implausible hypothesis scene", exact=True).fill("Children sleep in beds under blankets.")
    with page.expect_response(lambda r: r.url.endswith("/submit/")) as answer:
        page.get_by_role("button", name="Submit").click()
    assert answer.value.status == 201, answer.value.text()
    written = Submission.objects.get(claim__worker__username="ada")
    assert written.data["implausible"] == "Children sleep in beds under blankets."
    assert page.js_errors == []

    # 2. The curator rejects the earlier triplet for a named criterion and accepts the new one.
    curator_context = page.context.browser.new_context(viewport={"width": 1400, "height": 900})
    curator_context.set_default_timeout(15_000)
    try:
        review_errors = []
        review = curator_context.new_page()
        review.on("pageerror", lambda exc: review_errors.append(str(exc)))
        review = login(review, scene_study.curator)
        review.goto(f"{live_server.url}/studies/{scene_study.slug}/queue/?queue=all&state=pending")
        earlier = Submission.objects.get(claim__worker__username="eric")
        row = review.locator(f'tr[data-submission-id="{earlier.pk}"]')
        expect(row.locator("[data-near-duplicates]")).to_be_visible()
        row.get_by_role("button", name="Reject").click()
        expect(row.locator("[data-row-error]")).to_have_text("Choose the criterion this submission fails.")
        row.get_by_label(f"Criterion that rejects submission {earlier.pk}").select_option("premise_necessity")
        row.get_by_label(f"Reason for submission {earlier.pk}").fill("the desk alone says it is a school")
        with review.expect_response(lambda r: "/review/" in r.url) as decided:
            row.get_by_role("button", name="Reject").click()
        assert decided.value.status == 200
        expect(row.locator("[data-decision-state]")).to_have_text("Rejected")
        expect(row.locator("[data-decision]")).to_contain_text("premise necessity")

        mine = review.locator(f'tr[data-submission-id="{written.pk}"]')
        expect(mine.locator("[data-near-duplicates]")).to_contain_text(f"submission #{earlier.pk}")
        review.screenshot(path=str(SCREENSHOT), full_page=True)
        with review.expect_response(lambda r: "/review/" in r.url) as decided:
            mine.get_by_role("button", name="Approve").click()
        assert decided.value.status == 200
        expect(mine.locator("[data-decision-state]")).to_have_text("Approved")

        # 3. The spread page counts the accepted triplet.
        review.get_by_role("link", name="Spread of the pool").click()
        expect(review.locator('[data-total="accepted"]')).to_have_text("1")
        expect(review.locator('[data-dimension="reasoning_category"] tr[data-value="logical"] '
                              '[data-count="accepted"]')).to_contain_text("1")
        assert review_errors == []
    finally:
        curator_context.close()

    earlier.refresh_from_db()
    assert earlier.review_criterion == "premise_necessity"
    assert earlier.review_reason == "the desk alone says it is a school"
    assert Claim.objects.get(pk=written.claim_id).status == Claim.Status.APPROVED
    item = BenchmarkItem.objects.get(version=scene_study.output_version)
    assert item.payload["premise"] == "A teacher opens the classroom door in the morning."
    assert CurationRecord.objects.get(item=item).source_submission_id == written.pk
