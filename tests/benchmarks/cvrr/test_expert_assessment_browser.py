"""CVRR-ES expert assessment in a real browser: a worker without the expert qualification is turned away; a
qualified expert watches the video, reads the dimension, the question and the answer and answers the three
questions (a wrong answer needs a note); the curator reads the report and finalises it, which sends the pair
back to filtration."""

import pytest
from playwright.sync_api import expect

from annotation import versions
from annotation.benchmarks.cvrr import expert_group, stages
from annotation.benchmarks.cvrr.expert_study import create_expert_study
from annotation.crowd.models import Submission
from annotation.curation_models import CategoryDefinition, CurationRecord
from annotation.models import Benchmark, BenchmarkVersion
from config.roles import ANNOTATOR, CURATOR
from generation.models import Proposal, ProposalSet
from tests.conftest import ingest_path

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]


@pytest.fixture
def expert_study(transactional_db, make_user, bikes):

    curator = make_user("cora", CURATOR)
    video = ingest_path(bikes, user=curator)
    cvrr = Benchmark.objects.get(slug="cvrr")
    CategoryDefinition.objects.create(benchmark=cvrr, key="continuity_and_object_instance_count",
                                      name="Continuity and object instance count",
                                      description="Counting objects and following them across the video.")
    pool = BenchmarkVersion.objects.create(benchmark=cvrr, label="qa-pool", created_by=curator)
    item = versions.add_item(pool, "continuity_and_object_instance_count:0", {
        "kind": "qa", "dimension": "continuity_and_object_instance_count", "video_id": "bikes",
        "question": "How many cyclists ride past the camera?", "answer": "Two cyclists ride past."}, {"video": video})
    # kept in filtration: the pool item of an accepted `cvrr_qa` proposal
    proposal = Proposal.objects.create(
        proposal_set=ProposalSet.objects.create(name="QA pairs", task_kind="cvrr_qa", backend="openai",
                                                model_id="gpt-test"),
        task_kind="cvrr_qa", status="ok", inputs={"dimension": "continuity_and_object_instance_count",
                                                  "video": "bikes", "caption": "Cyclists in a street."},
        fields={"question": item.payload["question"], "answer": item.payload["answer"],
                "question_kind": "reasoning"})
    CurationRecord.objects.create(item=item, stage=stages.FILTERED, working={"source": {"proposal": proposal.pk}})
    study = create_expert_study(pool, curator, seed=1, size=1, slug="experts").study
    expert = make_user("eva", ANNOTATOR)
    expert_group.grant(expert, curator)
    study.curator, study.expert, study.pair = curator, expert, item
    return study


def test_a_qualified_expert_answers_and_the_curator_finalises(live_server, browser_page, make_user, login,
                                                              expert_study, start_work):

    # 1. A worker who is no expert is refused, with the qualification named.
    outsider = login(browser_page, make_user("otto", ANNOTATOR))
    outsider.goto(f"{live_server.url}/work/{expert_study.slug}/")
    expect(outsider.get_by_text("needs the qualification 'cvrr-expert'", exact=False)).to_be_visible()
    outsider.context.clear_cookies()

    # 2. The expert sees the video, the dimension, the question and the answer, and answers.
    page = login(browser_page, expert_study.expert)
    start_work(page, expert_study.slug)
    expect(page.locator("video.item-media")).to_be_visible()
    expect(page.locator('[data-payload-key="dimension_name"]')).to_have_text("Continuity and object instance count")
    expect(page.locator('[data-payload-key="dimension_description"]')).to_contain_text("Counting objects")
    expect(page.locator('[data-payload-key="question"]')).to_have_text("How many cyclists ride past the camera?")
    expect(page.locator('[data-payload-key="answer"]')).to_have_text("Two cyclists ride past.")

    page.get_by_role("button", name="Submit").click()
    expect(page.locator('[data-error-for="answer_correct"]')).to_have_text("answer this question")
    page.get_by_role("group", name="1. Does the QA pair correctly represent").get_by_role("radio", name="Yes").check()
    page.get_by_role("group", name="2. The question can be correctly answered").get_by_role(
        "radio", name="Agree", exact=True).check()
    page.get_by_role("group", name="3. Is the ground-truth answer correct?").get_by_role("radio", name="No").check()
    page.get_by_role("button", name="Submit").click()
    expect(page.locator('[data-error-for="notes"]')).to_contain_text("say what is wrong")
    assert not Submission.objects.exists()

    page.get_by_label("Notes (required when the answer is wrong", exact=False).fill("Three cyclists ride past.")
    with page.expect_response(lambda r: r.url.endswith("/submit/")) as answer:
        page.get_by_role("button", name="Submit").click()
    assert answer.value.status == 201, answer.value.text()
    expect(page.locator("#task-result")).to_be_visible()
    assert Submission.objects.get().data == {"represents_dimension": "yes", "answerable_from_video": "agree",
                                             "answer_correct": "no", "notes": "Three cyclists ride past."}
    assert page.js_errors == []
    assert CurationRecord.objects.get(item=expert_study.pair).stage == stages.FILTERED  # nothing moves yet
    page.context.clear_cookies()

    # 3. The curator reads the report and finalises it: the pair goes back to filtration.
    report = login(browser_page, expert_study.curator)
    report.goto(f"{live_server.url}/cvrr/experts/studies/{expert_study.slug}/")
    overall = report.locator('#expert-rates tr[data-dimension="all"]')
    expect(overall).to_contain_text("100.00% (1 of 1)")
    expect(overall).to_contain_text("0.00% (0 of 1)")
    failing = report.locator('tr[data-pair="continuity_and_object_instance_count:0"]')
    expect(failing).to_contain_text("Three cyclists ride past.")
    expect(failing).to_contain_text("back to filtration")
    report.get_by_role("button", name="Finalise the report").click()
    expect(report.locator("#finalised")).to_contain_text("1 pair(s) back to filtration")
    expect(report.locator(".messages")).to_contain_text("Report finalised")
    record = CurationRecord.objects.get(item=expert_study.pair)
    assert record.stage == stages.RETURNED and "Three cyclists ride past." in record.working["returned"][-1]["reason"]
    assert report.js_errors == []
