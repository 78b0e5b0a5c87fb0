"""Sessions: a new key and a new CSRF token at every login, every other session of a user ended
when their password changes (by themselves, by an admin, by a reset), logout and deactivation
ending the session on the server."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.contrib.sessions.backends.base import SessionBase
from django.test import Client
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.module_loading import import_string

from .conftest import PASSWORD, login

NEW = "a much longer new passphrase 42"
PRIVATE = "/accounts/password/change/"  # any page behind login


def store(key: str | None) -> SessionBase:
    return import_string(f"{settings.SESSION_ENGINE}.SessionStore")(key)


def logged_in(client: Client) -> bool:
    """Whether the client's session still opens a page behind login (asked of the server)."""
    return client.get(PRIVATE).status_code == 200


def browsers(user: str, count: int) -> list[Client]:
    """`count` browsers logged in as `user` through the login form, from different addresses."""
    clients = []
    for number in range(count):
        client = Client()
        assert login(client, user, PASSWORD, address=f"198.51.100.{number + 1}").status_code == 302
        clients.append(client)
    return clients


@pytest.mark.parametrize("door", ["/accounts/login/", "/admin/login/"])
def test_login_gives_a_new_session_key_and_csrf_token(db, door):
    """A session key planted before the login (fixation) is dropped, and so is the CSRF token
    handed out with the login form: both are new afterwards."""
    User.objects.create_superuser("root", "root@example.org", PASSWORD)
    client = Client()
    client.get(door)  # the form: a CSRF cookie
    planted = store(None)
    planted["seen"] = True
    planted.save()
    client.cookies[settings.SESSION_COOKIE_NAME] = planted.session_key
    token_before = client.cookies[settings.CSRF_COOKIE_NAME].value

    response = client.post(
        door, {"username": "root", "password": PASSWORD}, REMOTE_ADDR="203.0.113.5"
    )
    assert response.status_code == 302
    key_after = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert key_after != planted.session_key
    assert not store(None).exists(planted.session_key)
    assert client.cookies[settings.CSRF_COOKIE_NAME].value != token_before
    assert logged_in(client)


def test_session_cookie_is_http_only_and_same_site(alice):
    """Scripts cannot read the session cookie, and other sites' forms do not send it."""
    response = login(Client(), "alice", PASSWORD)
    cookie = response.cookies[settings.SESSION_COOKIE_NAME]
    assert cookie["httponly"]
    assert cookie["samesite"].lower() in {"lax", "strict"}


def test_password_change_ends_every_other_session_and_keeps_this_one(alice):
    """Three browsers: the one that changes the password stays in, the two others are out."""
    changing, *others = browsers("alice", 3)
    response = changing.post(
        PRIVATE, {"old_password": PASSWORD, "new_password1": NEW, "new_password2": NEW}
    )
    assert response.status_code == 302
    assert logged_in(changing)
    assert [logged_in(client) for client in others] == [False, False]


def test_another_users_sessions_survive_a_password_change(alice, bob):
    """Only the changed account's sessions end."""
    (alice_browser,) = browsers("alice", 1)
    (bob_browser,) = browsers("bob", 1)
    alice_browser.post(
        PRIVATE, {"old_password": PASSWORD, "new_password1": NEW, "new_password2": NEW}
    )
    assert logged_in(bob_browser)


def test_admin_setting_a_password_ends_that_users_sessions(alice):
    """A password set by an admin in the admin ends all of the user's sessions; the admin's own
    session is untouched."""
    root = User.objects.create_superuser("root", "root@example.org", PASSWORD)
    victims = browsers("alice", 2)
    admin = Client()
    admin.force_login(root)
    response = admin.post(
        f"/admin/auth/user/{alice.pk}/password/", {"password1": NEW, "password2": NEW}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    alice.refresh_from_db()
    assert alice.check_password(NEW)
    assert [logged_in(client) for client in victims] == [False, False]
    assert admin.get("/admin/").status_code == 200


def test_admin_changing_their_own_password_keeps_only_that_session(db):
    """Through the admin's own password form: this session stays, the admin's others end."""
    User.objects.create_superuser("root", "root@example.org", PASSWORD)
    changing, other = browsers("root", 2)
    response = changing.post(
        "/admin/password_change/",
        {"old_password": PASSWORD, "new_password1": NEW, "new_password2": NEW},
    )
    assert response.status_code == 302
    assert changing.get("/admin/").status_code == 200
    assert logged_in(changing)
    assert not logged_in(other)


def test_password_reset_ends_every_session(alice):
    """Setting a new password through a reset link logs out every browser of the account."""
    sessions = browsers("alice", 2)
    link = Client()
    alice.refresh_from_db()  # the token covers the last login, which the logins just moved
    uid = urlsafe_base64_encode(force_bytes(alice.pk))
    token = default_token_generator.make_token(alice)
    set_url = link.get(f"/accounts/reset/{uid}/{token}/")["Location"]
    response = link.post(set_url, {"new_password1": NEW, "new_password2": NEW})
    assert response.status_code == 302
    assert [logged_in(client) for client in sessions] == [False, False]


def test_logout_deletes_the_session_on_the_server(alice):
    """After logging out, the old session key is gone: a copy of the cookie opens nothing."""
    (browser,) = browsers("alice", 1)
    key = browser.cookies[settings.SESSION_COOKIE_NAME].value
    assert browser.post("/accounts/logout/").status_code == 302
    assert not store(None).exists(key)
    replay = Client()
    replay.cookies[settings.SESSION_COOKIE_NAME] = key
    assert not logged_in(replay)
    assert not logged_in(browser)


def test_deactivating_a_user_ends_their_sessions(alice):
    """An account made inactive is logged out at its next request."""
    sessions = browsers("alice", 2)
    alice.is_active = False
    alice.save()
    assert [logged_in(client) for client in sessions] == [False, False]
