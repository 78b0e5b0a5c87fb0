"""A co-author's editor without a browser: a pycrdt document kept in step with a note's live
document over /live/notes/<id>/, speaking what y-websocket's WebsocketProvider speaks
(docs/architecture.md#writing-together, "The wire"), so that tests and `make reliability` type as
browsers do.

The WebSocket is a small RFC 6455 client over asyncio streams (WebSocket below): the
`websockets` package is not a dependency, and autobahn's asyncio client, which comes with
daphne, cannot run in a process that has loaded Django's settings, since daphne's app there
claims txaio for Twisted. Everything runs on one asyncio loop; nothing here is thread-safe.

Like the browser, the document is the editor's own: what is typed while the socket is down
stays in it, and the sync exchange on the next connection sends it (the server's step 1 names
what the server has; the reply, step 2, is everything it lacks).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import socket
import struct
import time
import urllib.parse
from collections.abc import Callable

from pycrdt import Doc, Text, create_update_message, write_var_uint

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


WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
CONTINUATION, TEXT_FRAME, BINARY_FRAME, CLOSE_FRAME, PING, PONG = 0, 1, 2, 8, 9, 10
NO_CLOSE_FRAME = 1006  # RFC 6455: the connection ended without a close frame (a crash)


class WebSocket:
    """The client end of one WebSocket (RFC 6455): the opening handshake, masked frames out,
    fragmented messages and pings in. Sending never waits (frames are a few bytes of typing)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer
        self.close_code: int | None = None
        self.close_reason = ""
        self.closing = False  # our close frame is sent: the server's answers it, no echo

    @classmethod
    async def open(cls, url: str, headers: dict[str, str]) -> WebSocket:
        """Connect and shake hands; LiveClosed(None, …) if the server answers anything but
        101 with the right accept key."""
        parts = urllib.parse.urlsplit(url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
        # Nagle off: each keystroke leaves at once, as a browser's does.
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16))
        lines = [
            f"GET {parts.path or '/'} HTTP/1.1",
            f"Host: {parts.netloc}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key.decode()}",
            "Sec-WebSocket-Version: 13",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError) as error:
            writer.close()
            raise LiveClosed(None, f"no handshake answer: {error}") from error
        status, *fields = head.decode("latin-1").split("\r\n")
        answer = {
            name.strip().lower(): value.strip()
            for name, _, value in (field.partition(":") for field in fields if field)
        }
        # RFC 6455 fixes SHA-1 for the accept value (a check of the handshake, not a secret).
        accept = base64.b64encode(hashlib.sha1(key + WEBSOCKET_GUID).digest()).decode()  # noqa: S324
        if status.split(" ")[1:2] != ["101"] or answer.get("sec-websocket-accept") != accept:
            writer.close()
            raise LiveClosed(None, f"handshake answered {status!r}")
        return cls(reader, writer)

    def send(self, payload: bytes, opcode: int = BINARY_FRAME) -> None:
        if self.writer.is_closing():
            return
        length = len(payload)
        if length < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 1 << 16:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        mask = os.urandom(4)
        # XOR as one big integer: far faster in Python than byte by byte.
        keys = (mask * (length // 4 + 1))[:length]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(keys, "big")).to_bytes(
            length, "big"
        )
        self.writer.write(head + mask + masked)

    async def receive(self) -> bytes | None:
        """The next whole message, or None once the connection is closed (close_code says
        how: the server's code, or 1006 when it went without a close frame)."""
        message = b""
        try:
            while True:
                first, second = await self.reader.readexactly(2)
                opcode, length = first & 0x0F, second & 0x7F
                if length == 126:
                    (length,) = struct.unpack("!H", await self.reader.readexactly(2))
                elif length == 127:
                    (length,) = struct.unpack("!Q", await self.reader.readexactly(8))
                mask = await self.reader.readexactly(4) if second & 0x80 else b""
                payload = await self.reader.readexactly(length)
                if mask:
                    keys = (mask * (length // 4 + 1))[:length]
                    payload = bytes(a ^ b for a, b in zip(payload, keys, strict=True))
                if opcode == PING:
                    self.send(payload, PONG)
                elif opcode == CLOSE_FRAME:
                    code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
                    self.close_code, self.close_reason = (
                        code,
                        payload[2:].decode("utf-8", "replace"),
                    )
                    if not self.closing:
                        self.send(payload[:2], CLOSE_FRAME)
                    self.writer.close()
                    return None
                elif opcode in (TEXT_FRAME, BINARY_FRAME, CONTINUATION):
                    message += payload
                    if first & 0x80:  # FIN
                        return message
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            self.close_code = self.close_code or NO_CLOSE_FRAME
            self.writer.close()
            return None

    def close(self, code: int = 1000) -> None:
        self.send(struct.pack("!H", code), CLOSE_FRAME)
        self.closing = True

    def abort(self) -> None:
        self.writer.transport.abort()


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
        self._socket: WebSocket | None = None
        self._reading: asyncio.Task | None = None
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
        self._synced.clear()
        self._closed_event.clear()
        self.close_code, self.close_reason = None, ""
        try:
            websocket = await asyncio.wait_for(
                WebSocket.open(self.url, {"Origin": self.origin, "Cookie": self.cookie}), timeout
            )
        except (TimeoutError, OSError) as error:
            raise LiveClosed(None, f"{type(error).__name__}: {error}") from error
        self._opened(websocket)
        self._reading = asyncio.get_running_loop().create_task(self._read(websocket))
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
        return self._socket is not None

    async def close(self, code: int = 1000) -> None:
        """Close as a browser tab does, and wait for the server's answer."""
        if self._socket is not None:
            self._socket.close(code)
            try:
                await asyncio.wait_for(self._closed_event.wait(), 5)
            except TimeoutError:
                if self._socket is not None:
                    self._socket.abort()

    async def closed(self, timeout: float) -> int | None:
        """Wait for the server to close the socket (or for it to drop): the close code."""
        await asyncio.wait_for(self._closed_event.wait(), timeout)
        return self.close_code

    def _opened(self, websocket: WebSocket) -> None:
        self._socket = websocket
        # As WebsocketProvider: step 1 at once, with what this document has.
        self._send(sync_message(STEP1, self.doc.get_state()))

    async def _read(self, websocket: WebSocket) -> None:
        try:
            while (message := await websocket.receive()) is not None:
                self._received(message)
        finally:
            websocket.abort()
        self._socket = None
        self.close_code, self.close_reason = websocket.close_code, websocket.close_reason
        self._synced.clear()
        self._closed_event.set()
        self._stored_changed.set()

    def _send(self, message: bytes) -> None:
        if self._socket is not None:
            self._socket.send(message)

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

    def send_update(self, update: bytes) -> None:
        """Send an update made elsewhere (a crafted one), leaving this document as it is."""
        self._send(create_update_message(update))

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
            if self._socket is None:
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
