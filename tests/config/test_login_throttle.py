"""Password guessing is throttled on the API token endpoint and the login page (`config.login_throttle`):
failures are counted per username and per client address; past the limit: 429 with Retry-After, even
for the right password; successful logins are never counted."""

import time

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token

from config.roles import ANNOTATOR
from tests.conftest import PASSWORD, logged_in_api, logged_in_client, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.LOGIN_FAILURES_PER_USERNAME = 3
    settings.LOGIN_FAILURES_PER_ADDRESS = 5
    settings.LOGIN_FAILURE_WINDOW_SECONDS = 600
    settings.CLIENT_ADDRESS_HEADER = ""


def token(username, password, address="10.0.0.1"):
    return logged_in_api(None).post("/api/auth/token/", {"username": username, "password": password},
                                    format="json", REMOTE_ADDR=address)


def page_login(username, password, address="10.0.0.1"):
    return logged_in_client(None).post(reverse("login"), {"username": username, "password": password},
                                       REMOTE_ADDR=address)


def test_the_token_endpoint_throttles_guesses_per_username(annotator):
    assert [token("ann", "wrong").status_code for _ in range(3)] == [400] * 3
    refused = token("ann", PASSWORD)  # even the right password waits
    assert refused.status_code == 429
    assert 590 <= int(refused["Retry-After"]) <= 600
    assert refused.json()["error"].startswith("Too many failed sign-in attempts for this account or from this "
                                              "address. Expected available in ")
    assert not Token.objects.exists()
    # from another address too: the account is what is guessed
    assert token("ANN", PASSWORD, address="10.0.0.2").status_code == 429
    # other accounts are not affected
    make_user("bea", ANNOTATOR)
    assert token("bea", PASSWORD, address="10.0.0.2").status_code == 200


def test_the_token_endpoint_throttles_guesses_per_address(annotator):
    for number in range(5):
        assert token(f"nobody-{number}", "wrong").status_code == 400
    assert token("ann", PASSWORD).status_code == 429
    assert token("ann", PASSWORD, address="10.0.0.9").status_code == 200


def test_successful_logins_are_not_counted_and_clear_the_username(annotator):
    """Many workers signing in from one address (a lab, a benchmark) are never throttled."""
    for _ in range(20):
        assert token("ann", PASSWORD).status_code == 200
    assert [token("ann", "wrong").status_code for _ in range(2)] == [400, 400]
    assert token("ann", PASSWORD).status_code == 200
    # the username's count starts again after a success
    assert [token("ann", "wrong").status_code for _ in range(2)] == [400, 400]
    assert token("ann", PASSWORD).status_code == 200


def test_the_window_ends(annotator, settings):
    settings.LOGIN_FAILURE_WINDOW_SECONDS = 1
    for _ in range(3):
        token("ann", "wrong")
    assert token("ann", PASSWORD).status_code == 429
    time.sleep(1.2)
    assert token("ann", PASSWORD).status_code == 200


def test_limits_of_zero_turn_throttling_off(annotator, settings):
    settings.LOGIN_FAILURES_PER_USERNAME = settings.LOGIN_FAILURES_PER_ADDRESS = 0
    assert {token("ann", "wrong").status_code for _ in range(12)} == {400}
    assert token("ann", PASSWORD).status_code == 200


def test_the_login_page_throttles_guesses(annotator):
    assert [page_login("ann", "wrong").status_code for _ in range(3)] == [200] * 3
    refused = page_login("ann", PASSWORD)
    assert refused.status_code == 429 and 590 <= int(refused["Retry-After"]) <= 600
    assert "Too many failed sign-in attempts" in refused.content.decode()
    assert "_auth_user_id" not in refused.wsgi_request.session
    assert page_login("bea-not-here", "x", address="10.0.0.3").status_code == 200


def test_page_and_api_share_the_counts(annotator):
    page_login("ann", "wrong")
    token("ann", "wrong")
    page_login("ann", "wrong")
    assert token("ann", PASSWORD).status_code == 429


def test_the_login_page_still_signs_people_in(annotator):
    response = page_login("ann", PASSWORD)
    assert response.status_code == 302 and response.wsgi_request.user.is_authenticated


def test_behind_a_proxy_the_configured_header_names_the_client(annotator, settings):
    settings.CLIENT_ADDRESS_HEADER = "X-Real-IP"
    client = logged_in_api(None)
    for number in range(5):
        client.post("/api/auth/token/", {"username": f"x{number}", "password": "wrong"}, format="json",
                    REMOTE_ADDR="127.0.0.1", HTTP_X_REAL_IP="203.0.113.7")
    blocked = client.post("/api/auth/token/", {"username": "ann", "password": PASSWORD}, format="json",
                          REMOTE_ADDR="127.0.0.1", HTTP_X_REAL_IP="203.0.113.7")
    other = client.post("/api/auth/token/", {"username": "ann", "password": PASSWORD}, format="json",
                        REMOTE_ADDR="127.0.0.1", HTTP_X_REAL_IP="203.0.113.8")
    assert (blocked.status_code, other.status_code) == (429, 200)


def test_the_admin_login_is_refused_while_throttled(admin_user):
    """The admin's own login form counts failures too and, past the limit, refuses even the right password."""
    def admin_login(password):
        client = logged_in_client(None)
        response = client.post(reverse("admin:login"), {"username": "adm", "password": password,
                                                        "next": "/admin/"}, REMOTE_ADDR="10.0.0.1")
        return response, client

    for _ in range(2):
        assert admin_login("wrong")[0].status_code == 200
    token("adm", "wrong")  # the third failure, on the API
    response, client = admin_login(PASSWORD)
    assert response.status_code == 200 and "_auth_user_id" not in client.session
    assert token("adm", PASSWORD).status_code == 429


def test_a_good_admin_login_is_not_refused(admin_user):
    client = logged_in_client(None)
    response = client.post(reverse("admin:login"), {"username": "adm", "password": PASSWORD, "next": "/admin/"})
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(admin_user.pk)
