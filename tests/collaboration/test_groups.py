"""Messages to the writing-together groups sent from sync code (collaboration.groups): a
request's or a signal's, after its write committed."""

from __future__ import annotations

import asyncio
import logging
import threading

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from collaboration import groups


def test_sync_code_sends_through_one_kept_event_loop(monkeypatch):
    """Every message goes through the same event loop, in the sender's own thread: the channel
    layer keeps its connections per loop, so they are kept too."""
    seen = []

    async def recording(group, message):
        seen.append((asyncio.get_running_loop(), threading.current_thread().name, group))

    monkeypatch.setattr(groups, "send", recording)
    groups.send_from_sync("note-live-1", {})
    other = threading.Thread(target=groups.send_from_sync, args=("note-live-2", {}))
    other.start()
    other.join()
    assert [group for *_, group in seen] == ["note-live-1", "note-live-2"]
    assert seen[0][0] is seen[1][0] and seen[0][1] == seen[1][1] == "live-group-sender"


def test_a_message_reaches_the_groups_consumers():
    """Through the configured channel layer, to a channel in the group."""
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)("note-live-77", channel)
    try:
        groups.send_from_sync("note-live-77", {"type": "live.recheck"})
        assert async_to_sync(layer.receive)(channel) == {"type": "live.recheck"}
    finally:
        async_to_sync(layer.group_discard)("note-live-77", channel)


def test_a_layer_that_fails_loses_the_message_and_says_so(monkeypatch, caplog):
    """The write has committed: a channel layer that cannot be reached is logged, not raised."""

    async def unreachable(group, message):
        raise ConnectionError("Redis is down")

    monkeypatch.setattr(groups, "send", unreachable)
    with caplog.at_level(logging.WARNING, logger="collaboration.groups"):
        groups.send_from_sync("note-live-3", {"type": "live.recheck"})
    assert "note-live-3 not told (ConnectionError: Redis is down)" in caplog.text
