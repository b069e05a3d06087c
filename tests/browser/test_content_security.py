"""The Content-Security-Policy and the Markdown sanitiser in a real Chromium.

* Script injected into a real page (an inline <script>, an inline event handler, a javascript: link) does not
  run under the page's own header, while the page's own scripts do; with the header taken away the same
  injection runs, so the check can tell.
* A study whose instructions and consent text hold known XSS vectors runs nothing for its worker, even with
  the policy taken away (the sanitiser alone holds).
* A walk of the platform's pages as each demo role, the admin and the API docs (Swagger UI, Redoc) meets no
  policy violation and no console error.
"""

import io
import re
from urllib.parse import urldefrag, urlsplit

import pytest
from django.core.management import call_command
from django.urls import Resolver404, resolve
from playwright.sync_api import expect

from annotation.demo import DEMO_USERS
from config.roles import ANNOTATOR

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(600),
    pytest.mark.filterwarnings("ignore:No directory at:UserWarning"),
]

HEADER = "content-security-policy"
# Read by the checks below: what the injected code would set, and what the browser reports as refused.
WATCH_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => window.__violations.push(
  `${event.effectiveDirective} blocked ${event.blockedURI || "inline"} at ${event.sourceFile}:${event.lineNumber}`));
"""
INJECTED = ('<script>window.__inline = 1;</script>'
            '<img id="injected-img" src="/static/frontend/favicon.svg" onload="window.__handler = 1">'
            '<a id="injected-link" href="javascript:void(window.__jsurl = 1)">injected</a>'
            '<p id="injected-style" style="color: rgb(255, 0, 0)">styled</p>')
FORM = {"fields": [{"name": "answer", "type": "free_text", "label": "Your answer"}]}
# each would open an alert if it ran (javascript: URLs whose value is undefined leave the page in place)
VECTORS = [
    "[hex entity](jav&#x61;script:alert(1))",
    "[decimal entity](jav&#97;script:alert(2))",
    "[first letter](&#106;avascript:alert(3))",
    "[named colon](javascript&colon;alert(4))",
    "[tab entity](jav&#x09;ascript:alert(5))",
    "[newline entity](java&#10;script:alert(6))",
    "[reference][r]\n\n[r]: jav&#x61;script:alert(7)",
    "[data](data&#58;text/html;base64,PHNjcmlwdD5hbGVydCg4KTwvc2NyaXB0Pg==)",
    "[![nested](jav&#x61;script:alert(9))](jav&#x61;script:alert(10))",
    "<img src=x onerror=alert(11)> <svg onload=alert(12)>",
    "<script>alert(13)</script>",
]


def injecting(route):
    """Serve the real page with INJECTED in its body, under the server's own headers."""
    response = route.fetch()
    body = response.text().replace("</main>", INJECTED + "</main>", 1)
    route.fulfill(response=response, body=body)


def injecting_without_policy(route):
    response = route.fetch()
    body = response.text().replace("</main>", INJECTED + "</main>", 1)
    headers = {name: value for name, value in response.headers.items() if name.lower() != HEADER}
    route.fulfill(response=response, body=body, headers=headers)


def without_policy(route):
    response = route.fetch()
    headers = {name: value for name, value in response.headers.items() if name.lower() != HEADER}
    route.fulfill(response=response, headers=headers)


def injected_effects(page) -> dict:
    page.locator("#injected-link").click()
    page.wait_for_timeout(200)
    return page.evaluate("""() => ({
        inline: window.__inline === 1, handler: window.__handler === 1, jsurl: window.__jsurl === 1,
        style: getComputedStyle(document.getElementById("injected-style")).color === "rgb(255, 0, 0)",
        own: typeof csrfToken === "function"})""")


def test_injected_inline_script_handler_and_javascript_url_do_not_run(live_server, browser_page, make_user, login):
    page = browser_page
    login(page, make_user("csp-annotator", ANNOTATOR))
    page.add_init_script(WATCH_VIOLATIONS)
    tasks = live_server.url + "/tasks/"

    page.route(tasks, injecting)
    response = page.goto(tasks)
    assert "script-src 'self'" in response.headers[HEADER]
    expect(page.locator("#injected-link")).to_be_visible()
    assert injected_effects(page) == {"inline": False, "handler": False, "jsurl": False, "style": False,
                                      "own": True}
    refused = " | ".join(page.evaluate("window.__violations"))
    assert "script-src-elem blocked inline" in refused and "script-src-attr blocked inline" in refused
    assert "style-src-attr blocked inline" in refused

    # the same page and injection without the header: everything runs, so the check above can fail
    page.unroute(tasks)
    page.route(tasks, injecting_without_policy)
    page.goto(tasks)
    assert injected_effects(page) == {"inline": True, "handler": True, "jsurl": True, "style": True, "own": True}
    page.csp_violations.clear()  # the refusals this test provoked on purpose


def test_xss_in_instructions_and_consent_runs_nothing_even_without_the_policy(live_server, browser_page, make_user,
                                                                               login, transactional_db):
    from tests.conftest import create_study

    markdown = "\n\n".join(VECTORS)
    study = create_study("xss-study", form=FORM, instructions="# Steps\n\n" + markdown,
                         consent_text="## Consent\n\n" + markdown)
    page = browser_page
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    login(page, make_user("xss-annotator", ANNOTATOR))
    work = f"{live_server.url}/work/{study.slug}/"
    page.route(re.compile(re.escape(work) + r"$"), without_policy)
    page.goto(work)
    links = page.locator("[data-consent] .markdown a, .markdown.consent a")
    assert links.count() == len(VECTORS) - 2  # the raw HTML is shown as text
    for index in range(links.count()):
        links.nth(index).click()
    page.wait_for_timeout(300)
    assert page.url == work and dialogs == []
    expect(page.get_by_text("<script>alert(13)</script>")).to_be_visible()

    page.get_by_role("button", name="I agree, start").click()
    expect(page.locator("[data-external-id]")).to_be_visible()
    instructions = page.locator(".markdown a")
    for index in range(instructions.count()):
        if instructions.nth(index).is_visible():
            instructions.nth(index).click()
    page.wait_for_timeout(300)
    assert dialogs == [] and page.js_errors == []


# --- A walk of the platform's pages --------------------------------------------------------------

SKIP = re.compile(r"/logout/|/api/(?!docs/|redoc/)|/media/|/static/|download|\.(csv|zip|json|jsonl|parquet|png|svg)"
                  r"(\?|$)|/admin/jsi18n/|/delete/|/language/")
PAGES_PER_ROLE = 60
PER_STUDY = {"crowd-work"}
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


def console_errors(page, problems: list[str]):
    """Record the page's console errors; the admin's pages name no icon, so Chrome's /favicon.ico 404 is left out."""
    def record(message):
        url = message.location.get("url") or ""
        if message.type == "error" and not url.endswith("/favicon.ico"):
            problems.append(f"{page.url}: console {message.text} ({url})")
    page.on("console", record)
    page.on("pageerror", lambda exc: problems.append(f"{page.url}: {exc}"))


def page_kind(url: str) -> str:
    """One page per route (ids and query strings apart); a worker's task page once per study, since each
    study kind draws its own; the admin's pages once per kind of admin view."""
    match = resolve(urlsplit(url).path)
    if match.url_name in PER_STUDY:
        return f"{match.route}:{match.kwargs['slug']}"
    if hasattr(match.func, "model_admin"):  # <app>_<model>_changelist, _add, _change, _history, _delete
        return "admin:" + match.url_name.rsplit("_", 1)[-1]
    return match.route


def walk(page, base: str, start: list[str], walked: set[str], problems: list[str]) -> list[str]:
    """Breadth-first over same-site links from `start`, each kind of page once and PAGES_PER_ROLE at most.

    A kind an earlier role walked (in `walked`) is opened again only as one of this role's entry pages (the
    start pages and the links on them: the navigation), to reach the pages behind it."""
    queue, seen, visited = [(base + path, 0) for path in start], set(), []
    while queue and len(visited) < PAGES_PER_ROLE:
        url, depth = queue.pop(0)
        url = urldefrag(url).url
        if not url.startswith(base) or SKIP.search(url[len(base):]):
            continue
        try:
            kind = page_kind(url)
        except Resolver404:
            continue
        if kind in seen or (kind in walked and depth > 1):
            continue
        seen.add(kind)
        head = page.context.request.get(url, max_redirects=0)
        if head.status != 200 or not head.headers.get("content-type", "").startswith("text/html"):
            continue
        page.goto(url)
        page.wait_for_load_state("networkidle")
        problems.extend(f"{url}: {v}" for v in page.evaluate("window.__violations || []"))
        visited.append(url)
        hrefs = page.locator("a[href]").evaluate_all("links => links.map(link => link.href)")
        queue.extend((href, depth + 1) for href in hrefs if href.startswith(base))
    walked |= seen
    return visited


@pytest.fixture
def demo(transactional_db, media_root):
    call_command("seed_demo", stdout=io.StringIO())


@pytest.mark.timeout(900)
def test_walk_of_every_role_meets_no_policy_violation(live_server, _chromium, demo):
    base = live_server.url
    visited, walked = {}, set()
    for username, password, role in DEMO_USERS:
        context = _chromium.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(20_000)
        page = context.new_page()
        problems = []
        page.add_init_script(WATCH_VIOLATIONS)
        console_errors(page, problems)
        try:
            page.goto(base + "/login/")
            page.get_by_label("Username").fill(username)
            page.get_by_label("Password").fill(password)
            page.get_by_role("button", name="Log in").click()
            page.wait_for_url(base + "/")
            start = ["/", "/admin/", "/admin/auth/user/", "/admin/auth/user/add/"] if role == "admin" else ["/"]
            visited[role] = walk(page, base, start, walked, problems)
            assert problems == [], (role, problems)
        finally:
            context.close()
    assert all(len(pages) >= 5 for pages in visited.values()), {role: len(p) for role, p in visited.items()}
    assert any("/admin/" in url for url in visited["admin"])


def test_api_docs_and_admin_work_under_the_policy(live_server, browser_page, make_user, login, transactional_db):
    from django.contrib.auth import get_user_model

    page = browser_page
    problems = []
    page.add_init_script(WATCH_VIOLATIONS)
    console_errors(page, problems)
    admin = get_user_model().objects.create_superuser("csp-admin", password="browser-test-pass-1")
    admin.test_password = "browser-test-pass-1"
    login(page, admin)

    page.goto(live_server.url + "/api/docs/")
    expect(page.locator(".opblock").first).to_be_visible(timeout=30_000)
    problems.extend(page.evaluate("window.__violations"))
    page.goto(live_server.url + "/api/redoc/")
    expect(page.get_by_role("heading", name=re.compile("Vision-language benchmark platform API"))).to_be_visible(
        timeout=30_000)
    problems.extend(page.evaluate("window.__violations"))

    # the admin: a list with its filters and actions, a form with its widgets, saved
    page.goto(live_server.url + "/admin/auth/group/add/")
    page.locator("#id_name").fill("csp-group")
    page.locator("#id_permissions_input").fill("can view group")
    page.locator("#id_permissions_from").select_option(index=0)
    page.locator("#id_permissions_add").click()
    expect(page.locator("#id_permissions_to option")).to_have_count(1)
    problems.extend(page.evaluate("window.__violations"))
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text("csp-group")
    page.goto(live_server.url + "/admin/auth/group/")
    page.locator("input.action-select").first.check()
    expect(page.locator(".action-counter")).to_contain_text("1 of")
    problems.extend(page.evaluate("window.__violations"))
    # Redoc's bundle always asks Redocly's site for its logo; the policy refuses it, which is what it is for
    unexpected = [problem for problem in problems if REDOC_LOGO not in problem]
    assert unexpected == [] and page.js_errors == [], unexpected
    page.csp_violations[:] = [refusal for refusal in page.csp_violations if REDOC_LOGO not in refusal]
