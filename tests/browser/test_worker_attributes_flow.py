"""A curator imports a Prolific demographics export onto workers' attributes, corrects one worker by
hand and sets a study's attribute rules as rows; a worker outside the age range is told why."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.crowd.models import Study, WorkerProfile
from config.roles import ANNOTATOR, CURATOR
from tests.conftest import create_study

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

SETTINGS_SCREENSHOT = Path("/tmp/study_attribute_rules.png")
IMPORT_SCREENSHOT = Path("/tmp/worker_import_report.png")
EXPORT = ("Submission id,Participant id,Status,Age,First language,Country of birth\n"
          "s1,P1,APPROVED,31,Italian,Italy\n"
          "s2,P2,APPROVED,70,Italian,Italy\n"
          "s3,P9,APPROVED,40,English,United Kingdom\n")


def test_curator_imports_attributes_and_sets_rules_as_rows(live_server, browser_page, make_user, login, tmp_path):

    curator = make_user("cora", CURATOR)
    young, old = make_user("giulia", ANNOTATOR), make_user("marco", ANNOTATOR)
    WorkerProfile.objects.create(user=young, platform="prolific", platform_worker_id="P1")
    WorkerProfile.objects.create(user=old, platform="prolific", platform_worker_id="P2")
    study = create_study("italian-check", form={"fields": [
        {"name": "answer", "type": "single_choice", "label": "Right?", "options": ["yes", "no"]}]}, items=2)
    page = login(browser_page, curator)

    # 1. The import page: the default mapping, a report naming the unknown participant.
    page.goto(live_server.url + "/studies/")
    page.get_by_role("link", name="Workers and their attributes").click()
    page.get_by_role("link", name="Import attributes from a platform's CSV").click()
    export = tmp_path / "prolific.csv"
    export.write_text(EXPORT)
    page.get_by_label("Demographics export (CSV)").set_input_files(str(export))
    page.get_by_role("button", name="Import").click()
    report = page.locator("[data-import-report]")
    expect(report).to_contain_text("3 rows: 2 workers updated, 0 unchanged, 1 unknown.")
    expect(report.locator("[data-unknown]")).to_contain_text("P9")
    page.screenshot(path=str(IMPORT_SCREENSHOT), full_page=True)
    assert WorkerProfile.objects.get(user=young).attributes == {"native_language": "it",
                                                                "country_of_upbringing": "IT", "age": 31}

    # 2. One worker's attributes by hand.
    page.goto(live_server.url + "/workers/")
    page.locator("tr[data-worker=giulia]").get_by_role("link", name="Edit attributes").click()
    page.get_by_label("Country of upbringing").fill("Switzerland")
    page.get_by_role("button", name="Save attributes").click()
    expect(page.locator("tr[data-worker=giulia]")).to_contain_text("CH")

    # 3. The study's rules as rows, read back as sentences.
    page.goto(live_server.url + f"/studies/{study.slug}/settings/")
    page.get_by_label("Rule 1 attribute").fill("native_language")
    page.get_by_label("Rule 1 allowed values").fill("Italian")
    page.get_by_label("Rule 2 attribute").fill("age")
    page.get_by_label("Rule 2 min").fill("18")
    page.get_by_label("Rule 2 max").fill("65")
    page.get_by_role("button", name="Save settings").click()
    page.wait_for_url(f"**/studies/{study.slug}/")
    expect(page.locator("dd[data-attribute-rules]")).to_have_text("Native language: it; Age between 18 and 65")
    assert Study.objects.get(pk=study.pk).required_attributes == {"native_language": "it",
                                                                  "age": {"min": 18, "max": 65}}
    page.goto(live_server.url + f"/studies/{study.slug}/settings/")
    expect(page.locator(".rule-lines")).to_contain_text("Age between 18 and 65")
    page.screenshot(path=str(SETTINGS_SCREENSHOT), full_page=True)

    # 4. The worker aged 70 is refused with the rule.
    page.context.clear_cookies()
    page = login(page, old)
    page.goto(live_server.url + f"/work/{study.slug}/")
    expect(page.locator("main")).to_contain_text("This study needs workers with age between 18 and 65.")
