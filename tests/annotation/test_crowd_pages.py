"""The crowd work pages: the worker's task and completion pages, the crowd platforms' entry links,
"My tasks", and the curators' study, review-queue and payment pages (Django test client)."""

import csv
import io
import re

import pytest
from django.contrib.admin.sites import site as admin_site
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.crowd import assignment, review, submissions
from annotation.crowd.models import Claim, Draft, PlatformEntry, Study, StudyItem, Submission, WorkerProfile
from annotation.crowd.study_forms import StudySettingsForm
from config.roles import ADMIN, ANNOTATOR, CURATOR, RESEARCHER
from frontend import crowd_views
from tests.conftest import create_study, make_user

pytestmark = pytest.mark.django_db

FORM = {"fields": [
    {"name": "description", "type": "free_text", "label": "Describe the picture.", "min_length": 5,
     "max_length": 200},
    {"name": "person", "type": "single_choice", "label": "Is there a person?", "options": ["yes", "no"],
     "explanation": "optional", "certainty": True},
    {"name": "objects", "type": "multi_select", "label": "Which objects are visible?", "candidates_from": "candidates"},
    {"name": "clarity", "type": "likert", "label": "How clear is it?", "min": 1, "max": 5,
     "labels": {"1": "not at all", "5": "perfectly clear"}},
    {"name": "facts", "type": "yes_no_statements", "label": "True or not?", "statements_from": "statements"},
]}
CANDIDATES = [{"id": f"c{n}", "text": f"object number {n}"} for n in range(6)]
STATEMENTS = [{"id": "s1", "text": "The sky is visible."}, {"id": "s2", "text": "It is night."}]
GOOD = {"description": "A dog on a sofa.", "person": "no", "person_certainty": "certain", "objects": ["c1"],
        "clarity": 4, "facts": {"s1": "yes", "s2": "no"}}


def client_for(user) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def make_study(slug="pictures", *, items=3, k=1, state=Study.State.OPEN, **fields) -> Study:
    fields = {"instructions": "Look **carefully** at each picture.",
              "estimated_minutes": 2, "pay_per_item": "0.25", "currency": "GBP", "completion_code": "C0DE42",
              **fields}
    return create_study(slug, form=FORM, items=items, k=k, state=state, name=slug.title(), payload=lambda n: {
        "query": f"Question about picture {n}", "candidates": CANDIDATES, "statements": STATEMENTS}, **fields)


def external_id(response) -> str:
    match = re.search(r"<code data-external-id>([^<]+)</code>", response.content.decode())
    assert match, "the task page shows no item"
    return match.group(1)


@pytest.fixture
def study(db):
    return make_study()


@pytest.fixture
def prolific_study(db):
    return make_study("on-prolific", recruitment_platform="prolific", platform_study_id="st123")


@pytest.fixture
def mturk_study(db):
    return make_study("on-mturk", recruitment_platform="mturk")


@pytest.fixture
def alice(db):
    return make_user("alice", ANNOTATOR)


@pytest.fixture
def bob(db):
    return make_user("bob", ANNOTATOR)


@pytest.fixture
def people(db):
    return {ANNOTATOR: make_user("ann", ANNOTATOR), CURATOR: make_user("cur", CURATOR),
            RESEARCHER: make_user("res", RESEARCHER), ADMIN: make_user("adm", ADMIN)}


# --- Who may open which page ------------------------------------------------------------------

@pytest.mark.parametrize(("name", "allowed"), [
    ("crowd-work", {ANNOTATOR, CURATOR, ADMIN}),
    ("crowd-work-done", {ANNOTATOR, CURATOR, ADMIN}),
    ("crowd-studies", {CURATOR, ADMIN}),
    ("crowd-study-detail", {CURATOR, ADMIN}),
    ("crowd-study-queue", {CURATOR, RESEARCHER, ADMIN}),  # whoever reads submissions (annotation.crowd.access)
    ("crowd-study-payments", {CURATOR, ADMIN}),
])
def test_pages_render_for_their_roles_only(study, people, name, allowed):
    url = reverse(name) if name == "crowd-studies" else reverse(name, kwargs={"slug": study.slug})
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    for role, user in people.items():
        response = client_for(user).get(url)
        if name == "crowd-study-payments" and response.status_code == 200:
            b"".join(response.streaming_content)
        assert response.status_code == (200 if role in allowed else 403), (name, role)


def test_entry_views_are_marked_public():
    assert crowd_views.prolific_entry.allowed_roles == "public"
    assert crowd_views.mturk_entry.allowed_roles == "public"


def test_curators_see_studies_in_navigation(people):
    assert b'data-nav="Studies"' in client_for(people[CURATOR]).get(reverse("home")).content
    assert b'data-nav="Studies"' not in client_for(people[ANNOTATOR]).get(reverse("home")).content


# --- The worker's task page -------------------------------------------------------------------

def test_opening_the_work_page_claims_nothing_and_its_button_does(study, alice):
    """GET (and HEAD) only show: the page's button POSTs, with its CSRF token, and that claims the item."""
    url = reverse("crowd-work", kwargs={"slug": study.slug})
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    page = client.get(url)
    assert page.status_code == 200
    assert client.head(url).status_code == 200
    assert not Claim.objects.exists()
    assert StudyItem.objects.filter(study=study, open_slots=1).count() == 3  # no place taken
    html = page.content.decode()
    form = re.search(r'<form method="post" action="([^"]+)" class="next-item-form">(.*?)</form>', html, re.S)
    assert form and form.group(1) == url
    assert 'id="next-item" type="submit"' in form.group(2) and "3 items are waiting for you" in html
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.group(2)).group(1)

    assert client.post(url).status_code == 403  # no CSRF token: refused, nothing claimed
    assert not Claim.objects.exists()
    started = client.post(url, {"csrfmiddlewaretoken": token})
    assert started.status_code == 302 and started["Location"] == url
    claim = Claim.objects.get(worker=alice, status=Claim.Status.ACTIVE)
    for _ in range(2):  # the page shows that item, however often it is opened
        assert f'data-claim-id="{claim.pk}"' in client.get(url).content.decode()
    assert Claim.objects.count() == 1


def test_the_next_item_button_of_the_task_page_posts_to_the_work_page(study, alice):
    client = client_for(alice)
    url = reverse("crowd-work", kwargs={"slug": study.slug})
    html = client.post(url, follow=True).content.decode()
    result = re.search(r'<section id="task-result".*?</section>', html, re.S).group(0)
    assert re.search(rf'<form method="post" action="{url}" class="next-item-form">.*csrfmiddlewaretoken.*'
                     r'<button id="next-item" type="submit"', result, re.S)
    assert f'href="{url}"' not in result  # no plain link that a GET would follow


def test_task_page_shows_item_form_and_instructions(study, alice):
    response = client_for(alice).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    assert response.status_code == 200
    page = response.content.decode()
    claim = Claim.objects.get(worker=alice)
    assert external_id(response) == claim.item.external_id
    assert f'data-claim-id="{claim.pk}"' in page
    assert f"Question about picture {claim.item.external_id[-1]}" in page
    assert "<strong>carefully</strong>" in page
    assert "2 min per item" in page and "0.25 GBP" in page
    # every field type is drawn
    assert 'maxlength="200"' in page and 'name="description"' in page
    assert page.count('name="person"') == 2 and page.count('name="person_certainty"') == 3
    assert 'name="person_explanation"' in page
    assert page.count('name="clarity"') == 5 and "not at all" in page and "perfectly clear" in page
    assert page.count('type="checkbox" name="objects"') == len(CANDIDATES)
    assert page.count('data-statement="s1"') == 2 and "The sky is visible." in page
    assert "frontend/task.js" in page


def test_multi_select_follows_the_workers_recorded_order(study, alice):
    page = client_for(alice).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True).content.decode()
    claim = Claim.objects.get(worker=alice)
    shown = re.findall(r'type="checkbox" name="objects" value="([^"]+)"', page)
    assert shown == claim.presentation["orders"]["objects"]
    assert sorted(shown) == sorted(c["id"] for c in CANDIDATES)


def test_reload_shows_the_same_item_with_the_saved_draft(study, alice):
    client = client_for(alice)
    url = reverse("crowd-work", kwargs={"slug": study.slug})
    first = client.post(url, follow=True)
    claim = Claim.objects.get(worker=alice)
    submissions.save_draft(claim, alice, {
        "description": "A half-written <answer>", "person": "yes", "person_explanation": "a hand",
        "person_certainty": "uncertain", "objects": ["c2", "c4"], "clarity": 2, "facts": {"s2": "yes"},
    })
    again = client.get(url)
    page = again.content.decode()
    assert external_id(again) == external_id(first)
    assert Claim.objects.filter(worker=alice).count() == 1
    assert "A half-written &lt;answer&gt;</textarea>" in page
    assert 'value="yes" data-part="choice" checked' in page
    assert ">a hand</textarea>" in page
    assert 'value="uncertain" data-part="certainty" checked' in page
    assert 'value="c2" data-part="choice" checked' in page and 'value="c4" data-part="choice" checked' in page
    assert 'value="c1" data-part="choice" checked' not in page
    assert 'name="clarity" value="2" data-part="choice" checked' in page
    assert re.search(r'value="yes" data-part="statement" data-statement="s2" checked', page)
    assert "Draft restored" in page


def test_instructions_markdown_shows_no_raw_html_or_script_links(alice):
    study = make_study("unsafe", instructions="# Steps\n\n<script>alert(1)</script>\n\n"
                                             "Click [here](javascript:alert(2)) "
                                             "or [there](https://example.org/) <b onclick=x>bold</b>")
    page = client_for(alice).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True).content.decode()
    assert "<h1>Steps</h1>" in page
    assert "<script>alert(1)" not in page and "&lt;script&gt;" in page
    assert "javascript:" not in page
    assert '<a href="https://example.org/" rel="noopener noreferrer">there</a>' in page
    assert "<b onclick" not in page


def test_another_worker_never_sees_someone_elses_claim(study, alice, bob):
    alice_page = client_for(alice).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    alice_claim = Claim.objects.get(worker=alice)
    submissions.save_draft(alice_claim, alice, {"description": "alice's secret words"})
    bob_page = client_for(bob).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    assert bob_page.status_code == 200
    assert external_id(bob_page) != external_id(alice_page)
    assert "alice&#x27;s secret words" not in bob_page.content.decode()
    assert f'data-claim-id="{alice_claim.pk}"' not in bob_page.content.decode()
    bob_api = APIClient()
    bob_api.force_authenticate(bob)
    assert bob_api.get(f"/api/claims/{alice_claim.pk}/").status_code == 404
    refused = bob_api.put(f"/api/claims/{alice_claim.pk}/draft/", {"data": {"description": "mine"}}, format="json")
    assert refused.status_code == 404  # like the claim itself
    assert Draft.objects.get(claim=alice_claim).data == {"description": "alice's secret words"}


def test_no_item_left_page_shows_the_code_only_to_a_worker_who_handed_in_work(alice, bob):
    study = make_study("single", items=1, completion_url="https://app.prolific.com/submissions/complete?cc=C0DE42")
    client_for(alice).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    response = client_for(bob).get(reverse("crowd-work", kwargs={"slug": study.slug}))
    assert response.status_code == 200
    page = response.content.decode()
    assert "No item left for you" in page
    assert "C0DE42" not in page  # bob handed in nothing
    assert "you have handed in 0" in page
    assert not Claim.objects.filter(worker=bob).exists()
    submissions.submit(Claim.objects.get(worker=alice), alice, GOOD)
    page = client_for(alice).get(reverse("crowd-work", kwargs={"slug": study.slug})).content.decode()
    assert "No item left for you" in page and "C0DE42" in page
    assert reverse("crowd-work-done", kwargs={"slug": study.slug}) in page


@pytest.mark.parametrize(("setup", "status", "message"), [
    ("closed", 409, "is closed"),
    ("paused", 409, "is paused"),
    ("excluded", 403, "not open to your account"),
    ("attribute", 403, "native language it"),
])
def test_refusals_are_pages_with_their_status(study, alice, setup, status, message):
    if setup in ("closed", "paused"):
        study.state = setup
        study.save()
    elif setup == "excluded":
        study.exclude_workers.add(alice)
    else:
        study.required_attributes = {"native_language": "it"}
        study.save()
    response = client_for(alice).get(reverse("crowd-work", kwargs={"slug": study.slug}))
    assert response.status_code == status
    assert message in response.content.decode()
    assert not Claim.objects.filter(worker=alice).exists()


def test_unknown_study_is_404(alice):
    assert client_for(alice).get(reverse("crowd-work", kwargs={"slug": "nope"})).status_code == 404


def test_done_page_shows_code_and_link_only_after_the_required_submissions(alice):
    study = make_study("finish", required_submissions=2,
                       completion_url="https://app.prolific.com/submissions/complete?cc=C0DE42")
    done = reverse("crowd-work-done", kwargs={"slug": study.slug})
    client = client_for(alice)
    for handed_in in range(2):
        page = client.get(done).content.decode()
        assert "C0DE42" not in page, handed_in  # neither the code nor the link that carries it
        assert "data-completion-pending" in page and f"you have handed in {handed_in}" in page
        assert f"Hand in {2 - handed_in} more" in page
        client.post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
        submissions.submit(Claim.objects.get(worker=alice, status=Claim.Status.ACTIVE), alice, GOOD)
    page = client.get(done).content.decode()
    assert "C0DE42" in page and "data-completion-pending" not in page
    assert 'href="https://app.prolific.com/submissions/complete?cc=C0DE42"' in page
    assert "externalSubmit" not in page


def test_done_page_shows_no_code_to_a_worker_with_only_an_item_in_progress(alice):
    study = make_study("half-way")
    client = client_for(alice)
    client.post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    submissions.save_draft(Claim.objects.get(worker=alice), alice, {"description": "a dog"})
    page = client.get(reverse("crowd-work-done", kwargs={"slug": study.slug})).content.decode()
    assert "C0DE42" not in page and "Not finished yet" in page


# --- Crowd platform entry links ---------------------------------------------------------------

PROLIFIC_PARAMS = {"PROLIFIC_PID": "5f1e2d3c4b5a69788796a5b4", "STUDY_ID": "st123", "SESSION_ID": "se456"}
MTURK_PARAMS = {"workerId": "A1B2C3D4E5F6G7", "assignmentId": "3ASSIGN0001", "hitId": "3HIT0001",
                "turkSubmitTo": "https://workersandbox.mturk.com"}


def test_prolific_link_creates_the_worker_and_starts_work(prolific_study):
    study = prolific_study
    client = Client()
    url = reverse("crowd-entry-prolific", kwargs={"slug": study.slug})
    response = client.get(url, PROLIFIC_PARAMS)
    assert response.status_code == 302
    assert response["Location"] == reverse("crowd-work", kwargs={"slug": study.slug})
    user = get_user_model().objects.get(username="prolific-5f1e2d3c4b5a69788796a5b4")
    assert not user.has_usable_password()
    assert list(user.groups.values_list("name", flat=True)) == [ANNOTATOR]
    profile = WorkerProfile.objects.get(user=user)
    assert (profile.platform, profile.platform_worker_id) == ("prolific", PROLIFIC_PARAMS["PROLIFIC_PID"])
    assert int(client.session["_auth_user_id"]) == user.pk
    assert client.session["crowd_platform"][study.slug]["ids"] == {"STUDY_ID": "st123", "SESSION_ID": "se456"}
    start = client.get(response["Location"])
    assert start.status_code == 200 and "data-start" in start.content.decode()
    assert not Claim.objects.filter(worker=user).exists()  # opening the page takes nothing
    work = client.post(response["Location"], follow=True)
    assert work.status_code == 200
    assert Claim.objects.filter(worker=user, status=Claim.Status.ACTIVE).count() == 1
    # a second visit finds the same account
    assert Client().get(url, PROLIFIC_PARAMS).status_code == 302
    assert get_user_model().objects.filter(username__startswith="prolific-").count() == 1


@pytest.mark.parametrize("params", [
    {},
    {"PROLIFIC_PID": "abc", "STUDY_ID": "st"},
    {**PROLIFIC_PARAMS, "PROLIFIC_PID": "<script>"},
    {**PROLIFIC_PARAMS, "SESSION_ID": "  "},
])
def test_prolific_link_with_bad_parameters_is_400(prolific_study, params):
    study = prolific_study
    response = Client().get(reverse("crowd-entry-prolific", kwargs={"slug": study.slug}), params)
    assert response.status_code == 400
    assert "Prolific link" in response.content.decode()
    assert not get_user_model().objects.filter(username__startswith="prolific-").exists()


def test_entry_link_never_logs_into_a_local_account(prolific_study):
    study = prolific_study
    local = make_user("prolific-abc", CURATOR)
    client = Client()
    response = client.get(reverse("crowd-entry-prolific", kwargs={"slug": study.slug}),
                          {**PROLIFIC_PARAMS, "PROLIFIC_PID": "abc"})
    assert response.status_code == 403
    assert "_auth_user_id" not in client.session
    assert not WorkerProfile.objects.filter(user=local, platform="prolific").exists()


def test_mturk_link_creates_the_worker_and_the_hit_goes_back_to_mturk(mturk_study):
    study = mturk_study
    client = Client()
    response = client.get(reverse("crowd-entry-mturk", kwargs={"slug": study.slug}), MTURK_PARAMS)
    assert response.status_code == 302
    assert response["Location"] == reverse("crowd-work", kwargs={"slug": study.slug})
    assert "frame-ancestors" in response["Content-Security-Policy"]
    user = get_user_model().objects.get(username="mturk-A1B2C3D4E5F6G7")
    assert WorkerProfile.objects.get(user=user).platform == "mturk"
    start = client.get(response["Location"])
    assert start.status_code == 200 and "X-Frame-Options" not in start and not Claim.objects.exists()
    work = client.post(response["Location"], follow=True)
    assert work.status_code == 200 and "X-Frame-Options" not in work
    claim = Claim.objects.get(worker=user)
    assert claim.platform_assignment_id == "3ASSIGN0001"
    done_url = reverse("crowd-work-done", kwargs={"slug": study.slug})
    before = client.get(done_url).content.decode()
    assert "nothing to submit to Mechanical Turk" in before
    submissions.submit(claim, user, GOOD)
    page = client.get(done_url).content.decode()
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in page
    assert 'name="assignmentId" value="3ASSIGN0001"' in page
    assert "data-autosubmit" in page


def test_mturk_preview_shows_the_task_read_only_without_claim_or_user(mturk_study):
    study = mturk_study
    users = get_user_model().objects.count()
    client = Client()
    response = client.get(reverse("crowd-entry-mturk", kwargs={"slug": study.slug}),
                          {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "3HIT0001"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "Preview" in page
    assert '<fieldset id="task-fields" class="plain" disabled>' in page
    assert external_id(response) == StudyItem.objects.filter(study=study).order_by("id").first().external_id
    assert "data-claim-id" not in page
    assert not Claim.objects.exists()
    assert get_user_model().objects.count() == users
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize("params", [
    {},
    {"workerId": "A1", "assignmentId": "X1", "hitId": "H1"},
    {**MTURK_PARAMS, "turkSubmitTo": "https://evil.example.com"},
    {**MTURK_PARAMS, "turkSubmitTo": "http://www.mturk.com"},
    {**MTURK_PARAMS, "workerId": ""},
])
def test_mturk_link_with_bad_parameters_is_400(mturk_study, params):
    study = mturk_study
    response = Client().get(reverse("crowd-entry-mturk", kwargs={"slug": study.slug}), params)
    assert response.status_code == 400
    assert "Mechanical Turk link" in response.content.decode()
    assert not get_user_model().objects.filter(username__startswith="mturk-").exists()


@pytest.mark.parametrize(("recruitment", "platform_id", "link", "params"), [
    ("none", "", "crowd-entry-prolific", PROLIFIC_PARAMS),
    ("mturk", "", "crowd-entry-prolific", PROLIFIC_PARAMS),
    ("prolific", "other-study", "crowd-entry-prolific", PROLIFIC_PARAMS),
    ("none", "", "crowd-entry-mturk", MTURK_PARAMS),
    ("prolific", "st123", "crowd-entry-mturk", MTURK_PARAMS),
    ("mturk", "3HIT-OTHER", "crowd-entry-mturk", MTURK_PARAMS),
    ("mturk", "3HIT-OTHER", "crowd-entry-mturk", {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "3HIT0001"}),
])
def test_an_entry_link_of_another_platform_or_run_is_404_and_creates_nothing(recruitment, platform_id, link, params):
    study = make_study("elsewhere", recruitment_platform=recruitment, platform_study_id=platform_id)
    users = get_user_model().objects.count()
    client = Client()
    response = client.get(reverse(link, kwargs={"slug": study.slug}), params)
    assert response.status_code == 404
    assert "C0DE42" not in response.content.decode()
    assert get_user_model().objects.count() == users
    assert not WorkerProfile.objects.exists() and not Claim.objects.exists()
    assert "_auth_user_id" not in client.session


def test_made_up_prolific_ids_cannot_take_several_places_of_an_item():
    study = make_study("one-place", items=1, k=2)  # recruits on no platform
    url = reverse("crowd-entry-prolific", kwargs={"slug": study.slug})
    for pid in ("fake1", "fake2", "fake3"):
        assert Client().get(url, {**PROLIFIC_PARAMS, "PROLIFIC_PID": pid}).status_code == 404
    assert not Claim.objects.exists()
    assert StudyItem.objects.get(study=study).open_slots == 2


def test_the_mturk_hit_named_by_the_study_is_let_in():
    study = make_study("named-hit", recruitment_platform="mturk", platform_study_id="3HIT0001")
    response = Client().get(reverse("crowd-entry-mturk", kwargs={"slug": study.slug}), MTURK_PARAMS)
    assert response.status_code == 302


def test_entry_links_are_rate_limited_per_client_address(prolific_study, settings):
    settings.CROWD_ENTRY_RATE_LIMIT, settings.CROWD_ENTRY_RATE_WINDOW = 3, 60
    url = reverse("crowd-entry-prolific", kwargs={"slug": prolific_study.slug})
    for n in range(3):
        response = Client(REMOTE_ADDR="198.51.100.7").get(url, {**PROLIFIC_PARAMS, "PROLIFIC_PID": f"pid{n}"})
        assert response.status_code == 302
    refused = Client(REMOTE_ADDR="198.51.100.7").get(url, {**PROLIFIC_PARAMS, "PROLIFIC_PID": "pid3"})
    assert refused.status_code == 429
    assert "wait a minute" in refused.content.decode()
    assert not get_user_model().objects.filter(username="prolific-pid3").exists()
    # the limit counts every entry link of the address, also to unknown studies
    unknown = Client(REMOTE_ADDR="198.51.100.7").get(reverse("crowd-entry-mturk", kwargs={"slug": "nope"}))
    assert unknown.status_code == 429
    # another address is not held back
    other = Client(REMOTE_ADDR="203.0.113.9").get(url, {**PROLIFIC_PARAMS, "PROLIFIC_PID": "pid3"})
    assert other.status_code == 302


def test_behind_a_proxy_the_rate_limit_reads_the_configured_address_header(prolific_study, settings):
    settings.CROWD_ENTRY_RATE_LIMIT = 1
    settings.CLIENT_ADDRESS_HEADER = "X-Real-IP"
    url = reverse("crowd-entry-prolific", kwargs={"slug": prolific_study.slug})
    proxy = "10.0.0.1"
    first = Client(REMOTE_ADDR=proxy, HTTP_X_REAL_IP="198.51.100.1").get(url, PROLIFIC_PARAMS)
    second = Client(REMOTE_ADDR=proxy, HTTP_X_REAL_IP="198.51.100.2").get(url, PROLIFIC_PARAMS)
    again = Client(REMOTE_ADDR=proxy, HTTP_X_REAL_IP="198.51.100.1").get(url, PROLIFIC_PARAMS)
    assert (first.status_code, second.status_code, again.status_code) == (302, 302, 429)


# --- Entry bound to the platform's session -----------------------------------------------------

def enter_and_answer(client, link, study, params, answer=GOOD):
    """The worker opens the link, gets an item and hands in `answer`; their claim."""
    assert client.get(reverse(link, kwargs={"slug": study.slug}), params).status_code == 302
    assert client.post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True).status_code == 200
    user = get_user_model().objects.get(pk=client.session["_auth_user_id"])
    claim = Claim.objects.get(worker=user, study=study, status=Claim.Status.ACTIVE)
    submissions.submit(claim, user, answer)
    return claim


def test_a_known_prolific_pid_with_another_session_neither_signs_in_nor_shows_the_answers(prolific_study):
    worker = Client()
    claim = enter_and_answer(worker, "crowd-entry-prolific", prolific_study,
                             {**PROLIFIC_PARAMS}, {**GOOD, "description": "My private answer."})
    past = reverse("crowd-past-answer", args=[claim.pk])
    assert "My private answer." in worker.get(past).content.decode()

    replay = Client()
    response = replay.get(reverse("crowd-entry-prolific", kwargs={"slug": prolific_study.slug}),
                          {**PROLIFIC_PARAMS, "SESSION_ID": "another-session"})

    assert response.status_code == 409
    page = response.content.decode()
    assert "Started from another session" in page and "another Prolific session with this worker id" in page
    assert "My private answer." not in page
    assert "_auth_user_id" not in replay.session
    assert replay.get(past).status_code == 302  # to the login page: nobody is signed in
    assert "My private answer." not in replay.get(reverse("my-tasks"), follow=True).content.decode()
    entry = PlatformEntry.objects.get()
    assert (entry.session_id, entry.run, entry.refused_entries, entry.worker) == ("se456", "", 1, claim.worker)


def test_the_same_prolific_session_comes_back_in(prolific_study):
    """A refresh and a closed tab (a new browser with the same link) reach the worker's work again."""
    first = Client()
    claim = enter_and_answer(first, "crowd-entry-prolific", prolific_study, PROLIFIC_PARAMS)
    url = reverse("crowd-entry-prolific", kwargs={"slug": prolific_study.slug})
    assert first.get(url, PROLIFIC_PARAMS).status_code == 302
    work = first.post(reverse("crowd-work", kwargs={"slug": prolific_study.slug}), follow=True)
    assert work.status_code == 200 and external_id(work)

    again = Client()
    assert again.get(url, PROLIFIC_PARAMS).status_code == 302
    assert again.get(reverse("crowd-past-answer", args=[claim.pk])).status_code == 200
    assert external_id(again.get(reverse("crowd-work", kwargs={"slug": prolific_study.slug}))) == external_id(work)
    assert PlatformEntry.objects.get().refused_entries == 0


def test_a_first_link_to_another_study_reaches_none_of_the_earlier_answers(prolific_study):
    """A returning worker's new session in another Prolific study is let in; whoever holds it (the worker, or
    someone who knows the PID and made a session up) reaches that study's work only."""
    worker = Client()
    claim = enter_and_answer(worker, "crowd-entry-prolific", prolific_study, PROLIFIC_PARAMS,
                             {**GOOD, "description": "My private answer."})
    other = make_study("second-prolific", recruitment_platform="prolific", platform_study_id="st999")

    newcomer = Client()
    response = newcomer.get(reverse("crowd-entry-prolific", kwargs={"slug": other.slug}),
                            {**PROLIFIC_PARAMS, "STUDY_ID": "st999", "SESSION_ID": "made-up"})

    assert response.status_code == 302 and int(newcomer.session["_auth_user_id"]) == claim.worker_id
    assert newcomer.get(reverse("crowd-past-answer", args=[claim.pk])).status_code == 404
    tasks = newcomer.get(reverse("my-tasks")).content.decode()
    assert reverse("crowd-past-answer", args=[claim.pk]) not in tasks
    assert reverse("crowd-work", kwargs={"slug": prolific_study.slug}) not in tasks
    refused = newcomer.get(reverse("crowd-work", kwargs={"slug": prolific_study.slug}))
    assert refused.status_code == 403 and "My private answer." not in refused.content.decode()
    assert newcomer.get(reverse("crowd-work-done", kwargs={"slug": prolific_study.slug})).status_code == 403
    api = APIClient()
    api.cookies = newcomer.cookies
    assert api.get("/api/claims/").json()["results"] == []
    assert api.get(f"/api/claims/{claim.pk}/").status_code == 404
    assert api.post(f"/api/studies/{prolific_study.slug}/claim/").status_code == 403
    # the other study's own work goes on as usual
    assert newcomer.get(reverse("crowd-work", kwargs={"slug": other.slug})).status_code == 200
    # and the worker's own session still reaches their answer
    assert "My private answer." in worker.get(reverse("crowd-past-answer", args=[claim.pk])).content.decode()


def test_a_known_mturk_worker_id_with_another_assignment_of_the_hit_is_refused(mturk_study):
    worker = Client()
    claim = enter_and_answer(worker, "crowd-entry-mturk", mturk_study, MTURK_PARAMS,
                             {**GOOD, "description": "My private answer."})
    url = reverse("crowd-entry-mturk", kwargs={"slug": mturk_study.slug})

    replay = Client()
    response = replay.get(url, {**MTURK_PARAMS, "assignmentId": "3ASSIGN0099"})

    assert response.status_code == 409 and "frame-ancestors" in response["Content-Security-Policy"]
    assert "another Mechanical Turk session with this worker id" in response.content.decode()
    assert "_auth_user_id" not in replay.session
    assert replay.get(reverse("crowd-past-answer", args=[claim.pk])).status_code == 302
    # the same assignment comes back in
    again = Client()
    assert again.get(url, MTURK_PARAMS).status_code == 302
    assert "My private answer." in again.get(reverse("crowd-past-answer", args=[claim.pk])).content.decode()


def test_another_hit_of_the_study_is_a_new_session_that_reaches_only_its_own_work(mturk_study):
    worker = Client()
    handed_in = enter_and_answer(worker, "crowd-entry-mturk", mturk_study, MTURK_PARAMS)
    worker.post(reverse("crowd-work", kwargs={"slug": mturk_study.slug}))
    left_open = Claim.objects.get(worker=handed_in.worker, status=Claim.Status.ACTIVE)
    submissions.save_draft(left_open, handed_in.worker, {"description": "Half a thought"})

    second = Client()
    params = {**MTURK_PARAMS, "hitId": "3HIT0002", "assignmentId": "3ASSIGN0002"}
    assert second.get(reverse("crowd-entry-mturk", kwargs={"slug": mturk_study.slug}), params).status_code == 302

    left_open.refresh_from_db()
    assert left_open.status == Claim.Status.RETURNED  # its draft is not shown to the new assignment
    work = second.post(reverse("crowd-work", kwargs={"slug": mturk_study.slug}), follow=True).content.decode()
    assert "Half a thought" not in work
    assert Claim.objects.get(worker=handed_in.worker, status=Claim.Status.ACTIVE).platform_assignment_id == \
        "3ASSIGN0002"
    assert second.get(reverse("crowd-past-answer", args=[handed_in.pk])).status_code == 404
    assert PlatformEntry.objects.filter(run="3HIT0002", session_id="3ASSIGN0002").exists()


def test_the_refusal_of_another_session_is_in_the_study_s_language():
    study = make_study("in-italian", recruitment_platform="prolific", platform_study_id="st123", language="it")
    url = reverse("crowd-entry-prolific", kwargs={"slug": study.slug})
    assert Client().get(url, PROLIFIC_PARAMS).status_code == 302
    response = Client().get(url, {**PROLIFIC_PARAMS, "SESSION_ID": "another-session"})
    assert response.status_code == 409
    page = response.content.decode()
    assert "Avviato da un&#x27;altra sessione" in page and "un&#x27;altra sessione Prolific" in page


# --- My tasks and queues ----------------------------------------------------------------------

def test_my_tasks_lists_eligible_studies_and_own_claims(study, alice):
    closed = make_study("closed-one", state=Study.State.CLOSED)
    other = make_study("italian-only", required_attributes={"native_language": "it"})
    client = client_for(alice)
    client.post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    claim = Claim.objects.get(worker=alice)
    submissions.submit(claim, alice, GOOD)
    client.post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    active = Claim.objects.get(worker=alice, status=Claim.Status.ACTIVE)
    assignment.release(active, alice)
    page = client.get(reverse("my-tasks")).content.decode()
    assert reverse("crowd-work", kwargs={"slug": study.slug}) in page
    assert reverse("crowd-work", kwargs={"slug": closed.slug}) not in page
    assert reverse("crowd-work", kwargs={"slug": other.slug}) not in page
    assert "Awaiting review" in page and "Returned" in page


def test_queues_page_links_pending_queues(study, alice, people):
    client_for(alice).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    submissions.submit(Claim.objects.get(worker=alice), alice, GOOD)
    page = client_for(people[CURATOR]).get(reverse("queues")).content.decode()
    assert reverse("crowd-study-queue", kwargs={"slug": study.slug}) + "?queue=all&amp;state=pending" in page
    assert "1 pending" in page


# --- Curator pages ----------------------------------------------------------------------------

def _submitted(study, *workers):
    out = []
    for worker in workers:
        claim = assignment.claim_next(study, worker)
        submission, _, _ = submissions.submit(claim, worker, GOOD, active_seconds=12.5)
        out.append(submission)
    return out


def test_studies_list_and_detail(study, alice, people):
    _submitted(study, alice)
    client = client_for(people[CURATOR])
    listing = client.get(reverse("crowd-studies")).content.decode()
    assert study.name in listing and 'data-status="submitted">1<' in listing
    detail = client.get(reverse("crowd-study-detail", kwargs={"slug": study.slug})).content.decode()
    assert reverse("crowd-study-payments", kwargs={"slug": study.slug}) in detail
    assert "recruits on no crowd platform" in detail and "PROLIFIC_PID" not in detail
    assert "?queue=all&amp;state=pending" in detail
    Study.objects.filter(pk=study.pk).update(recruitment_platform="prolific", platform_study_id="st123")
    detail = client.get(reverse("crowd-study-detail", kwargs={"slug": study.slug})).content.decode()
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in detail and "st123" in detail


def test_queue_page_lists_submissions_by_state(study, alice, bob, people):
    first, second = _submitted(study, alice, bob)
    curator = people[CURATOR]
    review.reject(second, curator, reason="copied text")
    client = client_for(curator)
    url = reverse("crowd-study-queue", kwargs={"slug": study.slug})
    pending = client.get(url).content.decode()
    assert f'data-submission-id="{first.pk}"' in pending and f'data-submission-id="{second.pk}"' not in pending
    assert "alice" in pending and "A dog on a sofa." in pending and "object number 1" in pending
    assert reverse("api-submission-decide", kwargs={"pk": first.pk}) in pending
    assert 'data-bulk="approve"' in pending
    rejected = client.get(url, {"queue": "all", "state": "rejected"}).content.decode()
    assert f'data-submission-id="{second.pk}"' in rejected and "copied text" in rejected
    assert client.get(url, {"queue": "nope"}).status_code == 400


def test_payments_csv_has_the_approved_rows_with_pay(study, alice, bob, people):
    WorkerProfile.objects.create(user=alice, platform="prolific", platform_worker_id="PID-A")
    first, second = _submitted(study, alice, bob)
    curator = people[CURATOR]
    review.approve(first, curator)
    review.reject(second, curator, reason="empty")
    response = client_for(curator).get(reverse("crowd-study-payments", kwargs={"slug": study.slug}))
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert 'filename="pictures-payments.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == 1
    row = rows[0]
    assert row["worker"] == "alice" and row["platform"] == "prolific" and row["platform_worker_id"] == "PID-A"
    assert row["item"] == first.claim.item.external_id
    assert row["pay"] == "0.25" and row["currency"] == "GBP"
    assert float(row["active_seconds"]) == pytest.approx(12.5)
    assert row["submitted_at"].startswith(str(Submission.objects.get(pk=first.pk).submitted_at.date()))


# --- Study settings: the curators' page and the admin check the same rules ------------------------

def _form_data(form) -> dict:
    """What a browser would send back for an unchanged form."""
    data = {}
    for name in form.fields:
        value = form[name].value()
        if value is None or value is False:
            continue
        data[name] = value
    return data


def _settings_data(study) -> dict:
    return _form_data(StudySettingsForm(instance=study))


def test_the_settings_page_saves_recruitment_and_refuses_values_out_of_range(study, people):
    client = client_for(people[CURATOR])
    url = reverse("crowd-study-settings", kwargs={"slug": study.slug})
    assert client.get(url).status_code == 200
    before = Study.objects.filter(pk=study.pk).values().get()
    for field, value in [("gold_share", "2"), ("expert_share", "-1"), ("annotators_per_item", "0"),
                         ("annotators_per_item", "5000"), ("min_accept_rate", "1.5"), ("step_kind", "telepathy")]:
        response = client.post(url, {**_settings_data(study), field: value})
        assert response.status_code == 400, (field, value)
        assert 'class="field-error"' in response.content.decode() and field in response.content.decode()
        assert Study.objects.filter(pk=study.pk).values().get() == before
    missing_id = client.post(url, {**_settings_data(study), "recruitment_platform": "prolific"})
    assert missing_id.status_code == 400 and "STUDY_ID" in missing_id.content.decode()
    saved = client.post(url, {**_settings_data(study), "recruitment_platform": "prolific",
                              "platform_study_id": "60a1b2c3", "required_submissions": "3"})
    assert saved.status_code == 302
    study.refresh_from_db()
    assert (study.recruitment_platform, study.platform_study_id, study.required_submissions) == (
        "prolific", "60a1b2c3", 3)


def test_the_settings_page_refuses_changing_k_once_work_started(study, alice, people):
    client_for(alice).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    response = client_for(people[CURATOR]).post(reverse("crowd-study-settings", kwargs={"slug": study.slug}),
                                                {**_settings_data(study), "annotators_per_item": "2"})
    assert response.status_code == 409
    assert "work has started on this study" in response.content.decode()
    study.refresh_from_db()
    assert study.annotators_per_item == 1


def _admin_request(url, user):
    request = RequestFactory().get(url)
    request.user = user
    return request


def test_the_admin_refuses_settings_out_of_range_and_frozen_changes(study, alice, admin_client, admin_user):
    url = reverse("admin:annotation_study_change", args=[study.pk])
    admin_form = admin_site._registry[Study].get_form(_admin_request(url, admin_user), study)(instance=study)
    data = _form_data(admin_form)
    response = admin_client.post(url, {**data, "gold_share": "3"})
    assert response.status_code == 200 and "gold_share: must be a number from 0 to 1" in response.content.decode()
    client_for(alice).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)  # work starts
    response = admin_client.post(url, {**data, "annotators_per_item": "4"})
    assert response.status_code == 200 and "work has started on this study" in response.content.decode()
    study.refresh_from_db()
    assert (study.gold_share, study.annotators_per_item) == (0.0, 1)
    assert admin_client.post(url, {**data, "pay_per_item": "0.50"}).status_code == 302  # the rest still may change
    study.refresh_from_db()
    assert str(study.pay_per_item) == "0.50"


def test_the_admin_keeps_an_items_media_once_work_started(study, alice, admin_client, admin_user):
    item = StudyItem.objects.filter(study=study).order_by("id").first()
    url = reverse("admin:annotation_studyitem_change", args=[item.pk])
    item_form = admin_site._registry[StudyItem].get_form(_admin_request(url, admin_user), item)(instance=item)
    data = _form_data(item_form)
    client_for(alice).post(reverse("crowd-work", kwargs={"slug": study.slug}), follow=True)
    response = admin_client.post(url, {**data, "payload": '{"query": "something else"}'})
    assert response.status_code == 200 and "media can no longer change" in response.content.decode()
    item.refresh_from_db()
    assert item.payload["query"] == "Question about picture 0"
    assert admin_client.post(url, {**data, "answer_key": '{"fields": {}}'}).status_code == 302
