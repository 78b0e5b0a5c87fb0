"""The site's content generation: a number every write a reader could see moves, in the
write's transaction (scidraft.site.receivers), and what else the write changed, by tag.

What is derived from the content and shared by a process's requests (scidraft.site.snapshot:
the settings row, the menu, the feed counts, the list of published notes) is kept per
generation, and a cached page whose dependencies are unknown is stale once the generation has
moved past the one it was rendered from (scidraft.site.caching). A write also names the
dependency tags of what it changed (scidraft.site.dependencies; none named: SITE, every
tagged page); once it commits they get new versions along with the new generation.

A scheduled note going live needs no write: the generation read here knows the next due time
and bumps once it has passed.

The generation is read from the shared cache (the database without one, or while the cache
cannot say) and leased per process for SCIDRAFT_GENERATION_LEASE_MS; every writer waits one
lease after publishing, so no process still holds an older generation, or older tag versions,
once the write has answered.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, transaction
from django.http import HttpRequest
from django.utils import timezone

from . import dependencies
from .models import ContentGeneration
from .sharedcache import safe, shared

logger = logging.getLogger("scidraft.site.caching")

GENERATION_KEY = "site:generation"
# Callables returning the first moment after `since` (when the generation last changed) at
# which content becomes visible without a write (a scheduled note's date), or None; registered
# by the apps that have such content (notes). Counted from the last change, not from now, so
# that a process reading the generation after that moment has passed still sees it is due.
due_sources: list[Callable[[dt.datetime | None], dt.datetime | None]] = []

# (number, next due time, time of the last change): timestamps, or None.
State = tuple[int, float | None, float | None]


def _next_due(since: dt.datetime | None) -> dt.datetime | None:
    moments = [moment for source in due_sources if (moment := source(since)) is not None]
    return min(moments) if moments else None


def _load_generation() -> State:
    row = ContentGeneration.objects.filter(pk=1).values_list("value", "changed_at").first()
    value, changed_at = row or (0, None)
    known = lease.due
    if known is not None and known[0] == value:
        return known
    due = _next_due(changed_at)
    state = (
        value,
        due.timestamp() if due else None,
        changed_at.timestamp() if changed_at else None,
    )
    # Not kept from inside a transaction: it may roll back and its number go to another write.
    if not transaction.get_connection().in_atomic_block:
        lease.due = state
    return state


class _Lease:
    """The generation this process read last, reusable until its lease ends.

    A page hit would otherwise cost a shared-cache round trip for one small number. The lease
    is timed from before the read was sent, and every writer waits one lease after publishing
    a new generation (publish_generation) before it answers: so any copy read before that
    publication has expired by the time anyone can know the write happened.
    """

    def __init__(self):
        # One tuple, replaced whole: threads read it without a lock.
        self.current: tuple[State, float] | None = None
        # The last generation read, lease or not: what pages are checked against while neither
        # the shared cache nor the database can say (no write commits while the database is
        # down).
        self.last: State | None = None
        # The generation last read from the database, with its next due time: that can change
        # only with a write, and every write gives a new number, so a read of the database
        # costs one query (the number), not two.
        self.due: State | None = None

    def held(self) -> State | None:
        current = self.current
        return current[0] if current is not None and time.monotonic() < current[1] else None

    def hold(self, state: State, since: float) -> None:
        self.last = state
        seconds = settings.SCIDRAFT_GENERATION_LEASE_MS / 1000
        if seconds > 0:
            self.current = (state, since + seconds)

    def drop(self) -> None:
        self.current = None
        self.due = None


lease = _Lease()


def _read_generation() -> State:
    state = lease.held()
    if state is not None:
        return state
    since = time.monotonic()
    state = safe(cache.get, GENERATION_KEY) if shared() else None
    if state is None:
        try:
            state = _load_generation()
        except DatabaseError:
            if lease.last is None:
                raise
            # A write that failed with the database left the key deleted: cached pages stay
            # servable under the last generation seen rather than all answering 503.
            logger.warning("generation unreadable (database down); using the last one seen")
            return lease.last
        # add, not set: a value read before a concurrent write committed must not replace the
        # writer's (writers set; see publish_generation).
        if shared():
            safe(cache.add, GENERATION_KEY, state, settings.SCIDRAFT_GENERATION_TTL)
    state = (*state, None)[:3]  # a value kept before the change time was
    lease.hold(state, since)
    return state


def current_generation() -> int:
    """The generation pages are checked against; bumps it once a scheduled note has come due."""
    value, due = _read_generation()[:2]
    if due is not None and timezone.now().timestamp() >= due:
        with transaction.atomic():
            bump_generation()
        state = _load_generation()
        if shared():
            safe(cache.set, GENERATION_KEY, state, settings.SCIDRAFT_GENERATION_TTL)
        lease.drop()
        value = state[0]
    return value


def changed_at() -> float | None:
    """When the generation last read by this process changed (a timestamp), if known."""
    state = lease.last
    return state[2] if state is not None else None


def request_generation(request: HttpRequest) -> int:
    """The content generation, read once per request: the page's check and everything the
    page is rendered from (scidraft.site.snapshot) agree on it."""
    generation = getattr(request, "_content_generation", None)
    if generation is None:
        generation = request._content_generation = current_generation()
    return generation


_local = threading.local()


@contextmanager
def deferred_bumps():
    """Within the block, bumps are collected and made once at its end (a bulk import saves
    thousands of rows; readers need one new generation, not thousands)."""
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + 1
    if depth == 0:
        _local.deferred = None
    try:
        yield
    finally:
        _local.depth = depth
        if depth == 0 and _local.deferred is not None:
            tags, _local.deferred = _local.deferred, None
            bump_generation(*tags)


def site_wide_pending() -> bool:
    """Within deferred_bumps, whether the bump its end makes already names SITE: the finer
    tags of the writes that follow need not be worked out (an import saves thousands)."""
    deferred = getattr(_local, "deferred", None) if getattr(_local, "depth", 0) else None
    return deferred is not None and dependencies.SITE in deferred


@contextmanager
def silent():
    """Writes within the block move neither the generation nor any tag: a render stored
    because a reader asked for the page (an older engine's, references that resolve anew) is
    what that very render shows, and must not make anyone else's pages stale."""
    before = getattr(_local, "silent", False)
    _local.silent = True
    try:
        yield
    finally:
        _local.silent = before


def bump_generation(*tags: str) -> None:
    """Call inside the write's transaction; readers see the new generation, and new versions
    of `tags` (none given: SITE, every page), once it commits."""
    from django.db.models import F

    if getattr(_local, "silent", False):
        return
    tags = tags or (dependencies.SITE,)
    if getattr(_local, "depth", 0):
        _local.deferred = (_local.deferred or set()) | set(tags)
        return

    changed = ContentGeneration.objects.filter(pk=1)
    if not changed.update(value=F("value") + 1, changed_at=timezone.now()):
        ContentGeneration.objects.get_or_create(pk=1, defaults={"value": 1})
    # Forget the cached number now (this transaction reads its own write) and publish the new
    # one once committed: that replaces any old value a concurrent reader added meanwhile.
    safe(cache.delete, GENERATION_KEY)
    lease.drop()
    tags_pending(tags)
    if not _publication_pending():
        transaction.on_commit(publish_generation)


def tags_pending(tags) -> None:
    """Tags the next publish_generation gives new versions (a write that moved the generation
    by other means: a restored backup). Kept on the connection: a transaction rolled back
    leaves them for the next publication, which then makes a few pages stale for nothing."""
    connection = transaction.get_connection()
    pending = getattr(connection, "_page_tags_pending", None)
    if pending is None:
        pending = connection._page_tags_pending = set()
    pending.update(tags)


def _publication_pending() -> bool:
    """publish_generation already waits for this transaction's commit: one publication (and
    one lease wait) per transaction, however many rows it changed."""
    connection = transaction.get_connection()
    return connection.in_atomic_block and any(
        entry[1] is publish_generation for entry in connection.run_on_commit
    )


def publish_generation() -> None:
    """After the write commits: the new generation and the new versions of the tags it
    changed go to the shared cache, then the writer waits out one lease, so that no process
    still holds an older one when it answers."""
    connection = transaction.get_connection()
    tags = getattr(connection, "_page_tags_pending", None) or set()
    connection._page_tags_pending = set()
    state = _load_generation() if shared() else None
    if state is not None:
        safe(cache.set, GENERATION_KEY, state, settings.SCIDRAFT_GENERATION_TTL)
        dependencies.renew(dependencies.expand(tags), state[0])
    lease.drop()
    seconds = settings.SCIDRAFT_GENERATION_LEASE_MS / 1000
    if seconds > 0:
        time.sleep(seconds)
