"""An Italian study in a real browser: the task page, its script's messages and the server's validation
messages are in Italian; the worker's switch to English holds on the next page."""

import pytest
from playwright.sync_api import expect

from annotation.crowd import assignment
from annotation.crowd.models import Study, WorkerProfile

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

FORM = {"fields": [
    {"name": "description", "type": "free_text", "label": "Descrivi l'immagine.", "min_length": 5,
     "max_length": 300},
    {"name": "person", "type": "single_choice", "label": "C'è una persona?", "options": ["sì", "no"]},
]}
PID = "6a1e2d3c4b5a69788796a5b4"


@pytest.fixture
def study(transactional_db):

    study = Study.objects.create(
        name="Descrivere immagini", slug="descrivere", form_schema=FORM, state=Study.State.OPEN, language="it",
        instructions="Guarda l'elemento e **rispondi a tutte le domande**.", completion_code="FATTO-1",
        recruitment_platform=Study.Recruitment.PROLIFIC, platform_study_id="s1", expert_share=0, expert_first=0)
    assignment.add_items(study, [{"external_id": f"img-{n}", "payload": {"title": f"Immagine {n}"}} for n in range(3)])
    return study


def test_an_italian_task_page_and_the_switch_to_english(live_server, browser_page, study, start_work):

    page = browser_page
    work_url = f"{live_server.url}/work/{study.slug}/"
    page.goto(f"{live_server.url}/crowd/prolific/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID=s1&SESSION_ID=x1")
    page.wait_for_url(work_url)
    assert page.locator("html").get_attribute("lang") == "it"
    expect(page.get_by_role("button", name="Inizia")).to_be_visible()
    start_work(page)
    expect(page.get_by_role("heading", name="Le tue risposte")).to_be_visible()

    # the script's own messages, and the server's, in the page's language
    text = page.get_by_label("Descrivi l'immagine.")
    text.click()
    text.press_sequentially("Un")
    expect(page.locator("#save-state")).to_have_text("Salvato")
    page.get_by_role("button", name="Invia").click()
    expect(page.locator("#form-error")).to_have_text("Alcune risposte mancano o non sono valide.")
    expect(page.locator('[data-error-for="description"]')).to_have_text("scrivi almeno 5 caratteri")
    expect(page.locator('[data-error-for="person"]')).to_have_text("scegli una delle opzioni")

    # the worker switches to English: this page and the next ones, and the server's messages
    page.get_by_role("button", name="English").click()
    page.wait_for_url(work_url)
    assert page.locator("html").get_attribute("lang") == "en"
    expect(page.get_by_role("heading", name="Your answers")).to_be_visible()
    page.get_by_role("button", name="Submit").click()
    expect(page.locator('[data-error-for="description"]')).to_have_text("write at least 5 characters")
    page.get_by_role("link", name="I am done for now").first.click()
    assert page.locator("html").get_attribute("lang") == "en"
    expect(page.get_by_role("heading", name="Not finished yet")).to_be_visible()
    assert WorkerProfile.objects.get(platform_worker_id=PID).language == "en"
    assert page.js_errors == []
