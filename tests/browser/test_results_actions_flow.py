"""A researcher in a real browser starts work from the results pages: a judge job (the tiny causal LM as
the judge) whose metric then appears on the run's results page, and an export whose download link
appears when its job is done. The leaderboard fits a 1366 px window with a long model path."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import RESEARCHER

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

RUN_SCREENSHOT = Path("/tmp/results_run_actions.png")
LEADERBOARD_SCREENSHOT = Path("/tmp/results_leaderboard_1366.png")
LONG_MODEL = "/srv/models/cache/huggingface/hub/some-organisation/Qwen2.5-VL-72B-Instruct-AWQ-with-a-long-name"


@pytest.fixture
def cvrr_run(transactional_db):
    from django.core.cache import cache

    from evaluation.models import EvaluationRun, Prediction
    from tests.eval_support import frozen_version

    cache.clear()
    dimensions = ("partial_actions", "fine_grained_action_understanding", "time_order_understanding")
    items = [(f"q{i}", {"kind": "qa", "dimension": dimension, "video_id": f"v{i}", "question": f"What happens {i}?",
                        "answer": f"The man waves {i}."}, {}) for i, dimension in enumerate(dimensions, 1)]
    version = frozen_version("cvrr", "browser-judge", items)
    run = EvaluationRun.objects.create(version=version, model_id=LONG_MODEL, backend="openai",
                                       status=EvaluationRun.Status.SUCCEEDED)
    for item in version.items.all():
        Prediction.objects.create(run=run, request_id=f"{item.external_id}:qa", item=item, variant="qa", prompt=[],
                                  raw_output="The man waves.")
    yield run
    cache.clear()


def test_researcher_judges_a_run_from_its_results_page_and_sees_the_metric(
        live_server, browser_page, make_user, login, celery_worker, cvrr_run, tiny_models_dir, tiny_registry):
    page = browser_page
    login(page, make_user("rita", RESEARCHER))
    page.goto(f"{live_server.url}/runs/{cvrr_run.pk}/")
    page.locator("#run-results").get_by_role("link", name="Results of this run").click()

    # the verdicts the judge gave: none before it ran (the tiny random judge's verdicts are all unreadable,
    # so they are counted here and accuracy stays "not computed", never guessed)
    verdicts = page.locator('#run-metrics tr[data-metric="other_verdicts"] td.value')
    before = verdicts.inner_text() if verdicts.count() else ""
    assert before != "3"
    form = page.locator('form[data-judge="cvrr"]')
    form.get_by_label("judge model").select_option("tiny-causal-lm")  # a registered judge
    form.get_by_role("button", name="Judge the run").click()

    expect(page.locator(".messages")).to_contain_text("started as job")
    # the job runs on the worker; the page follows its progress and reloads when it has succeeded
    expect(page.locator("dl.facts")).to_contain_text("3 stored cvrr judgments", timeout=60_000)
    page.screenshot(path=str(RUN_SCREENSHOT), full_page=True)
    expect(page.locator("#result-jobs .badge.succeeded")).to_have_count(1)
    expect(verdicts).to_have_text("3")
    expect(page.locator('#run-metrics tr[data-metric="accuracy"] td.value')).to_have_text("not computed")
    assert not celery_worker.failures and not page.js_errors


def test_researcher_exports_a_versions_results_and_downloads_them(
        live_server, browser_page, make_user, login, celery_worker, cvrr_run, media_root):
    page = browser_page
    page.set_viewport_size({"width": 1366, "height": 900})
    login(page, make_user("rita", RESEARCHER))
    page.goto(f"{live_server.url}/results/versions/{cvrr_run.version.pk}/")

    label = page.locator(f'#leaderboard tr[data-run="{cvrr_run.pk}"] td.model code')
    expect(label).to_have_attribute("title", LONG_MODEL)
    assert label.inner_text().startswith("…") and len(label.inner_text()) <= 32
    overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow} px wider than the window"
    page.screenshot(path=str(LEADERBOARD_SCREENSHOT), full_page=True)

    form = page.locator("#export-form")
    form.get_by_label("What").select_option("predictions")
    form.get_by_label("Format").select_option("csv")
    form.get_by_label("Scope").select_option("all")
    form.get_by_role("button", name="Export").click()

    link = page.locator("#export-jobs a.export-download")
    expect(link).to_have_text("Download predictions.csv", timeout=60_000)
    with page.expect_download() as download:
        link.click()
    saved = download.value.path()
    text = Path(saved).read_text(encoding="utf-8")
    assert text.count("The man waves.") == 3 and "q1:qa" in text
    assert not celery_worker.failures and not page.js_errors
