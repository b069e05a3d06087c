"""A researcher in a real browser: Results → a version's leaderboard → click a number → the predictions
behind it, with the prompt unfolded; the leaderboard's charts load as images."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import RESEARCHER

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    # WhiteNoise warns that STATIC_ROOT was never collected; the live server serves static itself.
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

LEADERBOARD_SCREENSHOT = Path("/tmp/results_leaderboard.png")
DRILL_SCREENSHOT = Path("/tmp/results_drill.png")


def triplet(label: int, category: str) -> dict:
    return {"kind": "triplet", "premise": "A wet floor.", "hypothesis1": "A man slips.", "hypothesis2": "A man dances.",
            "label": label, "reasoning_category": category, "time_direction": "forward", "time_duration": "short"}


@pytest.fixture
def scored_run(transactional_db):
    from django.core.cache import cache

    from evaluation.models import EvaluationRun, Prediction
    from tests.eval_support import frozen_version

    cache.clear()
    version = frozen_version("nleye", "browser-1", [("t1", triplet(1, "Physical"), {}),
                                                    ("t2", triplet(2, "Social"), {})])
    run = EvaluationRun.objects.create(version=version, model_id="org/vlm-7b", backend="openai",
                                       status=EvaluationRun.Status.SUCCEEDED)
    items = {item.external_id: item for item in version.items.all()}
    answers = {"t1:triplet:order1": "1, because the floor is wet.", "t1:triplet:order2": "2",  # consistent
               "t2:triplet:order1": "1", "t2:triplet:order2": "1"}  # t2 right only when its gold is shown first
    for request_id, text in answers.items():
        prompt = [{"role": "user", "content": [{"type": "text", "text": f"Asked {request_id}"}]}]
        Prediction.objects.create(run=run, request_id=request_id, item=items[request_id.split(":")[0]],
                                  variant="triplet", raw_output=text, prompt=prompt)
    yield run
    cache.clear()


def test_researcher_goes_from_the_leaderboard_to_the_predictions_behind_a_number(
        live_server, browser_page, make_user, login, scored_run):
    page = browser_page
    login(page, make_user("rita", RESEARCHER))

    page.locator("nav.mainnav").get_by_role("link", name="Results", exact=True).click()
    version = page.locator('[data-version="nleye:browser-1"]')
    expect(version).to_be_visible()
    version.get_by_role("link", name="Leaderboard (1 succeeded run)").click()

    expect(page.get_by_role("heading", name="NL-EYE · browser-1")).to_be_visible()
    cell = page.locator(f'#leaderboard tr[data-run="{scored_run.pk}"] td[data-metric="triplet.consistency_accuracy"]')
    expect(cell).to_contain_text("50.0%")
    expect(cell).to_contain_text("n=2")
    chart = page.locator("#chart-category-consistency img").first
    chart.scroll_into_view_if_needed()
    expect(chart).to_be_visible()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=chart.element_handle())
    page.screenshot(path=str(LEADERBOARD_SCREENSHOT), full_page=True)

    order2 = page.locator(f'#leaderboard tr[data-run="{scored_run.pk}"] td[data-metric="triplet.order2_accuracy"]')
    order2.get_by_role("link", name="50.0%").click()

    expect(page.locator("#drill-metric")).to_have_text("triplet.order2_accuracy")
    rows = page.locator("#drill-table tbody tr[data-request-id]")
    expect(rows).to_have_count(2)
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.requestId)") == ["t1:triplet:order2",
                                                                               "t2:triplet:order2"]
    wrong = page.locator('tr[data-request-id="t2:triplet:order2"]')
    expect(wrong.locator(".outcome")).to_have_text("wrong")
    expect(wrong.locator(".raw-output")).to_have_text("1")
    prompt = wrong.locator("details.prompt")
    expect(prompt.locator("pre").first).to_be_hidden()
    prompt.locator("summary").first.click()
    expect(prompt.locator("pre").first).to_have_text("user: Asked t2:triplet:order2")

    page.get_by_role("link", name="wrong (1)").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-request-id", "t2:triplet:order2")
    page.screenshot(path=str(DRILL_SCREENSHOT), full_page=True)
    assert page.js_errors == []
