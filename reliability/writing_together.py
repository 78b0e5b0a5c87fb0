"""Writing together: co-authors typing into shared notes across two daphne servers (scenario e).

e. Writing together: 20 co-authors, 5 on each of 4 notes, type for
   RELIABILITY_SECONDS at 5–10 characters a second at random places, through pycrdt and the
   y-websocket protocol (live_editor.py), on two daphne servers sharing Redis (the channel
   layer) and PostgreSQL, each note's co-authors split across both. It measures the
   propagation from one editor's keystroke to each other editor of the note (p95 goal
   200 ms), and counts the characters lost: typed by anyone but missing, at the end, from an
   editor, from the stored document (the updates in PostgreSQL), or from the note's text and
   newest revision after the final merged save. Passes with every keystroke acknowledged and
   delivered, nothing lost, every editor with one text, and p95 under the goal.

Each returns a Result (results.py) for run.py's table, and a table of its own.
"""

from __future__ import annotations

import asyncio
import base64
import os
import random
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field

from _table import status
from results import Result

# --- e. Writing together: co-authors typing into shared notes across two daphne servers ------

LIVE_P95_GOAL_MS = 200.0
# Each co-author of a note types one digit of its own (the notes' texts have none), so every
# character can be counted back wherever the note's text ends up.
LIVE_DIGITS = "123456789"
LIVE_SEED = "Written together, live.\n"
# A human typist: 5 to 10 characters a second, each at a random place in the text.
KEYSTROKE_GAP_S = (0.1, 0.2)
LIVE_SETTLE_S = 15.0
LIVE_SAVE_WAIT_S = 40.0


@dataclass
class Keystrokes:
    """Every character typed (by editor client id and clock) with when it was typed, and when
    it reached each other editor of its note and its "stored" acknowledgement."""

    typed_at: dict[tuple[int, int], float] = field(default_factory=dict)
    arrivals: Counter = field(default_factory=Counter)
    propagation: list[float] = field(default_factory=list)
    acknowledgement: list[float] = field(default_factory=list)

    def arrived(self, client: int, first: int, end: int, when: float) -> None:
        for clock in range(first, end):
            typed = self.typed_at.get((client, clock))
            if typed is not None:
                self.arrivals[client, clock] += 1
                self.propagation.append(when - typed)

    def acknowledged_by(self, client: int):
        def acknowledged(first: int, end: int, when: float) -> None:
            for clock in range(first, end):
                typed = self.typed_at.get((client, clock))
                if typed is not None:
                    self.acknowledgement.append(when - typed)

        return acknowledged


# Close codes after which WebsocketProvider's page stops reconnecting
# (docs/architecture.md#writing-together, "The browser").
FINAL_CLOSE_CODES = {4401, 4403, 4413}
# y-websocket's reconnect back-off: 100 ms doubling, at most 2.5 s (maxBackoffTime).
BACKOFF_S = (0.1, 2.5)


@dataclass
class CoAuthor:
    note: int
    digit: str
    server: str
    editor: object  # live_editor.LiveEditor
    typed: int = 0
    typed_offline: int = 0  # kept in the editor's document, sent on reconnecting
    closes: list = field(default_factory=list)  # close codes seen, in order
    gave_up: bool = False


def _percentile(ordered: list[float], share: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


async def _type(author: CoAuthor, keystrokes: Keystrokes, stop_at: float, rng) -> None:
    """Keystrokes at a human rate; while the socket is down they go on into the document."""
    editor = author.editor
    while True:
        await asyncio.sleep(rng.uniform(*KEYSTROKE_GAP_S))
        if time.monotonic() >= stop_at:
            return
        typed = time.monotonic()
        clock = editor.clock
        # Stamped before the insert: the update leaves inside it.
        keystrokes.typed_at[editor.doc.client_id, clock] = typed
        editor.insert(rng.randint(0, len(editor.text)), author.digit)
        author.typed += 1
        author.typed_offline += not editor.connected


async def _stay_connected(author: CoAuthor, stopping: asyncio.Event) -> None:
    """Reconnect after a close, as the browser's provider does (with its back-off), except
    after the close codes that say reconnecting cannot help."""
    from live_editor import LiveClosed

    editor = author.editor
    failures = 0
    while not stopping.is_set():
        if editor.connected:
            closed = asyncio.ensure_future(editor.closed(timeout=3600))
            stop = asyncio.ensure_future(stopping.wait())
            await asyncio.wait({closed, stop}, return_when=asyncio.FIRST_COMPLETED)
            closed.cancel()
            stop.cancel()
            if stopping.is_set():
                return
            author.closes.append(editor.close_code)
        if editor.close_code in FINAL_CLOSE_CODES:
            author.gave_up = True
            return
        await asyncio.sleep(min(BACKOFF_S[1], BACKOFF_S[0] * 2**failures))
        try:
            await editor.connect(timeout=10)
            failures = 0
        except (LiveClosed, TimeoutError):
            failures += 1


def _missing(expected: Counter, text: str) -> Counter:
    """Characters of `expected` (digit -> count typed) that `text` lacks, by digit."""
    found = Counter(character for character in text if character in LIVE_DIGITS)
    return Counter({digit: max(0, count - found[digit]) for digit, count in expected.items()})


async def _co_author_session(site, seconds: float, result: Result, keystrokes: Keystrokes):
    from live_editor import LiveEditor, merged_text

    rng = random.Random(21)  # noqa: S311 - typing positions, not secrets
    setup = site.live
    authors: list[CoAuthor] = []
    for number, (_username, cookie, note) in enumerate(setup["co_authors"]):
        server = site.daphnes[number % len(site.daphnes)]
        editor = LiveEditor(f"{server.url}/live/notes/{note}/", cookie, server.base)
        editor.arrived = keystrokes.arrived
        editor.acknowledged = keystrokes.acknowledged_by(editor.doc.client_id)
        digit = LIVE_DIGITS[sum(1 for a in authors if a.note == note)]
        authors.append(CoAuthor(note, digit, f"daphne {number % len(site.daphnes) + 1}", editor))
    opened = await asyncio.gather(
        *(author.editor.connect(timeout=30) for author in authors), return_exceptions=True
    )
    failed = [error for error in opened if isinstance(error, BaseException)]
    if failed:  # those editors connect again with the others' reconnections below
        result.problems.append(f"{len(failed)} editors could not connect at first: {failed[0]!r}")
    seeded = [a for a in authors if a.editor.connected and a.editor.text != LIVE_SEED]
    if seeded:
        result.problems.append(
            f"{len(seeded)} editors did not start from the note's text: {seeded[0].editor.text!r}"
        )

    began = time.monotonic()
    stop_at = began + seconds
    stopping = asyncio.Event()
    connections = [asyncio.ensure_future(_stay_connected(author, stopping)) for author in authors]
    await asyncio.gather(*(_type(author, keystrokes, stop_at, rng) for author in authors))
    typing_seconds = time.monotonic() - began

    # Everyone back on line (a reconnect sends what was typed offline), every keystroke
    # acknowledged ("stored"), then every editor holding every character.
    deadline = time.monotonic() + LIVE_SETTLE_S
    while time.monotonic() < deadline and not all(a.editor.connected or a.gave_up for a in authors):
        await asyncio.sleep(0.1)
    stopping.set()
    await asyncio.gather(*connections)
    await asyncio.gather(*(author.editor.stored(timeout=LIVE_SETTLE_S) for author in authors))
    expected: dict[int, Counter] = {note: Counter() for note in setup["notes"]}
    for author in authors:
        expected[author.note][author.digit] += author.typed
    deadline = time.monotonic() + LIVE_SETTLE_S
    while time.monotonic() < deadline and any(
        _missing(expected[a.note], a.editor.text).total() for a in authors
    ):
        await asyncio.sleep(0.1)
    unacknowledged = sum(max(0, a.editor.clock - a.editor.stored_clock) for a in authors)
    closes = [(a.server, code) for a in authors for code in a.closes]
    errors = [error for a in authors for error in a.editor.errors]
    in_editors = {note: Counter() for note in expected}
    for author in authors:
        in_editors[author.note] |= _missing(expected[author.note], author.editor.text)
    texts = {a.note: a.editor.text for a in authors}
    differ = sum(1 for a in authors if a.editor.text != texts[a.note])
    saved_messages = sum(len(a.editor.saved) for a in authors)

    # The last editor of a note leaving (on each server) makes the final merged save.
    await asyncio.gather(*(author.editor.close() for author in authors))
    deadline = time.monotonic() + LIVE_SAVE_WAIT_S
    while True:
        documents = site.live_documents(setup["notes"])
        saved = {int(n): d["working"] for n, d in documents.items()}
        if all(saved[n] == texts[n] for n in expected) or time.monotonic() > deadline:
            break
        await asyncio.sleep(1.0)
    waited_for_save = time.monotonic() - (deadline - LIVE_SAVE_WAIT_S)

    # Lost: typed, and missing from an editor, the stored document (every update in PostgreSQL,
    # merged), the note's saved text (the working copy, or a draft's row) or its newest revision.
    lost = {"anywhere": 0, "editors": 0, "stored": 0, "working": 0, "revision": 0}
    for note, wanted in expected.items():
        document = documents[str(note)]
        stored = merged_text([base64.b64decode(row) for row in document["updates"]])
        per_place = {
            "editors": in_editors[note],
            "stored": _missing(wanted, stored),
            "working": _missing(wanted, document["working"]),
            "revision": _missing(wanted, document["revision"]),
        }
        anywhere = Counter()
        for place, missing in per_place.items():
            lost[place] += missing.total()
            anywhere |= missing  # the larger count per digit
        lost["anywhere"] += anywhere.total()
        if document["working"] != texts[note]:
            result.problems.append(
                f"note {note}: the saved text is not the editors' text "
                f"({len(document['working'])} and {len(texts[note])} characters)"
            )
    return {
        "authors": authors,
        "typing_seconds": typing_seconds,
        "unacknowledged": unacknowledged,
        "closes": closes,
        "gave_up": sum(a.gave_up for a in authors),
        "offline": sum(a.typed_offline for a in authors),
        "errors": errors,
        "lost": lost,
        "differ": differ,
        "saved_messages": saved_messages,
        "waited_for_save": waited_for_save,
        "documents": documents,
    }


def live_editing(site, seconds: float, notes: int = 4, per_note: int = 5) -> Result:
    """e. `notes` × `per_note` co-authors, each on one note, split over two daphne servers
    that share Redis (the channel layer) and PostgreSQL, type for `seconds` at a human rate."""
    co_authors = notes * per_note
    result = Result(f"e. {co_authors} co-authors on {notes} notes, 2 daphne, {seconds:g} s")
    site.start_live(notes, per_note, LIVE_SEED)
    keystrokes = Keystrokes()
    own_cpu = time.process_time()
    try:
        session = asyncio.run(_co_author_session(site, seconds, result, keystrokes))
    finally:
        site.stop_live()
    own_cpu = time.process_time() - own_cpu
    authors = session["authors"]
    typed = sum(author.typed for author in authors)
    elapsed = session["typing_seconds"]
    peers = per_note - 1
    propagation = sorted(keystrokes.propagation)
    acknowledgement = sorted(keystrokes.acknowledgement)
    not_delivered = sum(max(0, peers - keystrokes.arrivals[key]) for key in keystrokes.typed_at)
    lost = session["lost"]
    result.requests = typed
    result.rps = typed / elapsed if elapsed else None
    result.errors = len(session["errors"]) + len(session["closes"])
    result.lost_writes = lost["anywhere"]
    if propagation:
        result.p50_ms = statistics.median(propagation) * 1000
        result.p99_ms = _percentile(propagation, 0.99) * 1000
    p95 = _percentile(propagation, 0.95) * 1000 if propagation else None
    if p95 is None or p95 >= LIVE_P95_GOAL_MS:
        result.problems.append(f"propagation p95 {p95} ms, the goal is < {LIVE_P95_GOAL_MS:g} ms")
    if session["errors"] or session["closes"]:
        closes = Counter(session["closes"])
        result.notes.append(
            "sockets closed by the server or dropped (server, code): "
            + ", ".join(f"{count}× {key}" for key, count in closes.most_common())
            + f"; error messages: {session['errors'][:5]}"
        )
    if session["unacknowledged"]:
        result.problems.append(f"{session['unacknowledged']} keystrokes never acknowledged")
    if not_delivered:
        result.problems.append(f"{not_delivered} deliveries to co-authors never happened live")
    if session["differ"]:
        result.problems.append(f"{session['differ']} editors ended with another text")
    if session["gave_up"]:
        result.problems.append(f"{session['gave_up']} editors were closed for good")
    if session["offline"]:
        result.notes.append(
            f"{session['offline']} keystrokes typed while the editor's socket was down (sent "
            "on reconnecting)"
        )

    def ms(ordered: list[float], share: float) -> str:
        return f"{_percentile(ordered, share) * 1000:.0f}" if ordered else "—"

    result.tables.append(
        (
            "e. writing together: keystrokes, propagation to the co-authors of the note (either "
            "server), acknowledgements, lost characters",
            ["keystrokes", "updates/s", "deliveries", "p50 ms", "p95 ms", "p99 ms", "max ms",
             "stored p95 ms", "unacked", "lost chars", "in editors", "stored doc",
             "working copy", "revision", "status"],
            [[
                f"{typed:,}",
                f"{result.rps:.1f}" if result.rps else "—",
                f"{len(propagation):,}/{typed * peers:,}",
                ms(propagation, 0.5), ms(propagation, 0.95), ms(propagation, 0.99),
                ms(propagation, 1.0), ms(acknowledgement, 0.95),
                str(session["unacknowledged"]), str(lost["anywhere"]),
                str(lost["editors"]), str(lost["stored"]), str(lost["working"]),
                str(lost["revision"]), status(result.ok),
            ]],
        )
    )  # fmt: skip
    by_server = Counter(author.server for author in authors)
    result.notes.append(
        f"{len(authors)} co-authors ({per_note} per note, split {dict(by_server)}) typed "
        f"{typed:,} characters in {elapsed:.1f} s at 5–10 a second each; "
        f"{session['saved_messages']} 'saved' messages received; the final merged saves were "
        f"in the database {session['waited_for_save']:.1f} s after the editors left"
    )
    documents = session["documents"]
    published = {row[0] for row in site.live["published"]}
    result.notes.append(
        "notes "
        + ", ".join(
            f"{n} ({'published' if n in published else 'draft'})" for n in site.live["notes"]
        )  # fmt: skip
        + "; stored updates per note: "
        + ", ".join(f"{n}: {len(d['updates'])} rows" for n, d in sorted(documents.items()))
        + "; revisions per note: "
        + ", ".join(f"{n}: {d['revisions']}" for n, d in sorted(documents.items()))
    )
    result.notes.append(
        f"load generator CPU {own_cpu:.1f} s over {elapsed:.1f} s (one asyncio loop, "
        f"{len(authors)} sockets), on {os.cpu_count()} cores shared with both servers"
    )
    return result
