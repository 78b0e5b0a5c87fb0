"""A page that misses the cache is rendered once, however many readers ask for it at the same
moment: once per process (scidraft.site.render_claims, `renders`), and once across
processes (`shared_renders`, a claim in the shared cache)."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest
from django.core.cache import cache
from django.http import HttpResponse
from django.test import RequestFactory

from scidraft.site import caching, generation, page_entries

WAIT = 5.0


@pytest.fixture(autouse=True)
def _generation_without_database(monkeypatch):
    # Readers run in threads, which would each open a database of their own: the generation is
    # fixed here instead, as the lease would give it.
    monkeypatch.setattr(generation, "current_generation", lambda: 7)


class SlowView:
    """A view that holds its first render until `go` is set, and counts its renders."""

    def __init__(self, cacheable: bool = True, fail_first: bool = False):
        self.renders = 0
        self.started, self.go = threading.Event(), threading.Event()
        self.fail_first = fail_first
        self.view = caching.cached_page(self._render) if cacheable else self._render

    def _render(self, request):
        self.renders += 1
        if self.renders == 1:
            self.started.set()
            assert self.go.wait(WAIT)
            if self.fail_first:
                raise RuntimeError("the first render failed")
        return HttpResponse(b"<p>page</p>")


def _readers(view: SlowView, count: int, path: str = "/notes/x/") -> list:
    """The first reader starts rendering; `count` more ask for the same page meanwhile."""
    middleware = caching.PageCacheMiddleware(view.view)
    answers: list = []

    def read():
        try:
            answers.append(middleware(RequestFactory().get(path)))
        except RuntimeError as error:
            answers.append(error)

    first = threading.Thread(target=read)
    first.start()
    assert view.started.wait(WAIT)
    others = [threading.Thread(target=read) for _ in range(count)]
    for thread in others:
        thread.start()
    time.sleep(0.2)  # let them reach the wait: were they late, they would hit the cache anyway
    view.go.set()
    for thread in [first, *others]:
        thread.join(WAIT)
    return answers


def test_readers_missing_the_same_page_wait_for_one_render():
    """Four readers miss the same page at once: the view runs once, all get the page, three
    of them from the cache."""
    view = SlowView()
    answers = _readers(view, 3)
    assert view.renders == 1
    assert [answer.content for answer in answers] == [b"<p>page</p>"] * 4
    assert sorted(answer["X-Cache"] for answer in answers) == ["hit", "hit", "hit", "miss"]
    assert caching.renders.pending == {}


def test_a_page_that_is_not_stored_is_rendered_by_each_waiting_reader():
    """When the first render is not cacheable, the waiting readers render it themselves."""
    view = SlowView(cacheable=False)
    answers = _readers(view, 2)
    assert view.renders == 3
    assert all(answer.status_code == 200 for answer in answers)


def test_a_failed_render_releases_the_waiting_readers():
    """The first render raising does not leave the others waiting: they render the page."""
    view = SlowView(fail_first=True)
    answers = _readers(view, 2)
    assert sum(isinstance(answer, RuntimeError) for answer in answers) == 1
    assert [a.status_code for a in answers if not isinstance(a, RuntimeError)] == [200, 200]
    assert caching.renders.pending == {}


def test_a_reader_waits_no_longer_than_the_setting(settings):
    """A render that takes too long: the waiting reader renders the page itself, in time."""
    settings.SCIDRAFT_PAGE_RENDER_WAIT_MS = 50
    view = SlowView()
    middleware = caching.PageCacheMiddleware(view.view)
    first = threading.Thread(target=middleware, args=(RequestFactory().get("/slow/"),))
    first.start()
    assert view.started.wait(WAIT)
    started = time.monotonic()
    answer = middleware(RequestFactory().get("/slow/"))
    assert answer.status_code == 200 and time.monotonic() - started < WAIT / 2
    assert view.renders == 2
    view.go.set()
    first.join(WAIT)


def test_different_pages_do_not_wait_for_each_other():
    """A reader of another page is not held up."""
    view = SlowView()
    middleware = caching.PageCacheMiddleware(view.view)
    first = threading.Thread(target=middleware, args=(RequestFactory().get("/notes/x/"),))
    first.start()
    assert view.started.wait(WAIT)
    other = middleware(RequestFactory().get("/notes/y/"))
    assert other.status_code == 200 and other["X-Cache"] == "miss"
    view.go.set()
    first.join(WAIT)


# --- Across processes: another worker's claim in the shared cache ---------------------------


def _claimed_elsewhere(path: str) -> str:
    """Claim the page's key as another process would; returns the key."""
    key = caching.page_key(RequestFactory().get(path))
    assert cache.add(caching.shared_renders.PREFIX + key, 1, 30)
    return key


def _entry(content: bytes) -> dict:
    response = HttpResponse(content)
    response["ETag"], response["Last-Modified"] = '"e"', "Sun, 29 Nov 2026 22:00:00 GMT"
    return page_entries.store(response, 7)


@pytest.fixture(autouse=True)
def _empty_caches():
    cache.clear()
    caching.local_pages.clear()
    yield
    cache.clear()
    caching.local_pages.clear()


def test_a_page_another_process_is_rendering_is_served_from_its_copy():
    """Another worker claimed the page: this one waits for the page it stores, renders nothing,
    and serves that copy as a hit (kept locally for the next reader too)."""
    view = SlowView()
    key = _claimed_elsewhere("/notes/shared/")
    timer = threading.Timer(0.1, lambda: cache.set(key, _entry(b"<p>theirs</p>"), 60))
    timer.start()
    answer = caching.PageCacheMiddleware(view.view)(RequestFactory().get("/notes/shared/"))
    timer.join()
    assert view.renders == 0
    assert answer.content == b"<p>theirs</p>" and answer["X-Cache"] == "hit"
    assert caching.local_pages.get(key) is not None


def test_a_claim_dropped_without_a_page_lets_the_waiting_process_render():
    """The other worker's render failed or was not cacheable (its claim is gone, no page): this
    one renders the page itself at once, without waiting out the setting."""
    view = SlowView()
    view.go.set()
    key = _claimed_elsewhere("/notes/dropped/")
    timer = threading.Timer(0.05, lambda: cache.delete(caching.shared_renders.PREFIX + key))
    timer.start()
    started = time.monotonic()
    answer = caching.PageCacheMiddleware(view.view)(RequestFactory().get("/notes/dropped/"))
    timer.join()
    assert view.renders == 1 and answer["X-Cache"] == "miss"
    assert time.monotonic() - started < 1.0


def test_a_stuck_claim_is_waited_out_no_longer_than_the_setting(settings):
    """A claim whose process never stores the page (it died): the reader renders after the
    wait, not after the claim's expiry."""
    settings.SCIDRAFT_PAGE_RENDER_WAIT_MS = 100
    view = SlowView()
    view.go.set()
    _claimed_elsewhere("/notes/stuck/")
    started = time.monotonic()
    answer = caching.PageCacheMiddleware(view.view)(RequestFactory().get("/notes/stuck/"))
    assert view.renders == 1 and answer.status_code == 200
    assert 0.1 <= time.monotonic() - started < 1.0


def test_the_rendering_process_claims_the_page_and_releases_it_after_storing():
    """While a page renders its claim is in the shared cache; afterwards the page is stored and
    the claim is gone, also when the render fails."""
    seen = {}

    def view(request):
        seen["claimed"] = cache.get(caching.shared_renders.PREFIX + key) is not None
        if request.path.endswith("-fails/"):
            raise RuntimeError("render failed")
        return HttpResponse(b"<p>mine</p>")

    middleware = caching.PageCacheMiddleware(caching.cached_page(view))
    key = caching.page_key(RequestFactory().get("/notes/own/"))
    assert middleware(RequestFactory().get("/notes/own/")).content == b"<p>mine</p>"
    assert seen["claimed"] is True
    assert cache.get(key) is not None
    assert cache.get(caching.shared_renders.PREFIX + key) is None
    key = caching.page_key(RequestFactory().get("/notes/own-fails/"))
    with pytest.raises(RuntimeError):
        middleware(RequestFactory().get("/notes/own-fails/"))
    assert cache.get(caching.shared_renders.PREFIX + key) is None


def test_with_the_shared_cache_down_every_process_renders_without_waiting(monkeypatch):
    """A cache that refuses the claim and reads nothing (Redis down, as the resilient backend
    answers then) costs no wait: the page is rendered at once."""
    monkeypatch.setattr(cache, "add", lambda *args, **kwargs: False)
    monkeypatch.setattr(cache, "get_many", lambda *args, **kwargs: {})
    view = SlowView()
    view.go.set()
    started = time.monotonic()
    answer = caching.PageCacheMiddleware(view.view)(RequestFactory().get("/notes/down/"))
    assert view.renders == 1 and answer.status_code == 200
    assert time.monotonic() - started < 1.0


def test_a_claim_outlives_a_render_longer_than_its_own_life_and_ends_with_it(monkeypatch):
    """A claim is renewed while its render runs, however long (one that expired mid-render let
    every waiting process render the same page), and deleted as soon as the render ends."""
    from scidraft.site import render_claims

    monkeypatch.setattr(render_claims, "CLAIM_SECONDS", 1)
    monkeypatch.setattr(render_claims, "kept_claims", render_claims._KeptClaims())
    key = caching.page_key(RequestFactory().get("/notes/long/"))
    assert caching.shared_renders.claim(key)
    with render_claims.kept_claims.kept(caching.shared_renders.PREFIX + key):
        time.sleep(1.6)  # past the claim's own second: renewed every third of it
        assert cache.get(caching.shared_renders.PREFIX + key) is not None
    assert cache.get(caching.shared_renders.PREFIX + key) is None


@pytest.mark.skipif(sys.platform != "linux", reason="a nice value per thread is Linux's")
def test_a_background_render_runs_below_the_readers_priority(settings):
    """SCIDRAFT_PAGE_REFRESH_NICE lowers the background render's thread alone: the reader's
    thread, which started it, keeps its own priority."""
    from scidraft.site import render_claims

    settings.SCIDRAFT_PAGE_REFRESH_NICE = 7
    seen = {}

    def render(request):
        seen["render"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    request = RequestFactory().get("/notes/nice/")
    render_claims.refreshes.start(caching.page_key(request), request, render)
    render_claims.refreshes.join()
    assert seen["render"] == min(19, before + 7)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before


@pytest.mark.django_db(transaction=True)
def test_background_renders_keep_their_thread_and_database_connection(settings):
    """Renders one after another run in the same refresh thread, on the same database
    connection (a new one costs PostgreSQL a process); stop() ends the thread, which closes
    it."""
    from django.db import connection

    from scidraft.site import render_claims

    if connection.vendor != "postgresql" or not settings.DATABASES["default"]["CONN_MAX_AGE"]:
        pytest.skip("PostgreSQL with persistent connections, as deployed")
    seen = []

    def render(request):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            seen.append((threading.current_thread(), cursor.fetchone()[0]))

    refreshes = render_claims.refreshes
    for path in ("/notes/one/", "/notes/two/", "/notes/three/"):
        request = RequestFactory().get(path)
        refreshes.start(caching.page_key(request), request, render)
        refreshes.join()
    assert len(seen) == 3 and len(set(seen)) == 1
    threads = list(refreshes.threads)
    refreshes.stop()
    assert threads and not any(thread.is_alive() for thread in threads)


def test_a_failed_background_render_frees_its_slot_for_the_next(settings):
    """A render that raises leaves the stale page as it was and its slot free: the next stale
    page is rendered by the same thread."""
    from scidraft.site import render_claims

    settings.SCIDRAFT_PAGE_REFRESH_THREADS = 1
    done = []

    def failing(request):
        raise RuntimeError("the render broke")

    def render(request):
        done.append(request.path)

    refreshes = render_claims.refreshes
    for path, view in (("/notes/broken/", failing), ("/notes/fine/", render)):
        request = RequestFactory().get(path)
        refreshes.start(caching.page_key(request), request, view)
        refreshes.join()
    assert done == ["/notes/fine/"] and refreshes.busy == 0
