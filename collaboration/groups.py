"""The channel-layer groups of writing together: one per note (`note-live-<id>`, every
consumer editing it, on any app server), one per user (their consumers, told to check
their access again) and one per session (its consumers, told when it ends). Messages carry
the sending consumer's channel, so it can skip its own."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading

from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)


def note_group(note_id: int) -> str:
    return f"note-live-{note_id}"


def user_group(user_id: int) -> str:
    return f"live-user-{user_id}"


def session_group(session_key: str) -> str:
    """Named by a digest of the key: a group name is visible to whoever reads the channel
    layer's Redis, and a session key would sign its holder in."""
    digest = hashlib.sha256(session_key.encode("utf-8")).hexdigest()[:40]
    return f"live-session-{digest}"


async def send(group: str, message: dict) -> None:
    layer = get_channel_layer()
    if layer is not None:
        await layer.group_send(group, message)


async def send_update(note_id: int, update_id: int, frame: bytes, data: bytes, sender="") -> None:
    """A stored update: consumers apply `data` to their process's document and send `frame`."""
    await send(
        note_group(note_id),
        {"type": "live.update", "id": update_id, "data": data, "frame": frame, "sender": sender},
    )


async def send_saved(note_id: int, saved: dict) -> None:
    await send(note_group(note_id), {"type": "live.server", "message": saved})


def send_from_sync(group: str, message: dict) -> None:
    """From a request or a signal: sync code, in a thread without an event loop of its own
    (a gunicorn thread, or an ASGI server's executor). It runs after the write committed, so
    a channel layer that cannot be reached (Redis down) must not turn the saved write into an
    error page: the message is lost and logged; editors meet the stored update when they next
    load the document, and access is checked again every LIVE_RECHECK_SECONDS anyway."""
    try:
        sender.send(group, message)
    except Exception as error:  # noqa: BLE001 - any layer failure, or no answer in time
        logger.warning("Writing together: %s not told (%s: %s)", group, type(error).__name__, error)


class _Sender:
    """One event loop in a thread of its own, kept for the process's life, that sends what
    sync code gives it. The channel layer keeps its Redis connections per event loop: an
    event loop made for each message (async_to_sync's, in a thread without one) connected
    anew every time, a few milliseconds of each publish's CPU."""

    TIMEOUT_S = 10.0  # the most a request waits for a message to be sent

    def __init__(self):
        self.lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.pid = 0

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self.lock:
            if self.loop is None or self.pid != os.getpid():  # a forked child has no thread
                self.loop, self.pid = asyncio.new_event_loop(), os.getpid()
                threading.Thread(
                    target=self.loop.run_forever, name="live-group-sender", daemon=True
                ).start()
            return self.loop

    def send(self, group: str, message: dict) -> None:
        future = asyncio.run_coroutine_threadsafe(send(group, message), self._running_loop())
        try:
            future.result(self.TIMEOUT_S)
        except TimeoutError:
            future.cancel()
            raise


sender = _Sender()
