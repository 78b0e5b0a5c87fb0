"""The WebSocket end of a note's live document, as y-websocket's WebsocketProvider expects it
(docs/architecture.md#writing-together, "The wire" and "Who, and how much"):

- on connect: sync step 1 (the server's state vector); the client's step 1 is answered with
  step 2 (what it lacks), its step 2 and updates are stored, broadcast and acknowledged;
- presence (awareness) is relayed to the note's editors (the sender's back to it too, as
  y-websocket's server does), capped in size, removed for the others when the connection
  ends, answered on query-awareness, and told to each newcomer; a quiet socket gets a
  keepalive, since the client drops one silent for 30 s;
- each stored update reaches the other editors through the note's channel-layer group, so
  editors on other app servers see it; merged saves follow (saving.scheduler).
"""

from __future__ import annotations

import asyncio
import base64
import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.db import DatabaseError

from . import access, documents, groups, presence, sessions
from .limits import NOTE_FULL, Seat, TokenBucket, seats
from .protocol import (
    AWARENESS,
    QUERY_AWARENESS,
    SYNC,
    SYNC_STEP1,
    Malformed,
    Presence,
    awareness_message,
    awareness_read,
    create_sync_message,
    frame_read,
    server_message,
    sync_step2,
    sync_update,
)
from .saving import scheduler

logger = logging.getLogger(__name__)

# Close codes (docs/architecture.md#writing-together): the client stops reconnecting on 4401, 4403
# and 4413.
SIGNED_OUT, FORBIDDEN, TOO_LARGE, RATE, INVALID = 4401, 4403, 4413, 4429, 4400
# The client reconnects and sends again what was not acknowledged. Not 1011 ("internal
# error"): daphne (autobahn) lets an application close only with 1000 or 3000-4999, and a
# refused code leaves the browser's socket open to a consumer that no longer reads it.
SERVER_ERROR = 4500
EMPTY_UPDATE = b"\x00\x00"  # what a client with nothing new sends as its sync step 2
PRESENCE_CLIENTS_MAX = 16  # Yjs client ids one connection may speak for
# y-websocket's client drops a socket that brought no message for 30 s (its
# messageReconnectTimeout): a quiet one gets an empty presence update this often.
KEEPALIVE_SECONDS = 10
KEEPALIVE = awareness_message([])

# Connected editors per note in this process (the event loop's alone): the last to leave
# saves the note and lets the document go.
editors: dict[int, int] = {}
# Each note's share of the process: one token bucket for all its connections here.
note_buckets: dict[int, TokenBucket] = {}


def note_bucket(note_id: int) -> TokenBucket:
    bucket = note_buckets.get(note_id)
    if bucket is None:
        bucket = note_buckets[note_id] = TokenBucket(
            settings.LIVE_NOTE_RATE_PER_SECOND, settings.LIVE_NOTE_RATE_BURST
        )
    return bucket


class NoteConsumer(AsyncWebsocketConsumer):
    note_id: int
    joined = False
    counted = False
    ended = False
    seated = False  # holds one of the note's seats (limits.EditorSeats)
    session_key: str | None = None  # the session it lives as long as (sessions)

    async def connect(self):
        self.note_id = int(self.scope["url_route"]["kwargs"]["note_id"])
        user = self.scope.get("user")
        self.user_id = user.pk if user is not None and user.is_authenticated else None
        self.presence: dict[int, Presence] = {}  # this connection's clients, by Yjs client id
        self.peers: dict[int, Presence] = {}  # the other editors' latest, for query-awareness
        self.bucket = TokenBucket(settings.LIVE_RATE_PER_SECOND, settings.LIVE_RATE_BURST)
        self.last_sent = 0.0
        # Accepted first: a refusal at the handshake carries no close code to the client.
        await self.accept()
        if self.user_id is None:
            return await self.refuse(
                SIGNED_OUT, "signed-out", "You are signed out: sign in again to write together."
            )
        if not await database_sync_to_async(access.may_edit)(self.user_id, self.note_id):
            return await self.refuse(FORBIDDEN, "forbidden", "You may not edit this note.")
        self.person = await database_sync_to_async(presence.person_of)(self.user_id)
        seat = Seat(NOTE_FULL)
        if editors.get(self.note_id, 0) < settings.LIVE_NOTE_EDITORS_MAX:
            seat = await seats.take(self.note_id, self.channel_name, user_id=self.user_id)
        self.seated = bool(seat)
        if not seat:
            return await self.refuse(RATE, "rate", seat.message())
        # Joined before the document loads: nothing stored in between is missed.
        await self.channel_layer.group_add(groups.note_group(self.note_id), self.channel_name)
        await self.channel_layer.group_add(groups.user_group(self.user_id), self.channel_name)
        self.session_key = sessions.session_key(self.scope)
        if self.session_key:
            await self.channel_layer.group_add(self._session_group(), self.channel_name)
        self.joined = True
        try:
            step1 = await database_sync_to_async(self._open)()
        except documents.Refused as error:
            return await self.refuse(TOO_LARGE, error.kind, str(error))
        editors[self.note_id] = editors.get(self.note_id, 0) + 1
        self.counted = True
        await self.send(bytes_data=step1)
        await groups.send(
            groups.note_group(self.note_id), {"type": "live.hello", "sender": self.channel_name}
        )
        self.rechecks = asyncio.get_running_loop().create_task(self._keep_alive())

    def _open(self) -> bytes:
        live = documents.document(self.note_id)
        documents.limits_check(live)
        return create_sync_message(live.doc)

    async def refuse(self, code: int, kind: str, message: str) -> None:
        """Say why, then close: the client shows the message and stops or backs off."""
        if self.ended:
            return
        self.ended = True
        await self.send(bytes_data=server_message(type="error", code=kind, message=message))
        await self.close(code=code)

    async def disconnect(self, code):
        self.ended = True
        if self.seated:
            self.seated = False
            await seats.leave(self.note_id, self.channel_name, user_id=self.user_id)
        if not self.joined:
            return
        self.joined = False
        rechecks = getattr(self, "rechecks", None)
        if rechecks is not None:
            rechecks.cancel()
        if self.presence:
            gone = [Presence(p.client_id, p.clock + 1, "null") for p in self.presence.values()]
            await self._to_others({"type": "live.frame", "frame": awareness_message(gone)})
        await self.channel_layer.group_discard(groups.note_group(self.note_id), self.channel_name)
        await self.channel_layer.group_discard(groups.user_group(self.user_id), self.channel_name)
        if self.session_key:
            await self.channel_layer.group_discard(self._session_group(), self.channel_name)
        if not self.counted:  # refused once the document was loaded: let it go if unused
            if not editors.get(self.note_id):
                documents.drop(self.note_id)
            return
        editors[self.note_id] -= 1
        if editors[self.note_id] == 0:
            await scheduler.flush(self.note_id)
            if editors.get(self.note_id) == 0:  # nobody came back during the save
                del editors[self.note_id]
                note_buckets.pop(self.note_id, None)
                documents.drop(self.note_id)

    async def receive(self, text_data=None, bytes_data=None):
        if self.ended:
            return
        if bytes_data is None:
            return await self.refuse(INVALID, "invalid", "Messages are binary (y-websocket).")
        if len(bytes_data) > settings.LIVE_MESSAGE_MAX_BYTES:
            return await self.refuse(
                TOO_LARGE,
                "too-large",
                f"A change of {len(bytes_data):,} bytes is more than the "
                f"{settings.LIVE_MESSAGE_MAX_BYTES:,} one message may carry.",
            )
        if not self.bucket.take() or not note_bucket(self.note_id).take():
            return await self.refuse(RATE, "rate", "Too many messages: reconnecting shortly.")
        try:
            frame = frame_read(bytes_data)
            if frame.kind == SYNC:
                await self._sync_message(frame.sync_kind, frame.payload)
            elif frame.kind == AWARENESS:
                await self._presence(bytes_data, frame.payload)
            elif frame.kind == QUERY_AWARENESS:
                known = {**self.peers, **self.presence}
                await self.send(bytes_data=awareness_message(list(known.values())))
        except Malformed as error:
            await self.refuse(INVALID, "invalid", f"Not understood: {error}")
        except documents.Refused as error:  # the document cannot be loaded any more
            await self.refuse(TOO_LARGE, error.kind, str(error))

    async def _sync_message(self, sync_kind: int, payload: bytes) -> None:
        if sync_kind == SYNC_STEP1:
            reply = await database_sync_to_async(self._missing_for)(payload)
            await self.send(bytes_data=sync_step2(reply))
            return
        if payload == EMPTY_UPDATE:
            return
        try:
            stored = await database_sync_to_async(documents.update_store)(
                self.note_id, payload, self.user_id
            )
        except documents.Refused as error:
            return await self.refuse(TOO_LARGE, error.kind, f"{error} The change was not kept.")
        except DatabaseError:
            logger.exception("Could not store an update of note %s", self.note_id)
            self.ended = True
            return await self.close(code=SERVER_ERROR)
        # Stored and committed; then the others, then the sender's acknowledgement.
        await groups.send_update(
            self.note_id, stored.update_id, sync_update(payload), payload, self.channel_name
        )
        state_vector = base64.b64encode(stored.state_vector).decode("ascii")
        await self.send(bytes_data=server_message(type="stored", sv=state_vector))
        scheduler.touch(self.note_id)

    def _missing_for(self, state_vector: bytes) -> bytes:
        live = documents.document(self.note_id)
        try:
            return live.missing_for(state_vector)
        except ValueError as error:
            raise Malformed("The state vector cannot be read.") from error

    async def _presence(self, frame: bytes, payload: bytes) -> None:
        if len(payload) > settings.LIVE_AWARENESS_MAX_BYTES:
            return  # presence is a courtesy: an oversized one is dropped, the typing goes on
        relayed = []
        # Each state as the server restates it (presence.restated: the person's own name and
        # colour), and only for the Yjs clients this connection speaks for.
        for entry in presence.restated(awareness_read(payload), self.person):
            if entry.state == "null":
                if self.presence.pop(entry.client_id, None) is None:
                    continue
            elif entry.client_id in self.presence or len(self.presence) < PRESENCE_CLIENTS_MAX:
                self.presence[entry.client_id] = entry
            else:
                continue
            relayed.append(entry)
        if not relayed:
            return
        # To everyone, the sender included, as y-websocket's own server does: a lone editor's
        # presence renewals (every 15 s) come back to it and keep its socket alive.
        frame = awareness_message(relayed)
        await groups.send(groups.note_group(self.note_id), {"type": "live.frame", "frame": frame})

    async def _to_others(self, message: dict) -> None:
        await groups.send(groups.note_group(self.note_id), {**message, "sender": self.channel_name})

    async def send(self, text_data=None, bytes_data=None, close=False):
        self.last_sent = asyncio.get_running_loop().time()
        await super().send(text_data=text_data, bytes_data=bytes_data, close=close)

    async def _keep_alive(self) -> None:
        """Keep a quiet socket open, and check access every LIVE_RECHECK_SECONDS."""
        loop = asyncio.get_running_loop()
        checked = loop.time()
        while not self.ended:
            await asyncio.sleep(min(KEEPALIVE_SECONDS, settings.LIVE_RECHECK_SECONDS))
            if loop.time() - self.last_sent >= KEEPALIVE_SECONDS:
                await self.send(bytes_data=KEEPALIVE)
            if self.seated and not self.ended:
                await seats.renew(self.note_id, self.channel_name, user_id=self.user_id)
            if loop.time() - checked >= settings.LIVE_RECHECK_SECONDS:
                checked = loop.time()
                await self.live_recheck({})

    # --- The note's group -------------------------------------------------------------------

    async def live_update(self, event):
        live = documents.held(self.note_id)
        if live is not None:
            live.apply_stored(event["id"], event["data"])
        if event.get("sender") != self.channel_name and not self.ended:
            await self.send(bytes_data=event["frame"])

    async def live_frame(self, event):
        if event.get("sender") == self.channel_name or self.ended:
            return
        frame = event["frame"]
        if frame[:1] == bytes([AWARENESS]):
            for entry in awareness_read(frame_read(frame).payload):
                if entry.client_id in self.presence:
                    continue  # this connection's own, echoed
                if entry.state == "null":
                    self.peers.pop(entry.client_id, None)
                else:
                    self.peers[entry.client_id] = entry
        await self.send(bytes_data=frame)

    async def live_hello(self, event):
        """A newcomer: tell it who is here (each consumer for its own client)."""
        if event["sender"] != self.channel_name and self.presence:
            frame = awareness_message(list(self.presence.values()))
            await self.channel_layer.send(
                event["sender"],
                {"type": "live.frame", "frame": frame, "sender": self.channel_name},
            )

    async def live_server(self, event):
        if not self.ended:
            await self.send(bytes_data=server_message(**event["message"]))

    def _session_group(self) -> str:
        return groups.session_group(self.session_key)

    async def live_session_ended(self, event):
        await self.refuse(
            SIGNED_OUT,
            "signed-out",
            "Your session has ended (signed out, expired, or the password changed): "
            "reload the page to write together again.",
        )

    async def live_reset(self, event):
        """An Editor reset the document (collaboration.recovery): this editor's copy belongs to
        the old one, so writing together stops here (its browser forgets that copy)."""
        documents.drop(self.note_id)
        await self.refuse(TOO_LARGE, "reset", event["message"])

    async def live_recheck(self, event):
        if self.ended:
            return
        if not await database_sync_to_async(sessions.session_holds)(self.session_key, self.user_id):
            return await self.live_session_ended(event)
        if not await database_sync_to_async(access.may_edit)(self.user_id, self.note_id):
            await self.refuse(FORBIDDEN, "forbidden", "You may no longer edit this note.")
