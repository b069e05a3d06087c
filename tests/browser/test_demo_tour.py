"""`seed_demo`, then every demo role in a real browser: each navigation entry it sees opens a page that
answers 200, shows no placeholder text and logs no console error; the researcher's demo NL-EYE
leaderboard shows computed numbers, and every demo leaderboard fits a 1366 px window without scrolling
sideways."""

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.demo import DEMO_USERS
from annotation.models import BenchmarkVersion
from frontend import navigation

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(240),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

PLACEHOLDERS = re.compile(r"will be listed here|through the API or the admin|coming soon|not (yet )?implemented"
                          r"|lorem ipsum|\bTODO\b", re.IGNORECASE)
SCREENSHOTS = Path("/tmp/demo_tour")


@pytest.fixture
def demo(transactional_db, media_root):
    call_command("seed_demo", stdout=io.StringIO())


def watch_console(page) -> list[str]:
    """Every console error and uncaught exception of the page, as text."""
    errors = []
    page.on("console", lambda message: errors.append(f"console: {message.text} ({message.location})")
            if message.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    return errors


def log_in(page, base: str, username: str, password: str):
    page.goto(base + "/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(base + "/")


def test_every_demo_role_sees_working_pages_and_the_demo_leaderboard_shows_numbers(
        live_server, _chromium, demo):
    SCREENSHOTS.mkdir(exist_ok=True)
    visited = {}
    for username, password, role in DEMO_USERS:
        context = _chromium.new_context(viewport={"width": 1366, "height": 900})
        context.set_default_timeout(20_000)
        page = context.new_page()
        errors = watch_console(page)
        try:
            log_in(page, live_server.url, username, password)
            labels = set(page.locator("nav.mainnav [data-nav]").evaluate_all(
                "links => links.map(link => link.dataset.nav)"))
            entries = [entry for entry in navigation.entries() if entry.label in labels]
            assert entries, f"{role} sees no navigation entry"
            for entry in entries:
                with page.expect_navigation() as opened:
                    page.locator("nav.mainnav").get_by_role("link", name=entry.label, exact=True).click()
                page.wait_for_load_state("networkidle")
                status = opened.value.status
                assert status == 200, (role, entry.label, page.url, status)
                text = page.inner_text("body")
                found = PLACEHOLDERS.search(text)
                assert found is None, (role, entry.label, found and found.group(0))
                page.screenshot(path=str(SCREENSHOTS / f"{role}-{entry.url_name}.png"), full_page=True)
                assert not errors, (role, entry.label, errors)
            visited[role] = [entry.label for entry in entries]

            if role == "researcher":
                version = BenchmarkVersion.objects.get(benchmark__slug="nleye", label="demo")
                page.goto(f"{live_server.url}/results/versions/{version.pk}/")
                page.wait_for_load_state("networkidle")
                cells = page.locator('#leaderboard td.metric[data-metric="triplet.consistency_accuracy"]')
                assert cells.count() >= 3
                for text in cells.all_inner_texts():
                    assert "not computed" not in text and re.search(r"n=\d+", text), text
                charts = page.locator("#charts img")
                assert charts.count() >= 1
                for index in range(charts.count()):
                    charts.nth(index).scroll_into_view_if_needed()
                page.wait_for_function("() => [...document.querySelectorAll('#charts img')]"
                                       ".every(image => image.complete && image.naturalWidth > 0)")
                page.screenshot(path=str(SCREENSHOTS / "researcher-demo-leaderboard.png"), full_page=True)
                assert not errors, errors
                for version in BenchmarkVersion.objects.filter(label="demo").select_related("benchmark"):
                    page.goto(f"{live_server.url}/results/versions/{version.pk}/")
                    page.wait_for_load_state("networkidle")
                    page.screenshot(path=str(SCREENSHOTS / f"leaderboard-{version.benchmark.slug}.png"),
                                    full_page=True)
                    fits = page.evaluate("""() => {
                        const table = document.querySelector('#leaderboard');
                        return {page: document.documentElement.scrollWidth - window.innerWidth,
                                table: table.scrollWidth - table.parentElement.clientWidth};
                    }""")
                    assert fits["page"] <= 0 and fits["table"] <= 0, (version.benchmark.slug, fits)
                    computed = page.locator("#leaderboard td.metric").all_inner_texts()
                    assert any(re.search(r"\d", text) and "not computed" not in text for text in computed)
                assert not errors, errors
        finally:
            context.close()
    assert set(visited) == {"annotator", "curator", "researcher", "admin"}
    assert len(visited["admin"]) == len(navigation.entries())
