"""A test editor that speaks to the server as y-websocket's WebsocketProvider does: its own
pycrdt document, real y-protocol frames over channels' WebsocketCommunicator, signed in with
a real session cookie through scidraft.asgi's stack."""

from __future__ import annotations

import asyncio
import base64
import json

from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client
from pycrdt import Decoder, Doc, Text, create_sync_message, create_update_message

from collaboration.protocol import (
    AWARENESS,
    SERVER,
    SYNC,
    SYNC_STEP1,
    Presence,
    awareness_message,
    awareness_read,
    frame_read,
    sync_step2,
)

HOST = "testserver"
ORIGIN = f"http://{HOST}"


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


class Editor:
    """One browser tab editing a note live."""

    def __init__(
        self, note_id: int, cookie: str | None, *, origin: str = ORIGIN, host=HOST, doc=None
    ):
        from scidraft.asgi import application

        headers = [(b"host", host.encode())]
        if origin:
            headers.append((b"origin", origin.encode()))
        if cookie:
            headers.append((b"cookie", cookie.encode()))
        self.communicator = WebsocketCommunicator(
            application, f"/live/notes/{note_id}/", headers=headers
        )
        self.doc = doc or Doc()
        self.body = self.doc.get("body", type=Text)
        self.title = self.doc.get("title", type=Text)
        self.server: list[dict] = []  # type-100 messages, in order
        self.frames: list[bytes] = []  # every binary message, as received
        self.presence: dict[int, str] = {}  # others' awareness states by client id
        self.synced = False
        self.closed: int | None = None

    @classmethod
    async def signed_in(cls, note_id: int, user, **options) -> Editor:
        cookie = await sync_to_async(session_cookie)(user) if user is not None else None
        return cls(note_id, cookie, **options)

    async def open(self) -> bool:
        """Connect and sync as the provider does (its step 1 first); True once synced."""
        accepted, _ = await self.communicator.connect()
        if not accepted:
            self.closed = 403
            return False
        await self.send(create_sync_message(self.doc))
        await self.until(lambda: self.synced or self.closed is not None)
        return self.closed is None

    async def send(self, frame: bytes) -> None:
        await self.communicator.send_to(bytes_data=frame)

    async def type(self, text: str, at: int | None = None, *, into: str = "body") -> None:
        """Insert `text` (at a UTF-8 offset, pycrdt's unit; default the end) and send the
        update, as y-websocket does on every local transaction."""
        target = self.body if into == "body" else self.title
        before = self.doc.get_state()
        target.insert(len(target) if at is None else at, text)
        await self.send(create_update_message(self.doc.get_update(before)))

    async def erase(self, start: int, end: int) -> None:
        before = self.doc.get_state()
        del self.body[start:end]
        await self.send(create_update_message(self.doc.get_update(before)))

    async def say_presence(self, state: dict | None, clock: int = 1) -> None:
        text = "null" if state is None else json.dumps(state)
        await self.send(awareness_message([Presence(self.doc.client_id, clock, text)]))

    async def receive_one(self, timeout: float = 2) -> None:
        message = await self.communicator.receive_output(timeout)
        if message["type"] == "websocket.close":
            self.closed = message.get("code", 1000)
            return
        frame = message["bytes"]
        self.frames.append(frame)
        kind = frame[0]
        if kind == SERVER:
            decoder = Decoder(frame[1:])
            self.server.append(json.loads(decoder.read_message().decode("utf-8")))
        elif kind == SYNC:
            parsed = frame_read(frame)
            if parsed.sync_kind == SYNC_STEP1:
                await self.send(sync_step2(self.doc.get_update(parsed.payload)))
            else:
                if parsed.payload != b"\x00\x00":
                    self.doc.apply_update(parsed.payload)
                self.synced = self.synced or parsed.sync_kind == 1
        elif kind == AWARENESS:
            for entry in awareness_read(frame_read(frame).payload):
                if entry.state == "null":
                    self.presence.pop(entry.client_id, None)
                else:
                    self.presence[entry.client_id] = entry.state

    async def until(self, condition, timeout: float = 5) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not condition():
            if self.closed is not None:
                return
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError("the server did not send what was awaited")
            try:
                await self.receive_one(timeout=left)
            except TimeoutError:
                raise AssertionError("the server did not send what was awaited") from None

    async def drain(self, seconds: float = 0.2) -> None:
        """Read whatever arrives for a moment (receive_nothing: a timed-out receive_output
        would cancel the application)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while self.closed is None and loop.time() < deadline:
            if not await self.communicator.receive_nothing(timeout=0.05):
                await self.receive_one()

    def stored_everything(self) -> bool:
        """The newest `stored` covers this editor's own clock ("All changes stored")."""
        stored = [m for m in self.server if m["type"] == "stored"]
        if not stored:
            return False
        server = state_vector(base64.b64decode(stored[-1]["sv"]))
        mine = state_vector(self.doc.get_state()).get(self.doc.client_id, 0)
        return server.get(self.doc.client_id, 0) >= mine

    async def until_stored(self) -> None:
        await self.until(self.stored_everything)

    def saved(self) -> list[dict]:
        return [m for m in self.server if m["type"] == "saved"]

    def errors(self) -> list[dict]:
        return [m for m in self.server if m["type"] == "error"]

    async def close(self) -> None:
        """Disconnect, also after the server closed: the consumer then ends on its own instead
        of being cancelled when the test's event loop closes."""
        await self.communicator.disconnect()
        if self.closed is None:
            self.closed = 1000


def state_vector(encoded: bytes) -> dict[int, int]:
    decoder = Decoder(encoded)
    count = decoder.read_var_uint()
    return {decoder.read_var_uint(): decoder.read_var_uint() for _ in range(count)}


# --- Without a socket: a client's document and its updates, for the services' tests ---------


def stored_doc(note_id: int) -> Doc:
    """A client's document made of every stored update of the note (seeded if need be)."""
    from collaboration import documents
    from collaboration.models import DocumentUpdate

    if not DocumentUpdate.objects.filter(note_id=note_id).exists():
        documents.seed(note_id)
    doc = Doc()
    for data in DocumentUpdate.objects.filter(note_id=note_id).values_list("data", flat=True):
        doc.apply_update(bytes(data))
    return doc


def typed(doc: Doc, text: str, at: int | None = None, field: str = "body") -> bytes:
    """The update of inserting `text` into the client's `field` (default: at its end)."""
    before = doc.get_state()
    target = doc.get(field, type=Text)
    target.insert(len(target) if at is None else at, text)
    return doc.get_update(before)
