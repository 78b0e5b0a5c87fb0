"""A co-author's editor without a browser: a pycrdt document kept in step with a note's live
document over /live/notes/<id>/, speaking what y-websocket's WebsocketProvider speaks
(/work/wt/LIVE-SPEC.md, "The wire"), so that tests and `make reliability` type as browsers do.

The WebSocket itself is autobahn's asyncio client: autobahn comes with daphne (a locked
dependency), so nothing is added for the tests. Everything runs on one asyncio loop; nothing
here is thread-safe.

Like the browser, the document is the editor's own: what is typed while the socket is down
stays in it, and the sync exchange on the next connection sends it (the server's step 1 names
what the server has; the reply, step 2, is everything it lacks).
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
import urllib.parse
from collections.abc import Callable

import txaio

txaio.use_asyncio()

from autobahn.asyncio.websocket import (  # noqa: E402 - after choosing txaio's loop
    WebSocketClientFactory,
    WebSocketClientProtocol,
)
from pycrdt import Doc, Text, create_update_message, write_var_uint  # noqa: E402

SYNC, AWARENESS, QUERY_AWARENESS, OURS = 0, 1, 3, 100
STEP1, STEP2, UPDATE = 0, 1, 2


def read_var_uint(data: bytes, at: int) -> tuple[int, int]:
    """lib0's unsigned varint at `at`: the value and where the next field starts."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def read_var_bytes(data: bytes, at: int) -> tuple[bytes, int]:
    length, at = read_var_uint(data, at)
    return data[at : at + length], at + length


def var_bytes(payload: bytes) -> bytes:
    return write_var_uint(len(payload)) + payload


def state_vector(encoded: bytes) -> dict[int, int]:
    """A Yjs encoded state vector as {client id: clock} (the clock counts the client's items:
    one per character typed)."""
    count, at = read_var_uint(encoded, 0)
    clocks = {}
    for _ in range(count):
        client, at = read_var_uint(encoded, at)
        clocks[client], at = read_var_uint(encoded, at)
    return clocks


def sync_message(step: int, payload: bytes) -> bytes:
    return bytes([SYNC, step]) + var_bytes(payload)


class LiveClosed(Exception):
    """The socket closed (or never opened): `code` is the close code, None when the connection
    failed before the WebSocket was open (refused, or the handshake was answered otherwise)."""

    def __init__(self, code: int | None, reason: str):
        super().__init__(f"live socket closed: {code} {reason}")
        self.code = code
        self.reason = reason


class _Protocol(WebSocketClientProtocol):
    editor: LiveEditor

    def onOpen(self):  # noqa: N802 - autobahn's names
        self.factory.editor._opened(self)

    def onMessage(self, payload, isBinary):  # noqa: N802, N803
        if isBinary:
            self.factory.editor._received(payload)

    def onClose(self, wasClean, code, reason):  # noqa: N802, N803
        self.factory.editor._closed(code, reason or "")


class LiveEditor:
    """One editor of one note. `url` is ws://host:port/live/notes/<id>/; `cookie` the Cookie
    header of a signed-in browser (the session); `origin` the page's origin, which the server
    checks as a browser's.

    `arrived(client_id, first_clock, end_clock, when)` is called when items typed by another
    editor arrive: that editor's characters with clocks first_clock..end_clock-1 (a sender
    knows which keystroke had which clock; see `clock`). `acknowledged(first_clock, end_clock,
    when)` when a "stored" message covers this editor's own characters with those clocks."""

    def __init__(self, url: str, cookie: str, origin: str,
                 arrived: Callable[[int, int, int, float], None] | None = None,
                 acknowledged: Callable[[int, int, float], None] | None = None):  # fmt: skip
        self.url = url
        self.cookie = cookie
        self.origin = origin
        self.arrived = arrived
        self.acknowledged = acknowledged
        self.doc = Doc()
        self.body = self.doc.get("body", type=Text)
        self.title = self.doc.get("title", type=Text)
        self._seen = state_vector(self.doc.get_state())
        self._applying_remote = False
        self._protocol: _Protocol | None = None
        self._open = asyncio.Event()
        self._synced = asyncio.Event()
        self._closed_event = asyncio.Event()
        self._stored_changed = asyncio.Event()
        self.close_code: int | None = None
        self.close_reason = ""
        # This editor's clock in the server's state vector of the newest "stored": everything
        # typed below it is committed on the server.
        self.stored_clock = 0
        self.saved: list[dict] = []
        self.errors: list[dict] = []
        self.connections = 0
        self.doc.observe(self._changed)

    # --- The connection ------------------------------------------------------------------------

    async def connect(self, timeout: float = 15.0) -> None:
        """Open the socket, say what this document has (sync step 1) and wait for the server's
        answer (step 2): then the document holds the server's text and the server has been
        sent everything typed here that it lacked. LiveClosed if it closes first."""
        self._open.clear()
        self._synced.clear()
        self._closed_event.clear()
        self.close_code, self.close_reason = None, ""
        parts = urllib.parse.urlsplit(self.url)
        factory = WebSocketClientFactory(
            self.url, origin=self.origin, headers={"Cookie": self.cookie}
        )
        factory.protocol = _Protocol
        factory.editor = self
        # No pings of our own: daphne pings idle sockets. Nagle off: each keystroke goes at once.
        factory.setProtocolOptions(tcpNoDelay=True, openHandshakeTimeout=timeout,
                                   closeHandshakeTimeout=2)  # fmt: skip
        loop = asyncio.get_running_loop()
        try:
            await asyncio.wait_for(
                loop.create_connection(factory, parts.hostname, parts.port), timeout
            )
        except (TimeoutError, OSError) as error:
            raise LiveClosed(None, f"{type(error).__name__}: {error}") from error
        await self._until(self._synced, timeout, "the server's sync step 2")
        self.connections += 1

    async def _until(self, event: asyncio.Event, timeout: float, what: str) -> None:
        waiting = asyncio.ensure_future(event.wait())
        closing = asyncio.ensure_future(self._closed_event.wait())
        try:
            done, _ = await asyncio.wait(
                {waiting, closing}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            waiting.cancel()
            closing.cancel()
        if waiting in done:
            return
        if closing in done:
            raise LiveClosed(self.close_code, self.close_reason)
        raise TimeoutError(f"no {what} within {timeout:g} s")

    @property
    def connected(self) -> bool:
        return self._protocol is not None

    async def close(self, code: int = 1000) -> None:
        if self._protocol is not None:
            self._protocol.sendClose(code=code)
        try:
            await asyncio.wait_for(self._closed_event.wait(), 5)
        except TimeoutError:
            if self._protocol is not None:
                self._protocol.transport.abort()

    async def closed(self, timeout: float) -> int | None:
        """Wait for the server to close the socket: its close code."""
        await asyncio.wait_for(self._closed_event.wait(), timeout)
        return self.close_code

    def _opened(self, protocol: _Protocol) -> None:
        self._protocol = protocol
        self._open.set()
        # As WebsocketProvider: step 1 at once, with what this document has.
        self._send(sync_message(STEP1, self.doc.get_state()))

    def _closed(self, code: int | None, reason: str) -> None:
        self._protocol = None
        self.close_code, self.close_reason = code, reason
        self._synced.clear()
        self._closed_event.set()
        self._stored_changed.set()

    def _send(self, message: bytes) -> None:
        if self._protocol is not None:
            self._protocol.sendMessage(message, isBinary=True)

    # --- Typing --------------------------------------------------------------------------------

    @property
    def clock(self) -> int:
        """How many items this editor has made: its next character gets this clock."""
        return state_vector(self.doc.get_state()).get(self.doc.client_id, 0)

    def insert(self, index: int, text: str) -> int:
        """Type `text` at `index` of the body; the clock of its first character. Sent at once
        when connected, kept in the document otherwise."""
        first = self.clock
        self.body.insert(index, text)
        return first

    def _changed(self, event) -> None:
        if not self._applying_remote:
            self._send(create_update_message(event.update))

    # --- Receiving -----------------------------------------------------------------------------

    def _received(self, message: bytes) -> None:
        kind, at = read_var_uint(message, 0)
        if kind == SYNC:
            step, at = read_var_uint(message, at)
            payload, _ = read_var_bytes(message, at)
            if step == STEP1:
                self._send(sync_message(STEP2, self.doc.get_update(payload)))
            elif step in (STEP2, UPDATE):
                self._apply(payload)
                if step == STEP2:
                    self._synced.set()
        elif kind == OURS:
            text, _ = read_var_bytes(message, at)
            self._ours(json.loads(text.decode("utf-8")))
        # Awareness (presence) and its queries: this editor shows nobody's cursor.

    def _apply(self, update: bytes) -> None:
        if update == b"\x00\x00":  # an empty update (a step 2 with nothing in it)
            return
        self._applying_remote = True
        try:
            self.doc.apply_update(update)
        finally:
            self._applying_remote = False
        now = time.monotonic()
        clocks = state_vector(self.doc.get_state())
        if self.arrived is not None:
            for client, clock in clocks.items():
                before = self._seen.get(client, 0)
                if clock > before and client != self.doc.client_id:
                    self.arrived(client, before, clock, now)
        self._seen = clocks

    def _ours(self, data: dict) -> None:
        if data.get("type") == "stored":
            clock = state_vector(base64.b64decode(data["sv"])).get(self.doc.client_id, 0)
            if clock > self.stored_clock:
                if self.acknowledged is not None:
                    self.acknowledged(self.stored_clock, clock, time.monotonic())
                self.stored_clock = clock
            self._stored_changed.set()
        elif data.get("type") == "saved":
            self.saved.append(data)
        elif data.get("type") == "error":
            self.errors.append(data)

    async def stored(self, clock: int | None = None, timeout: float = 10.0) -> bool:
        """Wait until the server says it stored this editor's items below `clock` (all typed so
        far by default): True, or False if the socket closed or the time ran out first."""
        clock = self.clock if clock is None else clock
        deadline = time.monotonic() + timeout
        while self.stored_clock < clock:
            if self._protocol is None:
                return False
            self._stored_changed.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                await asyncio.wait_for(self._stored_changed.wait(), left)
            except TimeoutError:
                return False
        return True

    @property
    def text(self) -> str:
        return str(self.body)


def merged_text(updates: list[bytes], name: str = "body") -> str:
    """The text `name` of a document made of `updates` (as stored on the server), in any
    order: the CRDT merges them all the same."""
    doc = Doc()
    text = doc.get(name, type=Text)
    for update in updates:
        doc.apply_update(update)
    return str(text)
