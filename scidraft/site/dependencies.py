"""What a cached page shows, as dependency tags, and the current version of each tag.

A page rendered through the page cache (scidraft.site.caching) records the tags its view
named (`depends_on`) with the version of each when it was rendered; it is fresh while every
one of them still has that version. A write names the tags of what it changed
(scidraft.site.receivers, scidraft.site.generation.bump_generation); once it commits each of
them gets a new version, so exactly the pages that show what it changed go stale.

Versions are tokens in the shared cache: (the content generation when it was set, the time of
the change, a random part). Random, so a version never comes back (no ABA after an eviction or
a restored backup); missing means unknown, and an unknown version is never the one a page
recorded, so an eviction or an outage costs renders, never a stale page served as fresh. The
generation in a token guards the render against a write that commits while it runs: a page
records a version only if that version's generation is not newer than the generation the
render started from (read before the view read anything); otherwise the render may predate
the write, and the page is kept as of unknown dependencies (below).

Every tagged page also depends on SITE, which every write that names no tags (settings,
menus, standalone pages, authors, tags, environments, bibliography files...) changes. A page
whose view named no tags falls back to the content generation: any write makes it stale.
Without a shared cache (no REDIS_URL) there is nowhere to keep versions every process sees:
every page falls back to the generation, and readers wait for renders as they always did.

A process reuses the versions it read until a write gives any tag a new version: every
renewal then moves a counter in the shared cache (WRITES, after the new versions are set), and
the process reads that one counter at most once per SCIDRAFT_GENERATION_LEASE_MS, as it does the
generation; the writer waits one lease after renewing (publish_generation). A page hit thus
costs one small read per lease, not one read of its tags: versions read while the counter had
the value the process now holds are current. The counter starts from a random number, so an
evicted counter never comes back to a value a process holds.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterable

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from .sharedcache import logger, safe, shared

PREFIX = "pagetag:"
SITE = "site"
LISTING = "listing:all"

Token = tuple[int, float, str]
# Tags one page may record: a page showing more (a note citing hundreds of others) falls back
# to the generation rather than check hundreds of versions on every hit.
MAX_TAGS = 200


def note(slug: str) -> str:
    """A note's own page and exports, and every page that shows its title or card."""
    return f"note:{slug}"


def listing_tag(slug: str) -> str:
    """Which notes a tag's pages list, and in which order."""
    return f"listing:tag:{slug}"


def listing_author(handle: str) -> str:
    """Which notes an author's pages list, and in which order."""
    return f"listing:author:{handle}"


def nav(date) -> str:
    """The « Prev / Next » neighbours of the notes dated `date` (a datetime)."""
    return f"nav:{date.isoformat()}"


def near(date) -> str:
    """Named by a write: the notes next to `date` in date order have new neighbours. Expanded
    into `nav` tags once the write has committed (expanders), from the list as it is then."""
    return f"near:{date.isoformat()}"


# Prefix → callable giving the tags a deferred name stands for, run after the write commits
# (registered by the apps that name such tags: notes registers `near:`).
expanders: dict[str, Callable[[str], Iterable[str]]] = {}


def expand(tags: Iterable[str]) -> set[str]:
    """`tags` with the deferred names replaced by the tags they stand for now; SITE when one
    cannot be expanded (the database is unreachable): every page, rather than a stale one."""
    out = set()
    for tag in tags:
        prefix = tag.split(":", 1)[0] + ":"
        expander = expanders.get(prefix)
        if expander is None:
            out.add(tag)
            continue
        try:
            out.update(expander(tag[len(prefix) :]))
        except Exception:
            logger.warning("could not tell which pages %s changes", tag, exc_info=True)
            out.add(SITE)
    return out


def by_dependencies() -> bool:
    """Whether pages are made stale by their dependencies (and served stale while they are
    rendered again), or by every write, readers waiting for the render (the generation)."""
    return settings.SCIDRAFT_PAGE_INVALIDATION == "dependencies" and shared()


def depends_on(request: HttpRequest, *tags: str) -> None:
    """The page being rendered for `request` shows what `tags` name (called by views)."""
    held = getattr(request, "_page_tags", None)
    if held is None:
        held = request._page_tags = set()
    held.update(tags)


def page_tags(request: HttpRequest) -> set[str] | None:
    """The tags the view named, with SITE; None if it named none."""
    held = getattr(request, "_page_tags", None)
    return None if held is None else held | {SITE}


WRITES = "pagetag-writes"


class _Lease:
    """The versions this process read, each with the value of WRITES read before it was; and
    that counter, reusable until its lease ends (timed from before the read was sent)."""

    def __init__(self):
        self.held: dict[str, tuple[Token | None, int]] = {}
        self.lock = threading.Lock()
        # (the counter, when its lease ends); one tuple, replaced whole.
        self.writes: tuple[int, float] | None = None

    def counter(self) -> int | None:
        """WRITES as this process may use it now: leased, or read again (None: unreadable)."""
        held = self.writes
        if held is not None and time.monotonic() < held[1]:
            return held[0]
        since = time.monotonic()
        value = safe(cache.get, WRITES, default=None)
        if value is None:
            safe(cache.add, WRITES, _fresh_counter(), None)
            value = safe(cache.get, WRITES, default=None)
            if value is None:
                return None
        seconds = settings.SCIDRAFT_GENERATION_LEASE_MS / 1000
        self.writes = (value, since + seconds) if seconds > 0 else None
        return value

    def split(self, tags: Iterable[str], writes: int | None):
        found, wanted = {}, []
        with self.lock:
            for tag in tags:
                held = self.held.get(tag)
                if writes is not None and held is not None and held[1] == writes:
                    found[tag] = held[0]
                else:
                    wanted.append(tag)
        return found, wanted

    def hold(self, values: dict[str, Token | None], writes: int | None) -> None:
        if writes is None or settings.SCIDRAFT_GENERATION_LEASE_MS <= 0:
            return
        with self.lock:
            if len(self.held) > 100_000:  # bounded: pages' tags, refetched after any write
                self.held.clear()
            for tag, token in values.items():
                self.held[tag] = (token, writes)

    def drop(self, tags: Iterable[str] | None = None) -> None:
        with self.lock:
            if tags is None:
                self.held.clear()
                self.writes = None
            for tag in tags or ():
                self.held.pop(tag, None)


lease = _Lease()


def _fresh_counter() -> int:
    return secrets.randbits(62)


def versions(tags: Iterable[str]) -> dict[str, Token | None] | None:
    """The current version of each tag (None: unknown), in one round trip for those not
    held since the last write; None altogether when the shared cache cannot be read."""
    writes = lease.counter()  # before the versions: a renewal after it moves the counter
    found, wanted = lease.split(tags, writes)
    if wanted:
        read = safe(cache.get_many, [PREFIX + tag for tag in wanted], default=None)
        if read is None:
            return None
        fresh = {tag: read.get(PREFIX + tag) for tag in wanted}
        lease.hold(fresh, writes)
        found.update(fresh)
    return found


def recorded(tags: set[str], generation: int) -> dict[str, Token] | None:
    """The versions a page rendered from `generation` records, or None when one of them
    cannot be vouched for (see the module's docstring): the page then falls back to the
    generation. A tag no write has named yet is given a version first (add: a writer's
    version set meanwhile stays)."""
    if len(tags) > MAX_TAGS:
        return None
    current = versions(tags)
    if current is None:
        return None
    missing = [tag for tag, token in current.items() if token is None]
    if missing:
        for tag in missing:
            safe(cache.add, PREFIX + tag, (0, time.time(), secrets.token_hex(8)), _ttl())
        again = safe(cache.get_many, [PREFIX + tag for tag in missing], default={})
        current.update({tag: again.get(PREFIX + tag) for tag in missing})
        lease.drop(missing)  # leased as unknown a moment ago
    if any(token is None or token[0] > generation for token in current.values()):
        return None
    return current


def changed_since(tokens: dict[str, Token]) -> float | None | bool:
    """False if every tag still has the version in `tokens`; else the time of the latest
    change the page misses (now, when a version is unknown: evicted); None when the shared
    cache cannot be read."""
    current = versions(tokens)
    if current is None:
        return None
    changes = [
        (now[1] if now is not None else time.time())
        for tag, token in tokens.items()
        if (now := current.get(tag)) != token
    ]
    return max(changes) if changes else False


def renew(tags: Iterable[str], generation: int) -> None:
    """New versions for `tags` (after the write that changed them has committed)."""
    tags = set(tags)
    if not tags or not shared():
        return
    moment = time.time()
    safe(
        cache.set_many,
        {PREFIX + tag: (generation, moment, secrets.token_hex(8)) for tag in tags},
        _ttl(),
    )
    # After the versions: a process that reads the new count reads the new versions too.
    try:
        cache.incr(WRITES)
    except ValueError:  # evicted, or no page read yet: a new random start
        safe(cache.set, WRITES, _fresh_counter(), None)
    except Exception:  # an outage: nothing could be renewed either
        logger.warning("cache incr failed", exc_info=True)
    lease.drop(tags)


def _ttl() -> int:
    # A version outliving every page that recorded it is useless; one expiring first only
    # costs a render.
    return settings.SCIDRAFT_PAGE_CACHE_TTL
