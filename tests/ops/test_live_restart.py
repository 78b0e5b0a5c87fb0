"""Killing the ASGI server mid-typing loses nothing acknowledged.

daphne runs as a subprocess (as docker-compose.yml's "live" service) against a PostgreSQL
database of its own and Redis; two co-authors type into one note through Python editors that
speak the browser's y-websocket protocol (reliability/live_editor.py). daphne is killed with
SIGKILL while they type, so nothing is flushed on the way out; what it had acknowledged
("stored") must already be in PostgreSQL, must reach a browser opened afresh once daphne is
back, and must be in both editors and in the note after the merged save; what the editors
typed while it was down must merge when they reconnect.

It lives in tests/ops beside the database outage test: it is about a process dying in a
deployment, and it keeps tests/collaboration to the server branch's unit tests. Like
tests/site/test_two_processes.py it skips unless the suite runs on PostgreSQL with REDIS_URL
(CI does); the test process itself touches no database (no django_db mark).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import secrets
import socket
import time

import pytest
from django.conf import settings

from reliability.live_editor import LiveClosed, LiveEditor, merged_text, state_vector
from reliability.servers import Daphne
from tests.ops.helpers import createdb, dropdb, manage, postgres_url, shell

MARK = "LIVE-RESTART-JSON "
SEED = "Written together.\n"
# Every keystroke a character of its own, so that each can be looked for.
ALICE_ACKNOWLEDGED = "abcdefgh"
BOB_ACKNOWLEDGED = "ABCDEFGH"
ALICE_AT_THE_KILL = "ijklmnop"  # typed 40 ms apart; daphne dies after the third is sent
ALICE_OFFLINE = "qrs"
BOB_OFFLINE = "XYZ"

_SETUP = """
import json
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.test import Client
from notes.models import NoteAuthor
from notes.services.editing import author_for_user, note_create, note_save
group = Group.objects.get(name="Author")
people = []
for name in ("alice", "bob"):
    user = User.objects.create_user(name, name + "@example.org", "unused-" + name)
    user.groups.add(group)
    people.append(user)
note = note_create(user=people[0], title="Killed mid-sentence")
NoteAuthor.objects.create(note=note, author=author_for_user(people[1]), position=1)
note.refresh_from_db()
note_save(note_id=note.pk, user=people[0], base_version=note.version,
          fields={{"body": {seed!r}}})
cookies = []
for user in people:
    client = Client()
    client.force_login(user)
    name = settings.SESSION_COOKIE_NAME
    cookies.append(name + "=" + client.cookies[name].value)
print({mark!r} + json.dumps({{"note": note.pk, "cookies": cookies}}))
"""

_STORED = """
import base64, json
from collaboration.models import DocumentUpdate
from notes.models import Note, NoteRevision
from notes.services.working import working_state
note = Note.objects.get(pk={note})
rows = DocumentUpdate.objects.filter(note_id=note.pk).order_by("id")
newest = NoteRevision.objects.filter(note_id=note.pk).order_by("-number").first()
print({mark!r} + json.dumps({{
    "updates": [base64.b64encode(bytes(row.data)).decode() for row in rows],
    "working": working_state(note)["body"],
    "revision": newest.body,
    "revision_kind": newest.kind,
}}))
"""


@pytest.fixture
def live_site(tmp_path):
    """manage.py's environment for a site of its own: a new PostgreSQL database (dropped
    afterwards), Redis for the cache and channel layer under prefixes of its own."""
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("the kill test needs the test database on PostgreSQL (CI runs on it)")
    if not os.environ.get("REDIS_URL"):
        pytest.skip("the kill test needs REDIS_URL (the channel layer)")
    name = createdb()
    label = f"liverestart-{secrets.token_hex(4)}"
    env = {
        "DEBUG": "1",  # spares collectstatic; the socket does not look at DEBUG
        "DATABASE_URL": postgres_url(name),
        "REDIS_URL": os.environ["REDIS_URL"],
        "CACHE_KEY_PREFIX": label,
        "CHANNEL_LAYER_PREFIX": label,
        "LOG_LEVEL": "WARNING",
        "NOTE_AUTOSAVE_COALESCE_SECONDS": "0",
        "MEDIA_ROOT": str(tmp_path / "media"),
    }
    try:
        migrated = manage("migrate", "--noinput", env=env)
        assert migrated.returncode == 0, migrated.stderr[-3000:]
        yield env
    finally:
        dropdb(name)


def _shell_json(code: str, env: dict) -> dict:
    done = shell(code, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith(MARK))
    return json.loads(line[len(MARK) :])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _type(editor: LiveEditor, text: str, at_end: bool) -> dict[str, int]:
    """Type `text` one character at a time, each at the end (or the start) of the body as the
    editor has it; waits for each to be stored. {character: its clock}."""
    clocks = {}
    for character in text:
        clocks[character] = editor.insert(len(editor.text) if at_end else 0, character)
        assert await editor.stored(), f"{character!r} was not acknowledged"
    return clocks


async def _reconnect(editor: LiveEditor, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            await editor.connect()
            return
        except (LiveClosed, TimeoutError):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


@pytest.mark.slow
def test_killing_daphne_mid_typing_loses_nothing_acknowledged_and_offline_typing_merges(
    live_site, tmp_path
):
    env = live_site
    found = _shell_json(_SETUP.format(seed=SEED, mark=MARK), env)
    port = _free_port()
    daphne = Daphne({**os.environ, **env, "PYTHONUNBUFFERED": "1"}, port, tmp_path / "daphne.log")
    try:
        daphne.wait()
        asyncio.run(_session(daphne, env, found["note"], found["cookies"], port))
    finally:
        daphne.stop()
    log = daphne.log.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]


async def _session(daphne: Daphne, env: dict, note: int, cookies: list[str], port: int):
    url = f"ws://127.0.0.1:{port}/live/notes/{note}/"
    origin = f"http://127.0.0.1:{port}"
    alice, bob = (LiveEditor(url, cookie, origin) for cookie in cookies)
    await alice.connect()
    await bob.connect()
    # The server seeds the document from the note's text; the editors never do.
    assert alice.text == bob.text == SEED

    acknowledged = await _type(alice, ALICE_ACKNOWLEDGED, at_end=True)
    acknowledged.update(await _type(bob, BOB_ACKNOWLEDGED, at_end=False))

    # Mid-typing: alice keeps typing without waiting, and daphne dies under her.
    at_the_kill: dict[str, int] = {}
    for number, character in enumerate(ALICE_AT_THE_KILL):
        at_the_kill[character] = alice.insert(len(alice.text), character)
        if number == 2:
            daphne.kill()
        await asyncio.sleep(0.04)
    stored_before_the_kill = alice.stored_clock
    await alice.closed(10)
    await bob.closed(10)
    assert not alice.connected and not bob.connected
    acknowledged.update(
        {c: clock for c, clock in at_the_kill.items() if clock < stored_before_the_kill}
    )

    # Acknowledged means committed: it is in PostgreSQL with daphne dead.
    stored = _shell_json(_STORED.format(note=note, mark=MARK), env)
    stored_text = merged_text([base64.b64decode(row) for row in stored["updates"]])
    assert not [c for c in acknowledged if c not in stored_text], stored_text

    # Typed while the server is down: kept by each editor, sent when it is back.
    for character in ALICE_OFFLINE:
        alice.insert(len(alice.text), character)
    for character in BOB_OFFLINE:
        bob.insert(0, character)

    daphne.start()
    daphne.wait()

    # A browser opened afresh sees everything acknowledged, from the database alone.
    newcomer = LiveEditor(url, cookies[1], origin)
    await _reconnect(newcomer)
    assert not [c for c in acknowledged if c not in newcomer.text], newcomer.text
    await newcomer.close()

    await _reconnect(alice)
    await _reconnect(bob)
    # Sync step 2 carried the offline typing; the server stores and acknowledges it.
    assert await alice.stored(timeout=15) and await bob.stored(timeout=15)
    everything = SEED + ALICE_ACKNOWLEDGED + BOB_ACKNOWLEDGED + ALICE_AT_THE_KILL
    everything += ALICE_OFFLINE + BOB_OFFLINE
    deadline = time.monotonic() + 10
    while alice.text != bob.text and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert alice.text == bob.text
    assert sorted(alice.text) == sorted(everything), alice.text
    # Each editor's keystrokes stay in the order typed (Yjs keeps a run of appends together).
    assert _subsequence(ALICE_ACKNOWLEDGED + ALICE_AT_THE_KILL + ALICE_OFFLINE, alice.text)
    assert _subsequence((BOB_ACKNOWLEDGED + BOB_OFFLINE)[::-1], alice.text)  # typed at 0

    # The last editor leaving saves the merged text (the working copy and a revision).
    final = alice.text
    await alice.close()
    await bob.close()
    deadline = time.monotonic() + 30
    while True:
        stored = _shell_json(_STORED.format(note=note, mark=MARK), env)
        if stored["working"] == final or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    assert stored["working"] == final
    assert stored["revision"] == final and stored["revision_kind"] == "autosave"
    assert merged_text([base64.b64decode(row) for row in stored["updates"]]) == final


def _subsequence(wanted: str, text: str) -> bool:
    remaining = iter(text)
    return all(character in remaining for character in wanted)


def test_the_editors_clock_counts_its_characters_and_stored_updates_merge_in_any_order():
    """What the kill test relies on, without a server: an editor's clock (its number in a
    "stored" message's state vector) grows by one per character it types, and the document
    made of the updates as stored is the same whatever order they are read in."""
    alice, bob = LiveEditor("ws://unused", "", ""), LiveEditor("ws://unused", "", "")
    updates = []
    for editor in (alice, bob):
        editor.doc.observe(lambda event: updates.append(event.update))
    assert alice.insert(0, "ab") == 0 and alice.insert(2, "c") == 2
    bob.insert(0, "XY")
    assert state_vector(alice.doc.get_state()) == {alice.doc.client_id: 3}
    assert alice.clock == 3 and bob.clock == 2
    forwards, backwards = merged_text(updates), merged_text(updates[::-1])
    assert forwards == backwards and sorted(forwards) == sorted("abcXY")


@pytest.mark.slow
def test_a_quiet_editor_stays_connected_past_the_channel_layers_blocking_read(live_site, tmp_path):
    """channels-redis waits for a consumer's next message with a 5 s blocking read; an editor
    nobody writes to for longer keeps its consumer (the Redis connection's read timeout is
    longer than that wait): what it types afterwards is acknowledged, and daphne logs no
    exception."""
    env = live_site
    found = _shell_json(_SETUP.format(seed=SEED, mark=MARK), env)
    port = _free_port()
    daphne = Daphne({**os.environ, **env, "PYTHONUNBUFFERED": "1"}, port, tmp_path / "daphne.log")

    async def quiet_then_typing():
        url = f"ws://127.0.0.1:{port}/live/notes/{found['note']}/"
        alice = LiveEditor(url, found["cookies"][0], f"http://127.0.0.1:{port}")
        await alice.connect()
        await asyncio.sleep(8)
        assert alice.connected
        alice.insert(0, "Q")
        assert await alice.stored(timeout=5)
        await alice.close()

    try:
        daphne.wait()
        asyncio.run(quiet_then_typing())
    finally:
        daphne.stop()
    log = daphne.log.read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
