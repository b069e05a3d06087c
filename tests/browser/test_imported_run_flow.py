"""A researcher in a real browser runs a model outside the platform: downloads a version's requests as a
VLMEvalKit table from its results page, answers them (here, in the test, as the kit would fill its
`prediction` column), uploads the table with the import form, follows the import job's page (the worker
imports it) to the new run, and finds the imported run's accuracy on the version's leaderboard and the job
under "Your imports"."""

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
        live_server, browser_page, make_user, login, celery_worker, cvqa_version, media_root, tmp_path):
    from evaluation.kits import tables
    from evaluation.models import EvaluationRun
    from generation.models import Job
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

    # the import runs as a job: its page follows it and links the new run when it is done
    page.wait_for_url(re.compile(r"/jobs/\d+/$"))
    expect(page.locator(".messages")).to_contain_text("The import started as job")
    run_link = page.locator("a.run-link")
    expect(run_link).to_have_text(re.compile(r"Open run #\d+"), timeout=60_000)
    run = EvaluationRun.objects.get(model_id="lab/outside-vlm")
    expect(run_link).to_have_text(f"Open run #{run.pk}")
    job = Job.objects.get(kind="import_predictions")
    assert page.url == f"{live_server.url}/jobs/{job.pk}/" and job.result["run"] == run.pk
    assert not list((media_root / "exports").rglob("*.tsv"))  # the stored upload is gone
    run_link.click()
    page.wait_for_url(f"{live_server.url}/results/runs/{run.pk}/")
    expect(page.locator("#imported-from")).to_contain_text(
        "Imported 8 predictions from outside-vlm_cvqa.tsv (VLMEvalKit (TSV)): 8 requests answered")

    page.locator(".crumbs").get_by_role("link", name="cvqa:browser-k1").click()
    row = page.locator(f'#leaderboard tr[data-run="{run.pk}"]')
    expect(row.locator("td.model")).to_contain_text("imported")
    expect(row.locator('td[data-metric="real.original_accuracy"] a')).to_have_text("66.7%")  # q1 and b1 of 3
    expect(row.locator('td[data-metric="synthetic.original_accuracy"] a')).to_have_text("100.0%")
    imports = page.locator("#import-jobs")  # "Your imports" on the version's page
    expect(imports.locator(f'li[data-job-row="{job.pk}"] .badge')).to_have_text("succeeded")
    expect(imports.locator("a.run-link")).to_have_attribute("href", f"/results/runs/{run.pk}/")
    page.wait_for_load_state("networkidle")
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert not celery_worker.failures and not page.js_errors
