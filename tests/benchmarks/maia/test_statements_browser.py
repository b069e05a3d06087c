"""MAIA statements in a real browser: a curator proposes a question's true statements on the statement
console, then its false statements; after accepting them, runs the statement checks from the statements
page (a background job on a real worker), finds the one failing pair there and regenerates it with a
model picked once on the page; the new proposal carries the failing statement and waits for a decision."""

import time

import pytest
from playwright.sync_api import expect

from annotation.benchmarks.maia import stages, statement_checks, statement_generation
from annotation.curation_models import CurationRecord
from annotation.models import Benchmark, BenchmarkVersion
from config.roles import CURATOR
from generation import proposals
from generation.models import Job, Proposal
from tests.benchmarks.maia.test_statements import (
    forced_nli,  # noqa: F401 (fixture)
    make_question,
    scripted,  # noqa: F401 (fixture)
    trues_of,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]

NOT_MINIMAL = "Un uomo lava i piatti sporchi in una cucina buia."


def wait_for_job(job_id: int) -> Job:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        job = Job.objects.get(pk=job_id)
        if job.is_finished:
            return job
        time.sleep(0.1)
    raise AssertionError(f"job #{job_id} did not finish")


def pick_model(page) -> None:
    page.locator("#start-model").select_option("scripted-statements")  # a registered model


def test_propose_accept_check_and_regenerate(live_server, browser_page, make_user, login, celery_worker,
                                            scripted, forced_nli):  # noqa: F811
    curator = make_user("cora", CURATOR)
    version = BenchmarkVersion.objects.create(benchmark=Benchmark.objects.get(slug="maia"), label="curation-b")
    item = make_question(version, 1, curator)
    page = login(browser_page, curator)

    page.goto(live_server.url + "/maia/categories/")
    page.locator(f'tr[data-version="{version.pk}"]').get_by_role("link", name="statement generation").click()
    pick_model(page)
    page.get_by_role("button", name="Propose true statements (1 question(s))").click()
    expect(page.locator("#start-status .set-job")).to_contain_text("Job #")
    [true_proposal] = Proposal.objects.filter(task_kind=statement_generation.TRUE_KIND)
    wait_for_job(true_proposal.proposal_set.job_id)
    true_proposal.refresh_from_db()
    assert true_proposal.fields["statement_1"] == trues_of(1)[0]
    proposals.decide(true_proposal, curator, "accept")

    page.reload()
    expect(page.locator(f'tr[data-item-id="{item.pk}"]')).to_have_attribute("data-stage", stages.STATEMENTS)
    page.screenshot(path="/tmp/maia_statement_console.png", full_page=True)
    pick_model(page)
    page.get_by_role("button", name="Propose false statements (8 pair(s))").click()
    expect(page.locator("#start-status .set-job")).to_contain_text("Job #")
    falses = Proposal.objects.filter(task_kind=statement_generation.FALSE_KIND)
    wait_for_job(falses.first().proposal_set.job_id)
    for proposal in falses.order_by("pk"):
        if proposal.inputs["index"] == 2:
            proposals.decide(proposal, curator, "correct", fields={"false_statement": NOT_MINIMAL})
        else:
            proposals.decide(proposal, curator, "accept")

    page.goto(live_server.url + f"/maia/versions/{version.pk}/statements/")
    page.locator("#nli-model").select_option("forced-contradiction")
    page.get_by_role("button", name="Run statement checks").click()
    expect(page.locator(".messages")).to_contain_text("Statement checks queued as job #")
    job = wait_for_job(Job.objects.get(kind=statement_checks.JOB_KIND).pk)
    assert job.status == Job.Status.SUCCEEDED, job.message
    page.reload()
    failing = page.locator(f'#item-{item.pk} tr[data-index="2"]')
    expect(failing).to_contain_text("not a minimal pair")
    assert CurationRecord.objects.get(item=item).stage == stages.STATEMENTS

    pick_model(page)
    failing.get_by_role("button", name="Regenerate").click()
    page.screenshot(path="/tmp/maia_statements_page.png", full_page=True)
    expect(page.locator("#start-status .set-job")).to_contain_text("Job #")
    regenerated = Proposal.objects.filter(task_kind=statement_generation.FALSE_KIND, inputs__index=2).latest("pk")
    assert regenerated.inputs["previous_false_statement"] == NOT_MINIMAL
    assert wait_for_job(regenerated.proposal_set.job_id).status == Job.Status.SUCCEEDED
    regenerated.refresh_from_db()
    assert regenerated.status == "ok" and regenerated.outcome == "undecided"
    assert page.js_errors == []
