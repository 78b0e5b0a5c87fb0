"""Who renders a page: one thread per process and one process in all, however many readers
miss it at once, and one background render of a stale page (scidraft.site.caching).

Claims live in the shared cache for CLAIM_SECONDS, well above any render, and are kept alive
while their render runs (one thread renews every claim this process holds): a claim that
expired mid-render would let every waiting process render the same page at once. A claim is
released as soon as its render ends, stored or not.
"""

from __future__ import annotations

import io
import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager

from django.conf import settings
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIRequest
from django.db import close_old_connections, connections
from django.http import HttpRequest

from .sharedcache import safe

logger = logging.getLogger("scidraft.site.caching")

CLAIM_SECONDS = 60


class _KeptClaims:
    """The claims this process holds, renewed every third of their life until released."""

    def __init__(self):
        self.lock = threading.Lock()
        self.keys: dict[str, int] = {}
        self.thread: threading.Thread | None = None

    @contextmanager
    def kept(self, key: str):
        with self.lock:
            self.keys[key] = self.keys.get(key, 0) + 1
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(
                    target=self._renew, name="scidraft-page-claims", daemon=True
                )
                self.thread.start()
        try:
            yield
        finally:
            with self.lock:
                self.keys[key] -= 1
                if not self.keys[key]:
                    del self.keys[key]
            safe(cache.delete, key)

    def _renew(self) -> None:
        while True:
            time.sleep(CLAIM_SECONDS / 3)
            with self.lock:
                held = list(self.keys)
            for key in held:
                safe(cache.touch, key, CLAIM_SECONDS)


kept_claims = _KeptClaims()


class _Renders:
    """Pages some thread of this process is rendering now, by key. When a page misses, each of a
    worker's threads would render the same page; instead the first renders and the others wait
    for it, then are served what it stored."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pending: dict[str, threading.Event] = {}

    def claim(self, key: str) -> tuple[threading.Event, bool]:
        """The key's event, and whether this caller renders (else it waits on the event)."""
        with self.lock:
            event = self.pending.get(key)
            if event is not None:
                return event, False
            event = self.pending[key] = threading.Event()
            return event, True

    def release(self, key: str, event: threading.Event) -> None:
        with self.lock:
            if self.pending.get(key) is event:
                del self.pending[key]
        event.set()


renders = _Renders()


class _SharedRenders:
    """Pages some process is rendering now, as claims in the shared cache. When a page misses
    in every worker at the same moment, each would render it; the first process to claim the
    key renders it, the others poll the cache for what it stores (a Redis round trip every few
    milliseconds, cheaper than a render) and render it themselves once the claim is gone
    without a page (the render failed or was not cacheable) or SCIDRAFT_PAGE_RENDER_WAIT_MS has
    passed. With the cache down, no claim is seen and every process renders."""

    PREFIX = "render:"
    FIRST_POLL, LAST_POLL = 0.005, 0.05  # seconds between polls, doubling

    def claim(self, key: str) -> bool:
        """Whether this process renders the page (else another one is rendering it)."""
        return bool(safe(cache.add, self.PREFIX + key, 1, CLAIM_SECONDS, default=True))

    def kept(self, key: str):
        return kept_claims.kept(self.PREFIX + key)

    def wait(self, key: str, deadline: float, old: str | None = None) -> dict | None:
        """The page the claiming process stored (a render other than the entry `old`), or None
        once it is clear none is coming."""
        claim, delay = self.PREFIX + key, self.FIRST_POLL
        while True:
            found = safe(cache.get_many, [key, claim], default={})
            entry = found.get(key)
            if entry is not None and (old is None or entry.get("id") != old):
                return entry
            remaining = deadline - time.monotonic()
            if claim not in found or remaining <= 0:
                return None
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, self.LAST_POLL)


shared_renders = _SharedRenders()

# What a background render keeps of the reader's request: where it was sent, never who sent it.
_KEPT_META = (
    "SERVER_NAME", "SERVER_PORT", "SERVER_PROTOCOL", "HTTP_HOST", "SCRIPT_NAME", "REMOTE_ADDR",
)  # fmt: skip


def synthetic_request(request: HttpRequest) -> WSGIRequest:
    """A cookie-less GET of the same host, path and (canonical) query as `request`."""
    meta = request.META
    environ = {name: meta[name] for name in _KEPT_META if name in meta}
    environ.update(
        {name: value for name, value in meta.items() if name.startswith("HTTP_X_FORWARDED_")}
    )
    environ.update(
        {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": request.path_info,
            "QUERY_STRING": meta.get("QUERY_STRING", ""),
            "wsgi.url_scheme": request.scheme,
            "wsgi.input": io.BytesIO(b""),
        }
    )
    fresh = WSGIRequest(environ)
    if hasattr(request, "urlconf"):
        fresh.urlconf = request.urlconf
    return fresh


class _Refreshes:
    """Stale pages being rendered again in the background: at most one render per page across
    processes (a claim in the shared cache), by one of this process's refresh threads, while
    readers are served the stale page.

    The threads (SCIDRAFT_PAGE_REFRESH_THREADS at most) are started when first needed and
    kept: each keeps its database and cache connections from one render to the next, as a
    server's request threads do. A thread a render started anew would open a database
    connection for it, which costs PostgreSQL a process of its own and more CPU than many
    cached reads."""

    PREFIX = "refresh:"

    def __init__(self):
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.threads: list[threading.Thread] = []
        self.pid = os.getpid()
        self.busy = 0

    def _take_slot(self) -> bool:
        # Background renders one process runs at once (SCIDRAFT_PAGE_REFRESH_THREADS): a
        # site-wide change makes every page stale, and a thread per page read would take the
        # process's CPU from its readers. A page read while all are busy is served stale and
        # claimed by a later reader (past the bound, its reader renders it).
        with self.lock:
            if self.pid != os.getpid():  # a forked child has none of its parent's threads
                self.pid, self.threads, self.busy = os.getpid(), [], 0
                self.jobs = queue.SimpleQueue()
            if self.busy >= settings.SCIDRAFT_PAGE_REFRESH_THREADS:
                return False
            self.busy += 1
            return True

    def _free_slot(self) -> None:
        with self.lock:
            self.busy -= 1
            self.idle.notify_all()

    def start(self, key: str, request: HttpRequest, render: Callable[[HttpRequest], object]):
        """Render the page of `request` again in the background unless some process already
        is; `render` renders and stores it (the middleware's chain)."""
        claim = self.PREFIX + key
        if not self._take_slot():
            return
        if not safe(cache.add, claim, 1, CLAIM_SECONDS, default=False):
            self._free_slot()
            return
        self.jobs.put((claim, synthetic_request(request), render))
        self._ensure_thread()

    def _ensure_thread(self) -> None:
        """A thread for each render running at once, up to the slots: started on demand."""
        with self.lock:
            self.threads = [thread for thread in self.threads if thread.is_alive()]
            if len(self.threads) >= min(self.busy, settings.SCIDRAFT_PAGE_REFRESH_THREADS):
                return
            thread = threading.Thread(
                target=self._serve, args=(self.jobs,), name="scidraft-page-refresh", daemon=True
            )
            self.threads.append(thread)
        thread.start()

    def _serve(self, jobs: queue.SimpleQueue) -> None:
        _yield_to_readers()
        try:
            while (job := jobs.get()) is not None:
                self._run(*job)
        finally:
            connections.close_all()  # this thread's own

    def _run(self, claim: str, request: HttpRequest, render) -> None:
        close_old_connections()  # as a request starts: one past its age or broken is replaced
        try:
            with kept_claims.kept(claim):
                render(request)
        except Exception:  # the stale page stays; past the bound readers render it themselves
            logger.exception("background render of %s failed", request.path)
        finally:
            close_old_connections()  # and as it ends
            self._free_slot()

    def join(self, timeout: float = 10.0) -> None:
        """Wait for the background renders asked for until now (tests; a worker shutting
        down)."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while self.busy and time.monotonic() < deadline:
                self.idle.wait(max(0.0, deadline - time.monotonic()))

    def stop(self, timeout: float = 10.0) -> None:
        """Wait for them, then end the threads, which close their connections (tests: none may
        stay connected to a test database that is about to be dropped)."""
        self.join(timeout)
        with self.lock:
            threads, self.threads = self.threads, []
            for _ in threads:
                self.jobs.put(None)
        for thread in threads:
            thread.join(timeout)


refreshes = _Refreshes()


def _yield_to_readers() -> None:
    """Lower this thread's scheduling priority by SCIDRAFT_PAGE_REFRESH_NICE: a background
    render then takes the cores only when readers leave them. Linux keeps a nice value per
    thread (setpriority on the thread's id); elsewhere the render runs at the worker's own."""
    nice = settings.SCIDRAFT_PAGE_REFRESH_NICE
    if nice <= 0 or sys.platform != "linux":
        return
    thread = threading.get_native_id()
    try:
        os.setpriority(
            os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + nice)
        )
    except OSError:  # a container may forbid it: the render still runs
        logger.debug("could not lower the background render's priority", exc_info=True)
