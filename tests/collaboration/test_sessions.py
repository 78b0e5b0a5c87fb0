"""A socket lives as long as its session: logout, a changed password and the session's
deletion close it at once (4401), an expired session at the next periodic check; another
session of the same person, and other people, keep writing."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from collaboration.sessions import session_holds

from .editors import Editor

pytestmark = pytest.mark.django_db(transaction=True)


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def cookie_of(client: Client) -> str:
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def key_of(client: Client) -> str:
    return client.cookies[settings.SESSION_COOKIE_NAME].value


async def opened(note, client: Client) -> Editor:
    editor = Editor(note.pk, await sync_to_async(cookie_of)(client))
    assert await editor.open()
    return editor


def ended_by(note, author, end) -> tuple[Editor, Editor]:
    """Two browsers of `author` editing `note`; `end(first, second)` runs; each editor as it
    is a moment later (closed or not)."""
    first, second = browser(author), browser(author)

    async def scenario():
        one, two = await opened(note, first), await opened(note, second)
        await sync_to_async(end)(first, second)
        # Read both for up to 3 s (drain: an editor left open is not cancelled).
        deadline = asyncio.get_running_loop().time() + 3
        while asyncio.get_running_loop().time() < deadline and None in (one.closed, two.closed):
            for editor in (one, two):
                await editor.drain(0.1)
        for editor in (one, two):
            await editor.close()
        return one, two

    return async_to_sync(scenario)()


def still_open(editor: Editor) -> bool:
    return editor.closed == 1000  # closed by the test itself, not by the server


@pytest.mark.slow
def test_logging_out_closes_that_sessions_sockets(author, note):
    """Logging out in one browser closes its socket with 4401 and says why; the person's
    socket from another browser stays."""
    one, two = ended_by(note, author, lambda first, second: first.post("/accounts/logout/"))
    assert one.closed == 4401 and one.errors()[0]["code"] == "signed-out"
    assert still_open(two)


def test_a_changed_password_closes_every_session_of_the_account(author, other_author, note):
    """A password set anew (by an admin, or a reset) ends every session: both browsers'
    sockets close with 4401."""

    def change(first, second):
        author.set_password("an entirely new passphrase 17")
        author.save()

    one, two = ended_by(note, author, change)
    assert (one.closed, two.closed) == (4401, 4401)


def test_changing_ones_password_keeps_no_other_browser_writing(author, note):
    """The password form keeps its own browser signed in (update_session_auth_hash) and ends
    the others: the other browser's socket closes with 4401."""
    from tests.people import PASSWORD

    def change(first, second):
        response = first.post(
            "/accounts/password/change/",
            {
                "old_password": PASSWORD,
                "new_password1": "an entirely new passphrase 17",
                "new_password2": "an entirely new passphrase 17",
            },
        )
        assert response.status_code == 302

    _, two = ended_by(note, author, change)
    assert two.closed == 4401


@pytest.mark.slow
def test_a_deleted_session_closes_its_sockets(author, note):
    """The session's row deleted (an admin, or the store's delete): its socket closes at once."""
    one, two = ended_by(
        note, author, lambda first, second: Session.objects.get(session_key=key_of(first)).delete()
    )
    assert one.closed == 4401
    assert still_open(two)


@pytest.mark.slow
def test_an_expired_session_closes_at_the_periodic_check(author, note, settings):
    """A session past its expiry (no signal is sent) is found by the check every
    LIVE_RECHECK_SECONDS: 4401."""
    settings.LIVE_RECHECK_SECONDS = 1

    def expire(first, second):
        past = timezone.now() - dt.timedelta(seconds=1)
        Session.objects.filter(session_key=key_of(first)).update(expire_date=past)

    one, two = ended_by(note, author, expire)
    assert one.closed == 4401
    assert still_open(two)


def test_a_session_holds_only_its_own_user_while_it_lasts(author, other_author):
    """The check itself: the session's user, not another; not after logout."""
    client = browser(author)
    key = key_of(client)
    assert session_holds(key, author.pk)
    assert not session_holds(key, other_author.pk)
    assert not session_holds("no-such-session-key", author.pk)
    assert not session_holds(None, author.pk)
    client.post("/accounts/logout/")
    assert not session_holds(key, author.pk)
