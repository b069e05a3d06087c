"""C-VQA-Real verification in a real browser: a verifier sees the image, the original and the new question and
answers, answers the two checks and corrects the answer (a wrong answer without the right one is refused); the
second verifier disagrees, so the item waits in the adjudication queue, where a curator corrects it."""

import pytest
from PIL import Image as PILImage
from playwright.sync_api import expect

from annotation.benchmarks.cvqa import counterfactuals, sources, verification
from annotation.crowd import assignment, submissions
from annotation.crowd.models import Submission
from annotation.curation_models import CurationRecord
from config.roles import ANNOTATOR, CURATOR

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]


@pytest.fixture
def verification_study(transactional_db, make_user, tmp_path):
    curator = make_user("cora", CURATOR)
    PILImage.new("RGB", (64, 48), (200, 120, 40)).save(tmp_path / "dogs.png")
    (tmp_path / "questions.csv").write_text("image,question,answer,question_id\n"
                                            "dogs.png,How many dogs are in the picture?,2,q0\n")
    version = sources.import_sources(tmp_path / "questions.csv", "sources-1").version
    item = counterfactuals.write_indirect(curator, version.items.get().pk,
                                          "How many dogs would be in the picture if two more dogs came?", "3")
    study = verification.create_verification_study(item.version, curator, slug="verify").study
    study.curator, study.item = curator, item
    return study


def test_two_verifiers_disagree_and_a_curator_adjudicates(live_server, browser_page, make_user, login,
                                                          verification_study, start_work):
    item = verification_study.item

    # 1. The first verifier sees the item and corrects its answer.
    page = login(browser_page, make_user("vera", ANNOTATOR))
    start_work(page, verification_study.slug)
    expect(page.locator("img.item-media")).to_be_visible()
    expect(page.locator('[data-payload-key="query"]')).to_have_text("How many dogs are in the picture?")
    expect(page.locator('[data-payload-key="new_query"]')).to_have_text(
        "How many dogs would be in the picture if two more dogs came?")
    expect(page.locator('[data-payload-key="new_answer"]')).to_have_text("3")
    page.get_by_role("group", name="1. Is the new question still about the image?").get_by_role(
        "radio", name="Yes").check()
    page.get_by_role("group", name="2. Is the new answer right?").get_by_role(
        "radio", name="No: I give the right answer below").check()
    page.get_by_role("button", name="Submit").click()
    expect(page.locator('[data-error-for="corrected_answer"]')).to_contain_text("say what the right answer is")
    assert not Submission.objects.exists()
    page.get_by_label("The right answer, when the new answer is wrong", exact=False).fill("4")
    with page.expect_response(lambda r: r.url.endswith("/submit/")) as answer:
        page.get_by_role("button", name="Submit").click()
    assert answer.value.status == 201, answer.value.text()
    expect(page.locator("#task-result")).to_be_visible()
    assert Submission.objects.get().data["corrected_answer"] == "4"
    assert CurationRecord.objects.get(item=item).stage == counterfactuals.WRITTEN  # one verifier decides nothing
    assert page.js_errors == []
    page.context.clear_cookies()

    # 2. The second verifier says the answer is right: the verdicts disagree.
    second = make_user("victor", ANNOTATOR)
    claim = assignment.claim_next(verification_study, second)
    submissions.submit(claim, second, {"about_image": "yes", "answer_right": "right", "corrected_answer": "",
                                       "notes": "Two dogs plus two more."})
    assert CurationRecord.objects.get(item=item).stage == counterfactuals.ADJUDICATION

    # 3. The curator finds it in the adjudication queue and corrects it.
    curator = login(browser_page, verification_study.curator)
    curator.goto(f"{live_server.url}/cvqa/")
    curator.get_by_role("link", name="Verification", exact=True).click()
    curator.get_by_role("link", name=item.version.label, exact=True).click()
    disputed = curator.locator(f'#adjudication [data-item-id="{item.pk}"]')
    expect(disputed).to_contain_text("vera: correct the answer to 4")
    expect(disputed).to_contain_text("victor: keep as it is")
    disputed.get_by_role("radio", name="correct the answer to").check()
    disputed.get_by_label("Corrected answer").fill("4")
    disputed.get_by_role("button", name="Decide").click()
    expect(curator.locator(".messages")).to_contain_text("The decision is recorded.")
    expect(curator.locator(f'#items tr[data-item-id="{item.pk}"] [data-role="stage"]')).to_have_text("verified")
    item.refresh_from_db()
    assert item.payload["new_answer"] == "4"
    assert curator.js_errors == []
