"""A researcher draws a judge-validation sample on a run's results page, two people rate it blind,
and the results page shows Fleiss' kappa of judge and people."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import CURATOR, RESEARCHER
from evaluation.models import EvaluationRun
from tests.evaluation.test_judge_validation import maia_run

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOT = Path("/tmp/judge_validation_results.png")


def _rate_all(page, url: str, labels: dict) -> None:
    page.goto(url)
    for answer, label in labels.items():
        item = page.locator("li[data-item]", has_text=f"answer {answer}")
        item.get_by_label(label, exact=True).check()
        item.get_by_role("button", name="Save verdict").click()
        expect(page.locator("li[data-item]", has_text=f"answer {answer}").locator("[data-own-verdict]")
               ).to_have_text(label)


def test_two_people_validate_the_judge_from_the_results_page(live_server, browser_page, make_user, login):

    run, _ = maia_run("jv-browser")
    EvaluationRun.objects.filter(pk=run.pk).update(input_strategy="default")
    researcher, curator = make_user("rita", RESEARCHER), make_user("carlo", CURATOR)
    page = login(browser_page, researcher)
    page.goto(live_server.url + f"/results/runs/{run.pk}/")
    form = page.locator("[data-validation-form]")
    form.get_by_label("Answers").fill("4")
    form.get_by_label("Seed").fill("2")
    form.get_by_role("button", name="Draw a validation sample").click()
    expect(page.locator("[data-no-kappa]")).to_have_text("2 raters are needed; 0 rated so far.")
    page.get_by_role("link", name="Rate its answers").click()
    rate_url = page.url
    # judge: a b correct, c d incorrect (tests/evaluation/test_judge_validation.py)
    _rate_all(page, rate_url, {"a": "correct", "b": "correct", "c": "incorrect", "d": "correct"})

    page.context.clear_cookies()
    page = login(page, curator)
    page.goto(rate_url)
    expect(page.locator("[data-own-verdict]")).to_have_count(0)  # not the other rater's verdicts
    _rate_all(page, rate_url, {"a": "correct", "b": "incorrect", "c": "incorrect", "d": "incorrect"})

    page.context.clear_cookies()
    page = login(page, researcher)
    page.goto(live_server.url + f"/results/runs/{run.pk}/")
    section = page.locator("#judge-validation")
    expect(section.locator("dd[data-kappa=all]")).to_have_text("0.333")
    expect(section.locator("dd[data-kappa=people]")).to_have_text("0.000")
    expect(section.locator("tr[data-pair='carlo-rita'], tr[data-pair='rita-carlo']")).to_contain_text("50.0%")
    section.scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOT), full_page=True)
