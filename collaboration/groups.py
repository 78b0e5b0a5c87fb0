"""The channel-layer groups of writing together: one per note (`note-live-<id>`, every
consumer editing it, on any app server), one per user (their consumers, told to check
their access again) and one per session (its consumers, told when it ends). Messages carry
the sending consumer's channel, so it can skip its own."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading

from asgiref.sync import async_to_sync
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
        asyncio.get_running_loop()
    except RuntimeError:
        _send_logged(group, message)
        return
    # Sync code on a thread whose loop is running (a test driving Playwright's sync API):
    # that loop must not be blocked, nor would it run a task now.
    thread = threading.Thread(target=_send_logged, args=(group, message))
    thread.start()
    thread.join()


def _send_logged(group: str, message: dict) -> None:
    try:
        async_to_sync(send)(group, message)
    except Exception as error:  # noqa: BLE001 - any layer failure: see send_from_sync
        logger.warning("Writing together: %s not told (%s: %s)", group, type(error).__name__, error)
