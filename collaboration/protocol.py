"""The wire: the y-websocket protocol as y-websocket's WebsocketProvider speaks it (lib0
encoding: a varint message type, then the message), plus SciDraft's own type 100, a JSON
object the server sends (docs/architecture.md#writing-together, "The wire").

pycrdt builds the sync messages; reading is ours, because a frame comes from a browser and
must be refused cleanly when it is cut short or lies about its lengths.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pycrdt import YSyncMessageType, create_sync_message, write_message, write_var_uint
from pycrdt import create_update_message as sync_update

from scidraft.bounds import input_path

SYNC = 0
AWARENESS = 1
QUERY_AWARENESS = 3
SERVER = 100

SYNC_STEP1 = YSyncMessageType.SYNC_STEP1
SYNC_STEP2 = YSyncMessageType.SYNC_STEP2
SYNC_UPDATE = YSyncMessageType.SYNC_UPDATE

__all__ = ["create_sync_message", "sync_update"]


class Malformed(ValueError):
    """A frame that is not the protocol: the connection closes with 4400."""


@dataclass(frozen=True)
class Frame:
    kind: int
    sync_kind: int | None = None
    payload: bytes = b""


class Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def uint(self) -> int:
        value, shift = 0, 0
        while True:
            if self.at >= len(self.data) or shift > 63:
                raise Malformed("The message ends inside a number.")
            byte = self.data[self.at]
            self.at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    def byte(self) -> int:
        if self.at >= len(self.data):
            raise Malformed("The message ends early.")
        self.at += 1
        return self.data[self.at - 1]

    def bytes(self) -> bytes:
        length = self.uint()
        end = self.at + length
        if end > len(self.data):
            raise Malformed("The message is shorter than it says.")
        chunk, self.at = self.data[self.at : end], end
        return chunk

    def string(self) -> str:
        try:
            return self.bytes().decode("utf-8")
        except UnicodeDecodeError as error:
            raise Malformed("A string is not UTF-8.") from error


@input_path("live-frame")
def frame_read(data: bytes) -> Frame:
    """The frame's type, sync sub-type and payload (the update, state vector or awareness
    update, without its length)."""
    reader = Reader(data)
    kind = reader.uint()
    if kind == SYNC:
        sync_kind = reader.uint()
        if sync_kind not in (SYNC_STEP1, SYNC_STEP2, SYNC_UPDATE):
            raise Malformed(f"Unknown sync message {sync_kind}.")
        return Frame(kind, sync_kind, reader.bytes())
    if kind == AWARENESS:
        return Frame(kind, None, reader.bytes())
    if kind == QUERY_AWARENESS:
        return Frame(kind)
    raise Malformed(f"Unknown message type {kind}.")


def sync_step2(update: bytes) -> bytes:
    return bytes([SYNC, SYNC_STEP2]) + write_message(update)


def server_message(**fields) -> bytes:
    """Type 100: varint(100) + varstring(JSON), read by the client with readVarString."""
    text = json.dumps(fields, separators=(",", ":")).encode("utf-8")
    return write_var_uint(SERVER) + write_var_uint(len(text)) + text


@dataclass(frozen=True)
class Presence:
    """One entry of an awareness update: a client's state (JSON text, "null" when it left)
    and the clock that orders its changes."""

    client_id: int
    clock: int
    state: str


@input_path("live-awareness")
def awareness_read(payload: bytes) -> list[Presence]:
    reader = Reader(payload)
    count = reader.uint()
    entries = [Presence(reader.uint(), reader.uint(), reader.string()) for _ in range(count)]
    if reader.at != len(payload):
        raise Malformed("The awareness update has bytes after its entries.")
    return entries


def awareness_message(entries: list[Presence]) -> bytes:
    payload = write_var_uint(len(entries))
    for entry in entries:
        state = entry.state.encode("utf-8")
        payload += (
            write_var_uint(entry.client_id)
            + write_var_uint(entry.clock)
            + write_var_uint(len(state))
            + state
        )
    return write_var_uint(AWARENESS) + write_message(payload)
