"""The wire: frames read as the y-websocket client writes them, type 100 as it reads them."""

from __future__ import annotations

import json

import pytest
from pycrdt import Decoder, Doc, create_sync_message, create_update_message

from collaboration import protocol


def test_sync_frames_are_read_with_their_payload():
    """Sync step 1 carries the state vector; an update message its update."""
    doc = Doc()
    step1 = protocol.frame_read(create_sync_message(doc))
    assert (step1.kind, step1.sync_kind, step1.payload) == (0, 0, doc.get_state())
    update = protocol.frame_read(create_update_message(b"\x01\x02"))
    assert (update.kind, update.sync_kind, update.payload) == (0, 2, b"\x01\x02")


def test_type_100_is_a_varint_and_a_utf8_varstring():
    """Read as lib0's readVarUint then readVarString: non-ASCII names keep their bytes."""
    frame = protocol.server_message(type="saved", version=3, revision=2, by=["Zoë 😀"])
    decoder = Decoder(frame)
    assert decoder.read_var_uint() == 100
    assert json.loads(decoder.read_message().decode("utf-8"))["by"] == ["Zoë 😀"]


def test_awareness_updates_round_trip():
    """Entries (client id, clock, state JSON) are read back as written."""
    entries = [protocol.Presence(123456789, 4, '{"user":{"name":"Ada"}}')]
    frame = protocol.awareness_message(entries)
    assert protocol.awareness_read(protocol.frame_read(frame).payload) == entries


@pytest.mark.parametrize("frame", [b"", b"\x80", bytes([0, 2, 9, 1]), bytes([5])])
def test_malformed_frames_are_refused(frame):
    with pytest.raises(protocol.Malformed):
        protocol.frame_read(frame)
