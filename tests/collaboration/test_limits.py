"""The bounds: message size, the note's text limits, the rate per connection, the editors a
note may have (in one process, and across app servers through Redis), a document too large to
sync, presence size, and frames that are not the protocol."""

from __future__ import annotations

import os

import pytest
import redis
from asgiref.sync import async_to_sync, sync_to_async
from pycrdt import create_update_message

from collaboration import limits
from collaboration.limits import EditorSeats, TokenBucket
from collaboration.models import DocumentUpdate
from notes import services
from notes.models import NoteAuthor

from .editors import Editor

live = pytest.mark.django_db(transaction=True)


def stored_rows(note) -> int:
    return DocumentUpdate.objects.filter(note=note).count()


async def connected(note, user) -> Editor:
    editor = await Editor.signed_in(note.pk, user)
    assert await editor.open()
    return editor


@live
def test_a_message_over_the_size_limit_closes_with_4413_and_is_not_stored(author, note, settings):
    """One message past LIVE_MESSAGE_MAX_BYTES: error "too-large", close 4413, nothing kept."""
    settings.LIVE_MESSAGE_MAX_BYTES = 1000

    async def scenario():
        editor = await connected(note, author)
        await editor.type("x" * 2000)
        await editor.until(lambda: editor.closed is not None)
        return editor

    editor = async_to_sync(scenario)()
    assert editor.closed == 4413 and editor.errors()[0]["code"] == "too-large"
    assert stored_rows(note) == 1  # the seed only


@live
def test_an_update_past_the_body_limit_is_refused_and_forgotten(author, note, settings):
    """An update that takes the body over NOTE_BODY_MAX_BYTES: 4413 with the size message,
    not stored, not sent to the others, and absent from the document a newcomer gets."""
    settings.NOTE_BODY_MAX_BYTES = 100

    async def scenario():
        big, other = await connected(note, author), await connected(note, author)
        await big.type("Fits. ")
        await big.until_stored()
        await big.type("y" * 200)
        await big.until(lambda: big.closed is not None)
        await other.drain(0.3)
        newcomer = await connected(note, author)
        await newcomer.close()
        await other.close()
        return big, other, newcomer

    big, other, newcomer = async_to_sync(scenario)()
    assert big.closed == 4413
    assert "100" in big.errors()[0]["message"]
    assert str(other.body) == "Fits. " and str(newcomer.body) == "Fits. "
    assert services.working_state(note.__class__.objects.get(pk=note.pk))["body"] == "Fits. "


@live
def test_a_title_past_its_length_is_refused(author, note):
    """The title is a 300-character field: a longer one is refused like a long body."""

    async def scenario():
        editor = await connected(note, author)
        await editor.type("t" * 301, into="title")
        await editor.until(lambda: editor.closed is not None)
        return editor.closed

    assert async_to_sync(scenario)() == 4413


@live
def test_past_the_rate_the_connection_closes_with_4429(author, note, settings):
    """More messages than the bucket allows: error "rate", close 4429 (the client backs off
    and reconnects)."""
    settings.LIVE_RATE_PER_SECOND = 1
    settings.LIVE_RATE_BURST = 5

    async def scenario():
        editor = await connected(note, author)  # its sync step 1 took a token
        for clock in range(1, 10):
            await editor.say_presence({"user": {"name": "Ada"}}, clock=clock)
        await editor.until(lambda: editor.closed is not None)
        return editor

    editor = async_to_sync(scenario)()
    assert editor.closed == 4429 and editor.errors()[0]["code"] == "rate"


@live
def test_connections_to_one_note_share_its_rate(author, note, settings):
    """Each connection is within its own rate, but together they pass the note's
    (LIVE_NOTE_RATE_*): opening more sockets does not multiply what one author may send."""
    settings.LIVE_NOTE_RATE_PER_SECOND = 1
    settings.LIVE_NOTE_RATE_BURST = 8

    async def scenario():
        first, second = await connected(note, author), await connected(note, author)
        for clock in range(1, 6):
            await first.say_presence({"user": {"name": "Ada"}}, clock=clock)
            await second.say_presence({"user": {"name": "Ada"}}, clock=clock)
        await first.until(lambda: first.closed is not None or second.closed is not None)
        await first.drain()
        await second.drain()
        return first, second

    first, second = async_to_sync(scenario)()
    closed = [editor for editor in (first, second) if editor.closed == 4429]
    assert closed and closed[0].errors()[0]["code"] == "rate"


@live
def test_past_the_editors_a_note_may_have_a_newcomer_is_turned_away(author, note, settings):
    """LIVE_NOTE_EDITORS_MAX connections to one note in one app server: the next is refused
    with 4429 (its client tries again after its back-off), and the others go on."""
    settings.LIVE_NOTE_EDITORS_MAX = 2

    async def scenario():
        present = [await connected(note, author), await connected(note, author)]
        third = await Editor.signed_in(note.pk, author)
        await third.open()
        await present[0].type("Still here.")
        await present[0].until_stored()
        for editor in present:
            await editor.close()
        return third, present

    third, present = async_to_sync(scenario)()
    assert third.closed == 4429 and "editors are writing" in third.errors()[0]["message"]
    assert present[0].stored_everything()


@live
def test_a_document_too_large_to_sync_is_refused_at_connect(author, note, settings):
    """A stored document over LIVE_DOCUMENT_MAX_BYTES: error "too-large" saying the sizes,
    close 4413 before any sync."""
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "z" * 500}
    )
    settings.LIVE_DOCUMENT_MAX_BYTES = 300  # the seed's ~540 stored bytes are loaded

    async def scenario():
        editor = await Editor.signed_in(note.pk, author)
        assert not await editor.open()
        return editor

    editor = async_to_sync(scenario)()
    assert editor.closed == 4413 and not editor.synced
    assert "300" in editor.errors()[0]["message"]


@live
@pytest.mark.parametrize(
    "frame",
    [
        bytes([7]),  # no such message type
        bytes([0, 9, 1, 0]),  # no such sync message
        bytes([0, 2, 50, 1, 2]),  # says 50 bytes, has 2
        bytes([0, 2, 3, 0xFF, 0xFF, 0xFF]),  # not a Yjs update
        bytes([1, 3, 1, 5]),  # an awareness update cut short
    ],
    ids=["type", "sync-type", "length", "update", "awareness"],
)
def test_a_frame_that_is_not_the_protocol_closes_with_4400(author, note, frame):
    """Malformed frames: error "invalid", close 4400, nothing stored."""

    async def scenario():
        editor = await connected(note, author)
        await editor.send(frame)
        await editor.until(lambda: editor.closed is not None)
        return editor

    editor = async_to_sync(scenario)()
    assert editor.closed == 4400 and editor.errors()[0]["code"] == "invalid"
    assert stored_rows(note) == 1


@live
def test_a_text_frame_closes_with_4400(author, note):
    """The protocol is binary."""

    async def scenario():
        editor = await connected(note, author)
        await editor.communicator.send_to(text_data="hello")
        await editor.until(lambda: editor.closed is not None)
        return editor.closed

    assert async_to_sync(scenario)() == 4400


@live
def test_oversized_presence_is_dropped_and_the_editor_stays(author, note, settings):
    """Presence past LIVE_AWARENESS_MAX_BYTES is not relayed; typing goes on."""
    settings.LIVE_AWARENESS_MAX_BYTES = 200

    async def scenario():
        ada, bert = await connected(note, author), await connected(note, author)
        await ada.say_presence({"user": {"name": "A" * 500}})
        await ada.type("Still here.")
        await bert.until(lambda: "Still here." in str(bert.body))
        await ada.until_stored()
        await ada.close()
        await bert.close()
        return bert.presence, ada.closed

    presence, closed = async_to_sync(scenario)()
    assert presence == {} and closed == 1000


@live
def test_an_empty_sync_step_2_is_not_stored(author, note):
    """A client with nothing new answers the server's step 1 with an empty update: no row."""

    async def scenario():
        editor = await connected(note, author)
        await editor.send(create_update_message(b"\x00\x00"))
        await editor.drain(0.2)
        await editor.close()
        return await sync_to_async(stored_rows)(note)

    assert async_to_sync(scenario)() == 1


def test_the_token_bucket_allows_its_burst_then_its_rate():
    """200 at once, then 50 a second."""
    now = [0.0]
    bucket = TokenBucket(50, 200, clock=lambda: now[0])
    assert all(bucket.take() for _ in range(200))
    assert not bucket.take()
    now[0] += 1
    assert sum(bucket.take() for _ in range(100)) == 50


REDIS = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


def _redis_answers() -> bool:
    try:
        return bool(redis.Redis.from_url(REDIS, socket_timeout=1).ping())
    except (redis.RedisError, OSError):
        return False


needs_redis = pytest.mark.skipif(not _redis_answers(), reason=f"needs Redis at {REDIS}")


def _seated(note_id: int) -> int:
    return redis.Redis.from_url(REDIS).zcard(EditorSeats.key(note_id))


@needs_redis
def test_seats_are_shared_by_app_servers_and_lapse_unless_renewed(settings):
    """Two app servers (two EditorSeats) count one note's editors together: past
    LIVE_NOTE_EDITORS_MAX the next is refused; one leaving frees a seat; a seat not renewed
    for SEAT_SECONDS (its server died) is given to the next, a renewed one is kept."""
    settings.LIVE_NOTE_EDITORS_MAX = 2
    here, there = EditorSeats(REDIS), EditorSeats(REDIS)
    later = 1_000_000.0 + limits.SEAT_SECONDS + 1

    async def scenario():
        assert await here.take(7, "a", now=1_000_000.0)
        assert await there.take(7, "b", now=1_000_000.0)
        assert not await here.take(7, "c", now=1_000_000.0)
        assert await there.take(8, "c", now=1_000_000.0)  # another note's seats are its own
        await there.leave(7, "b")
        assert await here.take(7, "c", now=1_000_000.0)
        await here.renew(7, "c", now=later - 1)
        # "a" lapsed, "c" was renewed: one seat free, then none.
        assert await there.take(7, "d", now=later)
        assert not await there.take(7, "e", now=later)

    async_to_sync(scenario)()
    assert _seated(7) == 2


def test_without_redis_every_seat_is_given_and_the_outage_logged(settings, caplog):
    """Without REDIS_URL the process counts its own editors only; a Redis that cannot be
    reached gives the seat (writing together goes on) and says so in the log."""
    settings.LIVE_NOTE_EDITORS_MAX = 1
    nowhere = EditorSeats("redis://127.0.0.1:1/0")

    async def scenario():
        assert await EditorSeats("").take(1, "a") and await EditorSeats("").take(1, "b")
        assert await nowhere.take(1, "a") and await nowhere.take(1, "b")
        await nowhere.renew(1, "a")
        await nowhere.leave(1, "a")

    async_to_sync(scenario)()
    assert "Redis could not be reached" in caplog.text


@needs_redis
@live
def test_a_note_whose_seats_other_servers_fill_turns_a_newcomer_away(author, note, settings):
    """With Redis, LIVE_NOTE_EDITORS_MAX counts the editors of every app server: seats taken
    elsewhere leave none here (4429, "editors are writing"); once they are given back the next
    editor connects, sits, and gives its seat back as it closes."""
    settings.REDIS_URL = REDIS
    settings.LIVE_NOTE_EDITORS_MAX = 2
    elsewhere = EditorSeats(REDIS)

    async def scenario():
        assert await elsewhere.take(note.pk, "other-server-1")
        assert await elsewhere.take(note.pk, "other-server-2")
        turned_away = await Editor.signed_in(note.pk, author)
        await turned_away.open()
        await elsewhere.leave(note.pk, "other-server-1")
        welcome = await connected(note, author)
        seated_while_open = _seated(note.pk)
        await welcome.close()
        return turned_away, seated_while_open

    turned_away, seated_while_open = async_to_sync(scenario)()
    assert turned_away.closed == 4429
    assert "editors are writing" in turned_away.errors()[0]["message"]
    assert seated_while_open == 2
    assert _seated(note.pk) == 1  # only the other server's second editor


@needs_redis
def test_one_persons_seats_are_capped_per_note_and_overall_across_app_servers(settings):
    """Through Redis, one person's connections on every app server count together: past
    LIVE_USER_NOTE_SEATS_MAX in a note, or LIVE_USER_SEATS_MAX in all, the next is refused,
    while someone else still sits down; leaving frees the person's seat."""
    settings.LIVE_NOTE_EDITORS_MAX = 10
    settings.LIVE_USER_NOTE_SEATS_MAX = 2
    settings.LIVE_USER_SEATS_MAX = 3
    here, there = EditorSeats(REDIS), EditorSeats(REDIS)

    async def scenario():
        assert await here.take(7, "a1", user_id=1)
        assert await there.take(7, "a2", user_id=1)
        refused_in_note = await here.take(7, "a3", user_id=1)
        assert await there.take(7, "b1", user_id=2)  # a co-author is not kept out
        assert await here.take(8, "a4", user_id=1)
        refused_overall = await there.take(9, "a5", user_id=1)
        await there.leave(7, "a2", user_id=1)
        assert await here.take(9, "a5", user_id=1)
        return refused_in_note, refused_overall

    refused_in_note, refused_overall = async_to_sync(scenario)()
    assert not refused_in_note and refused_in_note.full == limits.USER_NOTE_FULL
    assert not refused_overall and refused_overall.full == limits.USER_FULL
    assert "open in 2 windows" in refused_in_note.message()
    assert _seated(7) == 2  # a1 and b1: a refused connection holds no seat


def test_without_redis_each_process_caps_one_persons_seats(settings):
    """Without Redis the per-person caps hold within the process: its own connections count."""
    settings.LIVE_USER_NOTE_SEATS_MAX = 2
    settings.LIVE_USER_SEATS_MAX = 3
    alone = EditorSeats("")

    async def scenario():
        taken = [await alone.take(7, f"a{i}", user_id=1) for i in range(3)]
        other = await alone.take(7, "b1", user_id=2)
        elsewhere = [await alone.take(8, "a3", user_id=1), await alone.take(9, "a4", user_id=1)]
        await alone.leave(8, "a3", user_id=1)
        return taken, other, elsewhere, await alone.take(9, "a4", user_id=1)

    taken, other, elsewhere, after_leaving = async_to_sync(scenario)()
    assert [bool(seat) for seat in taken] == [True, True, False]
    assert taken[2].full == limits.USER_NOTE_FULL
    assert other
    assert [bool(seat) for seat in elsewhere] == [True, False]
    assert elsewhere[1].full == limits.USER_FULL
    assert after_leaving


@live
def test_one_person_cannot_take_every_seat_of_a_note(author, other_author, note, settings):
    """Past LIVE_USER_NOTE_SEATS_MAX sockets of one person to a note the next is refused with
    4429 and says why; a co-author still joins, and a closed socket gives its seat back."""
    settings.LIVE_USER_NOTE_SEATS_MAX = 2
    NoteAuthor.objects.create(note=note, author=services.author_for_user(other_author), position=1)

    async def scenario():
        mine = [await connected(note, author), await connected(note, author)]
        third = await Editor.signed_in(note.pk, author)
        await third.open()
        coauthor = await connected(note, other_author)
        await mine[0].close()
        again = await connected(note, author)
        for editor in (mine[1], coauthor, again):
            await editor.close()
        return third

    third = async_to_sync(scenario)()
    assert third.closed == 4429
    assert "open in 2 windows" in third.errors()[0]["message"]
