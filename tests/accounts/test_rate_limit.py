"""Login and reset rate limits: per account and client, per address, per account from new
browsers; messages, waits, expiry; counted in the database, never the cache,
and refusing when they cannot be counted."""

from __future__ import annotations

import threading
from unittest import mock

import pytest
from django.core.cache import cache
from django.db import OperationalError, connection
from django.test import Client, RequestFactory, override_settings

from accounts import limits
from accounts.models import RateLimitEvent

from .conftest import PASSWORD, login

ACCOUNT_MESSAGE = "Too many failed attempts to log in to this account"
ADDRESS_MESSAGE = "Too many failed log-in attempts from your network"
A, B = "203.0.113.5", "198.51.100.7"


def fail(client, username="alice", times=1, address=A):
    for _ in range(times):
        response = login(client, username, "wrong password", address=address)
        assert response.status_code == 200, response.content.decode()
        assert "Please enter a correct username and password" in response.content.decode()


def logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_account_is_paused_after_five_failures_even_with_the_right_password(client, alice, clock):
    """The 6th attempt is refused with the wait time, 429 and Retry-After; password unchecked."""
    fail(client, times=5)
    with mock.patch("django.contrib.auth.forms.authenticate") as authenticate:
        response = login(client, "alice", PASSWORD)
    authenticate.assert_not_called()
    assert response.status_code == 429
    assert int(response["Retry-After"]) == 15 * 60
    html = response.content.decode()
    assert ACCOUNT_MESSAGE in html
    assert "try again in 15 minutes" in html
    assert 'role="alert"' in html
    assert not logged_in(client)


def test_refused_attempts_do_not_extend_the_pause(client, alice, clock):
    """Attempts refused by the limit are not failures: the wait keeps running down."""
    fail(client, times=5)
    clock.advance(5 * 60)
    for _ in range(10):
        response = login(client, "alice", "wrong password")
        assert response.status_code == 429
    assert "try again in 10 minutes" in response.content.decode()
    assert int(response["Retry-After"]) == 10 * 60


def test_window_slides_and_counters_expire(client, alice, clock):
    """Failures leave the window one by one; after it the account logs in again."""
    fail(client, times=3)
    clock.advance(10 * 60)
    fail(client, times=2)
    assert login(client, "alice", PASSWORD).status_code == 429
    clock.advance(5 * 60)  # the first three failures are out of the window
    fail(client, times=3)
    response = login(client, "alice", PASSWORD)
    assert response.status_code == 429
    assert "try again in 10 minutes" in response.content.decode()
    clock.advance(10 * 60)  # the next two are out too
    assert login(client, "alice", PASSWORD).status_code == 302
    assert logged_in(client)


@override_settings(ACCOUNTS_LOGIN_WINDOW=30, ACCOUNTS_LOGIN_CLIENT_LIMIT=2)
def test_short_window_from_settings(client, alice, clock):
    """The limits and window come from settings; a 30-second window says seconds."""
    fail(client, times=2)
    response = login(client, "alice", PASSWORD)
    assert response.status_code == 429
    assert "try again in 30 seconds" in response.content.decode()
    clock.advance(31)
    assert login(client, "alice", PASSWORD).status_code == 302


def test_successful_login_clears_the_accounts_counter(client, alice, clock):
    """Four failures, a success: the next four failures do not pause the account."""
    fail(client, times=4)
    assert login(client, "alice", PASSWORD).status_code == 302
    client.post("/accounts/logout/")
    fail(client, times=4)
    assert login(client, "alice", PASSWORD).status_code == 302


def test_usernames_are_counted_case_and_space_insensitively(client, alice, clock):
    """ALICE, " alice " and alice are one account for the limit."""
    for name in ["ALICE", " alice ", "Alice", "alice", "aLiCe"]:
        fail(client, username=name)
    assert login(client, "alice", PASSWORD).status_code == 429


def test_five_wrong_passwords_from_one_address_do_not_lock_the_owner_out(alice, clock):
    """An attacker's five failures pause the account from the attacker's address only: its
    owner, from another address, logs in."""
    fail(Client(), times=5, address=A)
    assert login(Client(), "alice", PASSWORD, address=A).status_code == 429
    owner = Client()
    assert login(owner, "alice", PASSWORD, address=B).status_code == 302
    assert logged_in(owner)


def test_the_owners_browser_logs_in_behind_the_attackers_address(alice, clock):
    """Behind the same address (a NAT) as the attacker, a browser that logged in to the
    account before still logs in: it is a client of its own."""
    owner = Client()
    assert login(owner, "alice", PASSWORD, address=A).status_code == 302
    owner.post("/accounts/logout/")
    fail(Client(), times=5, address=A)
    assert login(Client(), "alice", PASSWORD, address=A).status_code == 429
    assert login(owner, "alice", PASSWORD, address=A).status_code == 302


def test_each_known_browser_has_its_own_count(alice, clock):
    """Five failures from one of the owner's browsers pause that browser, not the other."""
    laptop, phone = Client(), Client()
    for browser in (laptop, phone):
        assert login(browser, "alice", PASSWORD, address=A).status_code == 302
        browser.post("/accounts/logout/")
    assert laptop.cookies[limits.DEVICE_COOKIE].value != phone.cookies[limits.DEVICE_COOKIE].value
    fail(laptop, times=5, address=A)
    assert login(laptop, "alice", PASSWORD, address=A).status_code == 429
    assert login(phone, "alice", PASSWORD, address=A).status_code == 302


@override_settings(ACCOUNTS_LOGIN_ACCOUNT_LIMIT=8)
def test_guesses_shared_out_over_many_addresses_pause_new_browsers_only(alice, clock):
    """Failures from many addresses (2 each from 4) reach the account's own limit: a browser
    new to the account is paused everywhere, the owner's known browser is not."""
    owner = Client()
    assert login(owner, "alice", PASSWORD, address="192.0.2.200").status_code == 302
    owner.post("/accounts/logout/")
    for i in range(4):
        fail(Client(), times=2, address=f"192.0.2.{i}")
    response = login(Client(), "alice", PASSWORD, address="192.0.2.99")
    assert response.status_code == 429
    assert "from many places" in response.content.decode()
    assert login(owner, "alice", PASSWORD, address="192.0.2.99").status_code == 302


def test_a_paused_account_does_not_pause_other_accounts_from_the_same_address(alice, bob, clock):
    """Failures on alice's account leave bob, behind the same address, free to log in."""
    fail(Client(), times=5, address=A)
    client = Client()
    assert login(client, "bob", PASSWORD, address=A).status_code == 302
    assert logged_in(client)


def test_one_address_cannot_lock_every_account(db, clock):
    """20 failures from an address (4 each on 5 accounts) pause the address, not the accounts."""
    from django.contrib.auth.models import User

    names = [f"user{i}" for i in range(6)]
    for name in names:
        User.objects.create_user(name, password=PASSWORD)
    attacker = Client()
    for name in names[:5]:
        fail(attacker, username=name, times=4, address=A)
    blocked = login(attacker, names[5], "wrong password", address=A)
    assert blocked.status_code == 429
    assert ADDRESS_MESSAGE in blocked.content.decode()
    assert "try again in 15 minutes" in blocked.content.decode()
    # From any other address every one of those accounts still logs in.
    for name in names:
        client = Client()
        assert login(client, name, PASSWORD, address=B).status_code == 302, name


def test_known_browser_behind_a_paused_address_still_logs_in(alice, bob, clock):
    """A noisy neighbour behind the same NAT does not lock out a user whose browser is known."""
    alices_browser = Client()
    assert login(alices_browser, "alice", PASSWORD, address=A).status_code == 302
    alices_browser.post("/accounts/logout/")
    for i in range(20):
        fail(Client(), username=f"mallory{i}", address=A)
    assert login(Client(), "bob", PASSWORD, address=A).status_code == 429  # unknown browser
    assert login(alices_browser, "alice", PASSWORD, address=A).status_code == 302
    # The device cookie is alice's: it does not open the address for bob.
    assert login(alices_browser, "bob", PASSWORD, address=A).status_code == 429


def test_forged_device_cookie_is_ignored(alice, clock):
    """An unsigned or tampered device cookie does not lift the address limit."""
    for i in range(20):
        fail(Client(), username=f"mallory{i}", address=A)
    client = Client()
    client.cookies[limits.DEVICE_COOKIE] = "anything"
    assert login(client, "alice", PASSWORD, address=A).status_code == 429


def test_x_forwarded_for_is_ignored_unless_a_proxy_is_trusted(alice, clock):
    """By default a client cannot change its address by sending X-Forwarded-For."""
    client = Client()
    for i in range(20):
        login(client, f"user{i}", "wrong", address=A, HTTP_X_FORWARDED_FOR=f"192.0.2.{i}")
    response = login(client, "alice", PASSWORD, address=A, HTTP_X_FORWARDED_FOR="192.0.2.99")
    assert response.status_code == 429
    assert ADDRESS_MESSAGE in response.content.decode()


def test_client_address():
    """REMOTE_ADDR; XFF's entry appended by the outermost trusted proxy; IPv6 by /64."""
    factory = RequestFactory()
    request = factory.get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="1.1.1.1, 2.2.2.2")
    assert limits.client_address(request) == "10.0.0.1"
    with override_settings(ACCOUNTS_TRUSTED_PROXY_COUNT=1):
        assert limits.client_address(request) == "2.2.2.2"
    with override_settings(ACCOUNTS_TRUSTED_PROXY_COUNT=2):
        assert limits.client_address(request) == "1.1.1.1"
    with override_settings(ACCOUNTS_TRUSTED_PROXY_COUNT=3):  # too few entries: the peer
        assert limits.client_address(request) == "10.0.0.1"
    v6 = factory.get("/", REMOTE_ADDR="2001:db8:1:2:aaaa::1")
    assert limits.client_address(v6) == "2001:db8:1:2::/64"
    mapped = factory.get("/", REMOTE_ADDR="::ffff:192.0.2.1")
    assert limits.client_address(mapped) == "192.0.2.1"


@override_settings(ACCOUNTS_TRUSTED_PROXY_COUNT=1)
def test_behind_a_trusted_proxy_each_client_is_counted_apart(alice, bob, clock):
    """With one trusted proxy, clients behind it are told apart by X-Forwarded-For."""
    proxy = "10.0.0.1"
    for i in range(20):
        login(Client(), f"user{i}", "wrong", address=proxy, HTTP_X_FORWARDED_FOR=A)
    blocked = login(Client(), "alice", PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR=A)
    assert blocked.status_code == 429
    client = Client()
    assert login(client, "bob", PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR=B).status_code == 302


@pytest.mark.parametrize(
    "address",
    [
        pytest.param(lambda i: A, id="one client"),
        # Each from its own address: the account's limit over new browsers, set to 5 here.
        pytest.param(lambda i: f"192.0.2.{i}", id="many addresses"),
    ],
)
@override_settings(ACCOUNTS_LOGIN_ACCOUNT_LIMIT=5)
def test_concurrent_attempts_cannot_pass_the_limit(transactional_db, clock, address):
    """50 simultaneous wrong guesses: at most the limit reach the password check. (Each event
    is committed before the counts are read; on SQLite's shared in-memory test database some
    threads find the table locked instead, and are refused.)"""
    factory = RequestFactory()
    allowed = []
    lock = threading.Lock()

    def guess(i):
        request = factory.post("/", REMOTE_ADDR=address(i))
        try:
            attempt = limits.login_attempt(request, "alice")
        finally:
            connection.close()  # this thread's own connection
        with lock:
            allowed.append(not attempt.blocked)

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 1 <= sum(allowed) <= 5


class FullCache:
    """The cache as Redis at its memory cap with `noeviction` answers: writes refused."""

    def __init__(self, monkeypatch):
        from redis.exceptions import OutOfMemoryError

        def refuse(*args, **kwargs):
            raise OutOfMemoryError("command not allowed when used memory > 'maxmemory'.")

        for name in ("add", "set", "incr", "decr", "set_many", "touch"):
            monkeypatch.setattr(cache, name, refuse)


def test_a_full_cache_does_not_switch_the_limit_off(client, alice, clock, monkeypatch):
    """With the cache refusing writes (the security review: 25 of 25 wrong passwords were
    checked, then the right one logged in), the sixth attempt is refused all the same."""
    FullCache(monkeypatch)
    fail(client, times=5)
    with mock.patch("django.contrib.auth.forms.authenticate") as authenticate:
        for _ in range(20):
            assert login(client, "alice", "wrong password").status_code == 429
        assert login(client, "alice", PASSWORD).status_code == 429
    authenticate.assert_not_called()
    assert not logged_in(client)


def test_an_evicting_cache_does_not_reset_the_counts(client, alice, clock):
    """The cache emptied after every attempt (allkeys-lru under a flood of pages): the counts
    stand, because they are not in it."""
    for _ in range(5):
        fail(client)
        cache.clear()
    assert login(client, "alice", PASSWORD).status_code == 429


def test_when_the_counts_cannot_be_read_logging_in_is_refused(client, alice, monkeypatch):
    """Fails closed: the database unavailable to the limiter refuses the attempt with 503 and
    Retry-After, before the password is checked."""

    def down(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(limits, "record", down)
    with mock.patch("django.contrib.auth.forms.authenticate") as authenticate:
        response = login(client, "alice", PASSWORD)
    authenticate.assert_not_called()
    assert response.status_code == 503
    assert response["Retry-After"] == str(limits.UNAVAILABLE_RETRY)
    assert "Logging in is unavailable for a moment" in response.content.decode()
    assert not logged_in(client)


def test_events_are_deleted_once_no_window_counts_them(alice, clock):
    """The sweep deletes what left its window and keeps what is still counted."""
    fail(Client(), times=3)
    clock.advance(10 * 60)
    fail(Client(), times=2)
    assert RateLimitEvent.objects.count() == 5 * 3  # client, address and account, each
    clock.advance(5 * 60)
    assert limits.sweep(limits.clock(), force=True) == 3 * 3
    assert RateLimitEvent.objects.count() == 2 * 3
    clock.advance(10 * 60)
    limits.sweep(limits.clock(), force=True)
    assert not RateLimitEvent.objects.exists()


def test_the_table_holds_digests_not_names_or_addresses(alice, clock):
    """What is counted is stored as a digest."""
    fail(Client(), times=1, address=A)
    idents = set(RateLimitEvent.objects.values_list("ident", flat=True))
    assert len(idents) == 3
    assert not any("alice" in ident or A in ident for ident in idents)


def test_wait_formatting():
    """Waits are shown in seconds under a minute, else in whole minutes rounded up."""
    assert limits.format_wait(1) == "1 second"
    assert limits.format_wait(59) == "59 seconds"
    assert limits.format_wait(60) == "1 minute"
    assert limits.format_wait(61) == "2 minutes"


# --- Password reset ---------------------------------------------------------------------------


def reset(email, address=A):
    return Client().post("/accounts/password/reset/", {"email": email}, REMOTE_ADDR=address)


@pytest.mark.django_db
def test_reset_requests_are_limited_per_address_with_a_message(mailoutbox, clock):
    """The 6th request in an hour from one address is refused with the wait; no mail."""
    for i in range(5):
        assert reset(f"someone{i}@example.org").status_code == 302
    response = reset("alice@example.org")
    assert response.status_code == 429
    html = response.content.decode()
    assert "Too many password reset requests from your network" in html
    assert "try again in 60 minutes" in html
    assert reset("alice@example.org", address=B).status_code == 302  # other addresses unaffected
    clock.advance(3600)
    assert reset("x@example.org").status_code == 302


def test_reset_mails_to_one_address_are_capped_silently(alice, mailoutbox, clock):
    """Past the limit, requests for one email still get the "sent" page but no more mail."""
    for i in range(7):
        response = reset("Alice@Example.org", address=f"192.0.2.{i}")
        assert response.status_code == 302
        assert response["Location"] == "/accounts/password/reset/sent/"
    assert len(mailoutbox) == 5


@pytest.mark.django_db
def test_reset_requests_are_refused_when_the_counts_cannot_be_read(mailoutbox, monkeypatch):
    """Fails closed for reset requests too: 503 with a message, no mail."""

    def down(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(limits, "record", down)
    response = reset("alice@example.org")
    assert response.status_code == 503
    assert "Password reset is unavailable for a moment" in response.content.decode()
    assert mailoutbox == []


def test_reset_limits_hold_with_the_cache_full(alice, mailoutbox, clock, monkeypatch):
    """The reset limits do not depend on the cache either."""
    FullCache(monkeypatch)
    for i in range(5):
        assert reset(f"someone{i}@example.org").status_code == 302
    assert reset("alice@example.org").status_code == 429
