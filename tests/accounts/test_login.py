"""Log in and log out: pages in the site's look, redirects, session rotation, CSRF."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.test import Client, override_settings
from django.urls import reverse

from accounts import limits
from scidraft.site.models import SiteSettings

from .conftest import PASSWORD, login


def assert_site_page(response, heading):
    assert response.status_code == 200
    html = response.content.decode()
    assert '<header class="header">' in html  # base.html's header partial
    assert 'class="footer"' in html
    assert "css/scidraft.css" in html
    title = SiteSettings.objects.current().title
    assert re.search(rf"<title>[^<]*\| {re.escape(title)}</title>", html)
    assert '<meta name="robots" content="noindex, nofollow">' in html
    assert f"<h1>{heading}</h1>" in html


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "heading", "logged_in"),
    [
        ("/accounts/login/", "Log in", False),
        ("/accounts/password/reset/", "Reset password", False),
        ("/accounts/password/reset/sent/", "Check your email", False),
        ("/accounts/password/reset/complete/", "Password reset", False),
        ("/accounts/reset/MQ/bad-token/", "Choose a new password", False),
        ("/accounts/password/change/", "Change password", True),
        ("/accounts/password/change/done/", "Password changed", True),
    ],
)
def test_account_pages_render_in_the_sites_look(client, alice, url, heading, logged_in):
    """Every account page extends base.html: header, footer, stylesheet, titled and noindex."""
    if logged_in:
        client.force_login(alice)
    assert_site_page(client.get(url), heading)


@override_settings(LOGOUT_REDIRECT_URL=None)
def test_logged_out_page_renders_in_the_sites_look(client, alice):
    """Without a redirect setting, logging out shows the logged-out page in the site's look."""
    client.force_login(alice)
    assert_site_page(client.post("/accounts/logout/"), "Logged out")


def test_urls_are_named_in_the_accounts_namespace():
    """The views are reachable by name under accounts:."""
    assert reverse("accounts:login") == "/accounts/login/"
    assert reverse("accounts:logout") == "/accounts/logout/"
    assert reverse("accounts:password_reset") == "/accounts/password/reset/"


def test_login_redirects_to_the_default_page_and_rotates_the_session(client, alice):
    """A correct login redirects to LOGIN_REDIRECT_URL under a new session key; data survives."""
    session = client.session
    session["theme"] = "dark"
    session.save()
    before = session.session_key
    response = login(client, "alice", PASSWORD)
    assert response.status_code == 302
    assert response["Location"] == settings.LOGIN_REDIRECT_URL == "/write/"
    after = client.session.session_key
    assert after and after != before
    assert not Session.objects.filter(session_key=before).exists()
    assert client.session["theme"] == "dark"
    assert int(client.session["_auth_user_id"]) == alice.pk


def test_login_sets_the_signed_device_cookie(client, alice):
    """A successful login marks the browser as known to the account (HttpOnly, signed)."""
    login(client, "alice", PASSWORD)
    cookie = client.cookies[limits.DEVICE_COOKIE]
    assert cookie["httponly"]
    assert cookie.value.count(":") >= 1  # value:signature


DEFAULT = object()  # the default page after login: settings.LOGIN_REDIRECT_URL


@pytest.mark.parametrize(
    ("next_url", "expected"),
    [
        ("/notes/", "/notes/"),
        ("/tags/?page=2", "/tags/?page=2"),
        ("http://testserver/archives/", "http://testserver/archives/"),
        ("https://evil.example/", DEFAULT),
        ("//evil.example/", DEFAULT),
        ("/\\evil.example/", DEFAULT),
        ("javascript:alert(1)", DEFAULT),
        ("http:///evil.example/", DEFAULT),
    ],
)
def test_next_redirects_only_to_same_site_urls(client, alice, next_url, expected):
    """`next` is followed only when it stays on this site; otherwise the default page."""
    response = login(client, "alice", PASSWORD, next=next_url)
    assert response.status_code == 302
    assert response["Location"] == (
        settings.LOGIN_REDIRECT_URL if expected is DEFAULT else expected
    )


def test_login_page_keeps_a_safe_next_and_drops_an_unsafe_one(client, db):
    """The form carries a same-site `next` into the POST, never a foreign one."""
    html = client.get("/accounts/login/?next=/notes/").content.decode()
    assert 'name="next" value="/notes/"' in html
    html = client.get("/accounts/login/?next=https://evil.example/").content.decode()
    assert "evil.example" not in html


def test_wrong_password_and_unknown_user_get_the_same_message(client, alice):
    """The login form does not tell an unknown username from a wrong password."""
    wrong = login(client, "alice", "not the password")
    unknown = login(client, "nobody", "not the password")
    assert wrong.status_code == unknown.status_code == 200
    message = "Please enter a correct username and password"
    assert message in wrong.content.decode()
    assert message in unknown.content.decode()
    assert "_auth_user_id" not in client.session


def test_inactive_user_cannot_log_in(client, alice):
    """A deactivated account is refused like a wrong password."""
    alice.is_active = False
    alice.save()
    response = login(client, "alice", PASSWORD)
    assert response.status_code == 200
    assert "_auth_user_id" not in client.session


def test_logout_is_post_only(client, alice):
    """GET /accounts/logout/ is refused (405) and leaves the session logged in."""
    client.force_login(alice)
    assert client.get("/accounts/logout/").status_code == 405
    assert "_auth_user_id" in client.session


def test_logout_ends_the_session_and_redirects_home(client, alice):
    """POST /accounts/logout/ logs out and redirects to LOGOUT_REDIRECT_URL."""
    client.force_login(alice)
    key = client.session.session_key
    response = client.post("/accounts/logout/")
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert "_auth_user_id" not in client.session
    assert not Session.objects.filter(session_key=key).exists()


def test_login_url_setting_points_at_the_accounts_login(client, alice):
    """Pages behind login send anonymous visitors to /accounts/login/?next=…."""
    response = client.get("/accounts/password/change/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/accounts/password/change/"


# --- CSRF -------------------------------------------------------------------------------------


def _reset_confirm_url(client, user) -> str:
    from django.contrib.auth.tokens import default_token_generator
    from django.utils.encoding import force_bytes
    from django.utils.http import urlsafe_base64_encode

    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    response = client.get(f"/accounts/reset/{uid}/{token}/")
    assert response.status_code == 302  # to …/set-password/, the token kept in the session
    return response["Location"]


def _csrf_client() -> Client:
    return Client(enforce_csrf_checks=True)


def test_login_without_csrf_token_is_refused(alice):
    """POST /accounts/login/ without a token: 403, nobody logged in."""
    client = _csrf_client()
    response = login(client, "alice", PASSWORD)
    assert response.status_code == 403
    assert "_auth_user_id" not in client.session


def test_login_with_csrf_token_succeeds(alice):
    """The same POST with the form's token logs in (the refusal above is CSRF, not the form)."""
    client = _csrf_client()
    client.get("/accounts/login/")
    token = client.cookies["csrftoken"].value
    response = login(client, "alice", PASSWORD, csrfmiddlewaretoken=token)
    assert response.status_code == 302
    assert "_auth_user_id" in client.session


def test_logout_without_csrf_token_is_refused(alice):
    """POST /accounts/logout/ without a token: 403, still logged in."""
    client = _csrf_client()
    client.force_login(alice)
    assert client.post("/accounts/logout/").status_code == 403
    assert "_auth_user_id" in client.session


def test_password_change_without_csrf_token_is_refused(alice):
    """POST /accounts/password/change/ without a token: 403, password unchanged."""
    client = _csrf_client()
    client.force_login(alice)
    new = "a much longer new passphrase 42"
    response = client.post(
        "/accounts/password/change/",
        {"old_password": PASSWORD, "new_password1": new, "new_password2": new},
    )
    assert response.status_code == 403
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)


def test_password_reset_without_csrf_token_is_refused(alice, mailoutbox):
    """POST /accounts/password/reset/ without a token: 403, no mail."""
    client = _csrf_client()
    response = client.post("/accounts/password/reset/", {"email": "alice@example.org"})
    assert response.status_code == 403
    assert mailoutbox == []


def test_password_reset_confirm_without_csrf_token_is_refused(alice):
    """POST to the set-password page without a token: 403, password unchanged."""
    client = _csrf_client()
    url = _reset_confirm_url(client, alice)
    new = "a much longer new passphrase 42"
    response = client.post(url, {"new_password1": new, "new_password2": new})
    assert response.status_code == 403
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)


def test_admin_login_has_the_same_rate_limit(client, db, clock):
    """/admin/login/ is a second door: it is rate-limited like /accounts/login/."""
    User.objects.create_superuser("root", "root@example.org", PASSWORD)
    for _ in range(5):
        response = client.post(
            "/admin/login/", {"username": "root", "password": "wrong"}, REMOTE_ADDR="203.0.113.5"
        )
        assert response.status_code == 200
    response = client.post(
        "/admin/login/", {"username": "root", "password": PASSWORD}, REMOTE_ADDR="203.0.113.5"
    )
    assert "Too many failed attempts to log in to this account" in response.content.decode()
    assert "_auth_user_id" not in client.session
