"""The consumer speaks y-websocket: sync on connect, updates stored then broadcast then
acknowledged, presence relayed and withdrawn, and two editors converge."""

from __future__ import annotations

import asyncio
import json
import os

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from pycrdt import Doc, Text

from collaboration.models import DocumentUpdate
from collaboration.presence import person
from collaboration.protocol import QUERY_AWARENESS
from notes import services
from notes.models import Note

from .editors import Editor

pytestmark = pytest.mark.django_db(transaction=True)


def body_of(note_id: int) -> str:
    return services.working_state(Note.objects.get(pk=note_id))["body"]


def test_a_new_document_is_seeded_from_the_note_and_synced_on_connect(author, note):
    """The server seeds the document from the working title and body (stored as the first
    update) and the client gets them through sync step 1 and 2."""
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "$E=mc^2$ é😀"}
    )

    async def scenario():
        editor = await Editor.signed_in(note.pk, author)
        assert await editor.open()
        assert str(editor.body) == "$E=mc^2$ é😀"
        assert str(editor.title) == "Heat equation"
        await editor.close()

    async_to_sync(scenario)()
    assert DocumentUpdate.objects.filter(note=note, author=None).count() == 1


def test_an_update_is_stored_before_it_is_acknowledged(author, note):
    """Each update is in the database when its `stored` message arrives, and the message's
    state vector covers the editor's own clock."""

    async def scenario():
        editor = await Editor.signed_in(note.pk, author)
        assert await editor.open()
        await editor.type("Hello")
        await editor.until_stored()
        rows = await sync_to_async(DocumentUpdate.objects.filter(note=note, author=author).count)()
        assert rows == 1
        await editor.close()

    async_to_sync(scenario)()


def test_two_editors_typing_at_once_converge_and_the_merged_save_holds_every_character(
    author, other_author, note
):
    """Two co-authors type concurrently (neither has seen the other's keystrokes when typing):
    both documents end equal, and the merged save's revision holds every character."""
    services.note_save(
        note_id=note.pk,
        user=author,
        base_version=note.version,
        fields={"authors": ["ada", services.author_for_user(other_author).handle]},
    )

    async def scenario():
        ada = await Editor.signed_in(note.pk, author)
        bert = await Editor.signed_in(note.pk, other_author)
        assert await ada.open() and await bert.open()
        for i in range(20):
            await ada.type(f"a{i} ")
            await bert.type(f"b{i} ", at=0)
        tokens = [f"{who}{i} " for i in range(20) for who in "ab"]

        def complete(editor):
            return lambda: editor.stored_everything() and all(t in str(editor.body) for t in tokens)

        await asyncio.gather(ada.until(complete(ada)), bert.until(complete(bert)))
        assert str(ada.body) == str(bert.body)
        await ada.until(lambda: bool(ada.saved()))
        merged = str(ada.body)
        await ada.close()
        await bert.close()
        return merged

    merged = async_to_sync(scenario)()
    for i in range(20):
        assert f"a{i} " in merged and f"b{i} " in merged
    assert body_of(note.pk) == merged
    revision = note.revisions.order_by("-number").first()
    assert revision.body == merged and revision.kind == "autosave"


def test_the_saved_message_names_the_version_to_save_on(author, note):
    """After a merged save every editor gets {type: saved, version, revision, by}."""

    async def scenario():
        editor = await Editor.signed_in(note.pk, author)
        assert await editor.open()
        await editor.type("Typed live.")
        await editor.until(lambda: bool(editor.saved()))
        await editor.close()
        return editor.saved()[-1]

    saved = async_to_sync(scenario)()
    note.refresh_from_db()
    assert saved["version"] == note.version
    assert saved["revision"] == note.revisions.order_by("-number").first().number
    assert saved["by"] == ["Ada Lovelace"]


def test_a_restart_loses_nothing_stored(author, note):
    """The process's documents are dropped (a restart): a new connection loads every stored
    update from the database."""

    async def scenario():
        first = await Editor.signed_in(note.pk, author)
        assert await first.open()
        await first.type("Kept across restarts. ")
        await first.type("Every word.")
        await first.until_stored()
        # A killed worker says nothing: no disconnect, no last merged save.
        from collaboration import consumers, documents

        documents.forget_all()
        consumers.editors.clear()
        second = await Editor.signed_in(note.pk, author)
        assert await second.open()
        await second.close()
        return str(second.body)

    assert async_to_sync(scenario)() == "Kept across restarts. Every word."


def test_an_editor_that_was_offline_merges_on_reconnect(author, note):
    """A client edits while disconnected; on reconnect its sync step 2 (answering the server's
    step 1) carries those edits, which are stored and reach the others."""

    async def scenario():
        ada = await Editor.signed_in(note.pk, author)
        assert await ada.open()
        await ada.type("Online. ")
        await ada.until_stored()
        await ada.close()
        offline = ada.doc  # the browser's document (y-indexeddb keeps it)
        offline.get("body", type=Text).insert(len(str(ada.body)), "Written offline.")
        watcher = await Editor.signed_in(note.pk, author)
        assert await watcher.open()
        back = await Editor.signed_in(note.pk, author, doc=offline)
        assert await back.open()
        await back.until(back.stored_everything)
        await watcher.until(lambda: "Written offline." in str(watcher.body))
        await back.close()
        await watcher.close()

    async_to_sync(scenario)()
    assert body_of(note.pk) == "Online. Written offline."


def test_presence_is_relayed_answered_on_query_and_withdrawn_on_leaving(author, note):
    """Awareness from one editor reaches the other; a newcomer learns who is already here; a
    query-awareness is answered; leaving removes the state for the others."""
    state = {"user": {"name": "Ada", "color": "#aa0000", "colorLight": "#aa000033", "id": 1}}
    ada_as_shown = person(author).user_state()  # the server's name and colour for her

    async def scenario():
        ada = await Editor.signed_in(note.pk, author)
        assert await ada.open()
        await ada.say_presence(state)
        late = await Editor.signed_in(note.pk, author)
        assert await late.open()
        await late.until(lambda: ada.doc.client_id in late.presence)
        assert json.loads(late.presence[ada.doc.client_id]) == {"user": ada_as_shown}
        await late.send(bytes([QUERY_AWARENESS]))
        late.presence.clear()
        await late.until(lambda: ada.doc.client_id in late.presence)
        await ada.close()
        await late.until(lambda: ada.doc.client_id not in late.presence)
        await late.close()

    async_to_sync(scenario)()


def test_an_http_restore_shows_up_in_connected_editors(author, note):
    """Restoring a revision over HTTP puts its text into the live document as Y operations,
    stored and broadcast: a connected editor sees the restored text."""
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "First draft."}
    )
    first = note.revisions.order_by("-number").first()

    async def scenario():
        editor = await Editor.signed_in(note.pk, author)
        assert await editor.open()
        await editor.type(" More.")
        await editor.until_stored()
        await sync_to_async(services.revision_restore)(revision_id=first.pk, user=author)
        await editor.until(lambda: str(editor.body) == "First draft.")
        await editor.close()

    async_to_sync(scenario)()
    assert body_of(note.pk) == "First draft."
    kinds = list(note.revisions.order_by("number").values_list("kind", "body"))
    assert ("autosave", "First draft. More.") in kinds  # the typing was flushed first


def test_a_seeded_document_is_seeded_once_even_when_two_processes_load_it(author, note):
    """Seeding happens under the note's row lock and re-checks: a second seed stores nothing,
    so the text is never doubled."""
    from collaboration import documents

    documents.seed(note.pk)
    documents.seed(note.pk)
    doc = Doc()
    for data in DocumentUpdate.objects.filter(note=note).values_list("data", flat=True):
        doc.apply_update(bytes(data))
    assert str(doc.get("title", type=Text)) == "Heat equation"
    assert DocumentUpdate.objects.filter(note=note).count() == 1


@pytest.mark.redis_layer
@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (REDIS_URL)")
def test_editors_on_two_app_servers_meet_through_the_redis_layer(author, note, settings):
    """Another app server is another Redis channel layer: it receives each stored update of
    the note's group, and an update it stores and broadcasts reaches this server's editor."""
    from channels_redis.core import RedisChannelLayer

    from collaboration import documents, groups
    from collaboration.protocol import sync_update

    from .editors import typed

    async def scenario():
        elsewhere = RedisChannelLayer(**settings.CHANNEL_LAYERS["default"]["CONFIG"])
        channel = await elsewhere.new_channel()
        await elsewhere.group_add(groups.note_group(note.pk), channel)
        editor = await Editor.signed_in(note.pk, author)
        assert await editor.open()
        await editor.type("Through Redis.")
        message = {}
        while message.get("type") != "live.update":
            message = await asyncio.wait_for(elsewhere.receive(channel), 5)
        assert message["frame"] == sync_update(message["data"])
        assert message["sender"]  # the consumer that stored it skips its own
        remote = Doc()
        remote.apply_update(editor.doc.get_update())
        update = typed(remote, " From afar.")
        row = await sync_to_async(documents.update_insert)(note.pk, update, author.pk)
        await elsewhere.group_send(
            groups.note_group(note.pk),
            {"type": "live.update", "id": row.pk, "data": update, "frame": sync_update(update)},
        )
        await editor.until(lambda: str(editor.body) == "Through Redis. From afar.")
        await editor.close()
        await elsewhere.group_discard(groups.note_group(note.pk), channel)
        await elsewhere.close_pools()

    async_to_sync(scenario)()


def test_a_quiet_socket_is_kept_alive_and_presence_comes_back_to_its_sender(
    author, note, monkeypatch
):
    """y-websocket's client drops a socket silent for 30 s: a lone editor gets its own
    presence renewals back (as from y-websocket's server) and, when even those stop, an empty
    presence update every KEEPALIVE_SECONDS."""
    from collaboration import consumers

    monkeypatch.setattr(consumers, "KEEPALIVE_SECONDS", 0.2)

    async def scenario():
        editor = await Editor.signed_in(note.pk, author)
        assert await editor.open()
        await editor.say_presence({"user": {"name": "Ada"}})
        await editor.until(lambda: editor.doc.client_id in editor.presence)
        await editor.until(lambda: bytes([1, 1, 0]) in editor.frames, timeout=2)
        await editor.close()

    async_to_sync(scenario)()


def test_the_room_without_its_trailing_slash_is_the_same_note(author, note):
    """WebsocketProvider(server, room) connects to server + "/" + room: "/live/notes/12"
    reaches note 12 as "/live/notes/12/" does."""
    from channels.testing import WebsocketCommunicator

    from scidraft.asgi import application

    from .editors import HOST, ORIGIN, session_cookie

    async def scenario():
        cookie = await sync_to_async(session_cookie)(author)
        editor = Editor(note.pk, cookie)
        editor.communicator = WebsocketCommunicator(
            application,
            f"/live/notes/{note.pk}",
            headers=[
                (b"host", HOST.encode()),
                (b"origin", ORIGIN.encode()),
                (b"cookie", cookie.encode()),
            ],
        )
        assert await editor.open()
        await editor.close()
        return str(editor.title)

    assert async_to_sync(scenario)() == "Heat equation"


def test_an_update_the_database_refuses_closes_with_a_code_the_client_reconnects_on(
    author, note, monkeypatch
):
    """PostgreSQL fails while an update is stored: nothing is acknowledged, and the socket
    closes with 4500 — a code daphne lets an application send (1011 it refuses, leaving the
    browser on a socket nobody reads) and one the browser's provider reconnects on, sending
    again what was not acknowledged."""
    from django.db import OperationalError

    from collaboration import consumers, documents

    def failing(note_id, data, author_id):
        raise OperationalError("the database went away")

    async def scenario():
        editor = await Editor.signed_in(note.pk, author)
        assert await editor.open()
        monkeypatch.setattr(documents, "update_store", failing)
        await editor.type("Lost?")
        await editor.until(lambda: editor.closed is not None)
        return editor

    editor = async_to_sync(scenario)()
    assert editor.closed == consumers.SERVER_ERROR == 4500
    assert not [m for m in editor.server if m["type"] == "stored"]
