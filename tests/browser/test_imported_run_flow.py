"""A researcher in a real browser runs a model outside the platform: downloads a version's requests as a
VLMEvalKit table from its results page, answers them (here, in the test, as the kit would fill its
`prediction` column), uploads the table with the import form and finds the imported run's accuracy on the
version's leaderboard."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from config.roles import RESEARCHER

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SCREENSHOT = Path("/tmp/imported_run_leaderboard.png")


@pytest.fixture
def cvqa_version(transactional_db):
    from django.core.cache import cache

    from tests.conftest import cvqa_payload
    from tests.request_files import BOOLEAN, SYNTHETIC, frozen

    cache.clear()
    yield frozen("cvqa", "browser-k1", [("q1", cvqa_payload("two"), {}), ("q2", cvqa_payload("3"), {}),
                                        ("b1", BOOLEAN, {}), ("s1", SYNTHETIC, {})])
    cache.clear()


def test_researcher_downloads_requests_imports_vlmevalkit_predictions_and_sees_the_leaderboard(
        live_server, browser_page, make_user, login, cvqa_version, media_root, tmp_path):
    from evaluation.kits import tables
    from evaluation.models import EvaluationRun
    from tests.request_files import read_tsv

    page = browser_page
    login(page, make_user("rita", RESEARCHER))
    page.goto(f"{live_server.url}/results/versions/{cvqa_version.pk}/")

    download_form = page.locator("#requests-form")
    download_form.get_by_label("Format").select_option("vlmevalkit")
    with page.expect_download() as download:
        download_form.get_by_role("button", name="Download the requests").click()
    assert download.value.suggested_filename == "cvqa-browser-k1-requests.tsv"
    rows = read_tsv(Path(download.value.path()).read_text(encoding="utf-8"))
    assert len(rows) == 8 and {"index", "question", "answer", "A", "prompt"} <= set(rows[0])

    # the model answers every request as the gold says, except q2's original question
    answered = [[row["index"], "I am not sure" if row["request_id"] == "q2:original" else row["answer"]]
                for row in rows]
    predictions = tmp_path / "outside-vlm_cvqa.tsv"
    predictions.write_text("".join(tables.tsv_chunks(["index", "prediction"], answered)), encoding="utf-8")

    import_form = page.locator("#import-form")
    import_form.get_by_label("Predictions file").set_input_files(str(predictions))
    import_form.get_by_label("Model name").fill("lab/outside-vlm")
    import_form.get_by_role("button", name="Import the predictions").click()

    page.wait_for_url(re.compile(r"/results/runs/\d+/$"))
    run = EvaluationRun.objects.get(model_id="lab/outside-vlm")
    assert page.url == f"{live_server.url}/results/runs/{run.pk}/"
    expect(page.locator("#imported-from")).to_contain_text(
        "Imported 8 predictions from outside-vlm_cvqa.tsv (VLMEvalKit (TSV)): 8 requests answered")

    page.locator(".crumbs").get_by_role("link", name="cvqa:browser-k1").click()
    row = page.locator(f'#leaderboard tr[data-run="{run.pk}"]')
    expect(row.locator("td.model")).to_contain_text("imported")
    expect(row.locator('td[data-metric="real.original_accuracy"] a')).to_have_text("66.7%")  # q1 and b1 of 3
    expect(row.locator('td[data-metric="synthetic.original_accuracy"] a')).to_have_text("100.0%")
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert not page.js_errors
