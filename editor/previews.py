"""What the editor's preview may cost: an unchanged preview is free, a changed one is counted.

A preview renders a whole note (up to a second of CPU and more of V8's work), and the editor
asks for one after every pause in typing. Each user's last preview is kept (the cache, one
entry per user): a request for the same text in the same context (the note, its working
context's source hash, the macros being typed, the site's content generation, the answer's
kind) is answered from it without rendering and without counting. Any other preview counts
against the user's limit, EDITOR_PREVIEW_LIMIT previews in any EDITOR_PREVIEW_WINDOW seconds,
counted in the database as accounts' limits are (accounts.limits: rows, not cache keys a
flood can evict), and refused when the database cannot be asked ("fails closed"). A refused
preview is answered 429 with Retry-After; the editor says the preview is paused and asks again
then. A render cut short by time is not kept: asked again, it is rendered again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError

from accounts import limits as rate_limits
from accounts.limits import UNAVAILABLE_RETRY, Counted, SlidingWindow, format_wait
from accounts.models import RateLimitEvent
from notes.rendering import source_hash
from scidraft.site.generation import current_generation

logger = logging.getLogger(__name__)

SCOPE = "editor-preview"
# A kept answer larger than this is not kept (a note near NOTE_BODY_MAX_BYTES): asking for it
# again is counted, which the limit bounds.
KEPT_MAX_BYTES = 1024 * 1024
KEPT_SECONDS = 15 * 60
SWEEP_SECONDS = 60


def _window() -> SlidingWindow:
    return SlidingWindow(SCOPE, settings.EDITOR_PREVIEW_LIMIT, settings.EDITOR_PREVIEW_WINDOW)


def preview_key(*, note_id: int, source: str, context, kind: str) -> str:
    """What makes two previews the same: the text, everything the stored render's hash covers
    (the context: kinds, style, bibliographies, macros), the content generation (any write:
    a bibliography file, another note's labels) and the kind of answer."""
    digest = hashlib.sha256()
    for part in (str(note_id), kind, str(current_generation()), source_hash(source, context)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _cache_key(user_id: int) -> str:
    return f"editor-preview-last:{user_id}"


def kept(user_id: int, key: str):
    """The user's last preview's answer, if it was for `key`; None otherwise or in an outage."""
    try:
        entry = cache.get(_cache_key(user_id))
    except Exception:  # noqa: BLE001 - an outage costs a counted preview, never an error
        logger.warning("preview cache unavailable", exc_info=True)
        return None
    if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == key:
        return entry[1]
    return None


def keep(user_id: int, key: str, answer, size: int) -> None:
    """Keep `answer` (of `size` bytes) as the user's last preview, in place of the one before."""
    if size > KEPT_MAX_BYTES:
        return
    try:
        cache.set(_cache_key(user_id), (key, answer), KEPT_SECONDS)
    except Exception:  # noqa: BLE001
        logger.warning("preview cache unavailable", exc_info=True)


@dataclass(frozen=True)
class PreviewAllowance:
    allowed: bool
    retry_after: int = 0
    unavailable: bool = False

    @property
    def status(self) -> int:
        return 503 if self.unavailable else 429

    @property
    def message(self) -> str:
        wait = format_wait(self.retry_after)
        if self.unavailable:
            return f"Preview paused for a moment: retrying in {wait}…"
        return f"Preview paused (many previews in a short time): retrying in {wait}…"


def preview_allowance(user) -> PreviewAllowance:
    """Count a changed preview by `user`, or refuse it past the limit (not counted then)."""
    now = rate_limits.clock()
    counted = Counted(_window(), f"user|{user.pk}")
    try:
        tally = rate_limits.record([counted], now)
        if tally.count(counted) > counted.window.limit:
            rate_limits.forget(tally.recorded)
            return PreviewAllowance(False, max(1, tally.retry_after(counted, now)))
        _sweep(now)
    except DatabaseError:
        logger.error("preview rate limiter: database unavailable; refusing", exc_info=True)
        return PreviewAllowance(False, UNAVAILABLE_RETRY, unavailable=True)
    return PreviewAllowance(True)


_last_sweep = -math.inf


def _sweep(now: float) -> None:
    """Delete counted previews past the window, at most once a minute per process."""
    global _last_sweep
    if time.monotonic() - _last_sweep < SWEEP_SECONDS:
        return
    _last_sweep = time.monotonic()
    window = settings.EDITOR_PREVIEW_WINDOW
    RateLimitEvent.objects.filter(scope=SCOPE, at__lte=_moment(now - window)).delete()


def _moment(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
