"""scidraft.site.warming: a new worker builds its V8 contexts, the site's CSL style included,
before its first request needs them."""

from __future__ import annotations

import runpy
import threading
from pathlib import Path

import pytest

from bibliography import csl, jsbundle, processor
from bibliography.entries import EntryData
from bibliography.formatting import format_cache_clear, format_references
from scidraft.markup import jsengine
from scidraft.site import warming
from scidraft.site.models import SiteSettings

pytestmark = pytest.mark.django_db(transaction=True)  # the warm-up reads from its own thread

ENTRY = EntryData(
    "doob53",
    "book",
    {"title": "Stochastic Processes", "year": "1953", "publisher": "Wiley"},
    {"author": ["Doob, Joseph L."]},
)


@pytest.fixture
def empty_pools():
    jsengine._pool.close_all()
    jsbundle.pool.close_all()
    format_cache_clear()
    yield
    jsbundle.pool.close_all()


@pytest.mark.slow
def test_the_warm_up_builds_the_sites_style_in_every_context_a_list_uses(empty_pools):
    SiteSettings.objects.current()
    SiteSettings.objects.filter(pk=1).update(citation_style="apa", language_code="de")
    warming.warm_in_background().join(timeout=120)

    pool = jsbundle.pool
    assert len(pool.idle) == jsbundle.CALLS_AT_ONCE
    assert all(("csl-apa", "de-DE") in context.scidraft_loaded for context in pool.idle)
    # ...and practised on made-up lists, so that V8 has compiled citeproc-js's busy functions.
    assert all(("exercised", "csl-apa", "de-DE") in c.scidraft_loaded for c in pool.idle)
    assert len(jsengine._pool.idle) == 1  # KaTeX's
    built = list(pool.every)
    formatted = format_references([ENTRY], "apa", "de")
    assert formatted.problems == {}
    assert pool.every == built  # the list made no context of its own
    # A style a request asks for later is built for it, not practised on its time.
    assert format_references([ENTRY], "ieee", "de").problems == {}
    loaded = set().union(*(context.scidraft_loaded for context in pool.idle))
    assert ("csl-ieee", "de-DE") in loaded and ("exercised", "csl-ieee", "de-DE") not in loaded


def test_without_settings_the_warm_up_builds_vancouver_and_creates_no_row(empty_pools):
    warming.warm_process()
    assert not SiteSettings.objects.exists()  # reading, never writing
    loaded = [context.scidraft_loaded for context in jsbundle.pool.idle]
    assert loaded and all((csl.DEFAULT_STYLE, csl.DEFAULT_LOCALE) in done for done in loaded)


def test_a_warm_up_that_fails_leaves_the_work_to_the_first_request(empty_pools, monkeypatch):
    def broken(context, style, locale):
        raise jsengine.JSError("the style could not be loaded")

    monkeypatch.setattr(processor, "_prepare", broken)
    warming.warm_process()  # logged, not raised
    assert jsbundle.pool.every == []  # nothing half-built is kept
    monkeypatch.undo()
    assert format_references([ENTRY], "vancouver").problems == {}


def test_the_contexts_of_a_list_are_prepared_at_once(empty_pools, monkeypatch):
    """Each context builds and practises the style in a thread of its own, at the same time
    (a worker is ready in the time of one context, not of all): every preparation waits for
    the others to have started, which only succeeds when they run together."""
    if jsbundle.CALLS_AT_ONCE < 2:
        pytest.skip("one context per list on a one-core machine")
    started = threading.Barrier(jsbundle.CALLS_AT_ONCE, timeout=20)
    threads = set()

    def prepare(context, style, locale):
        threads.add(threading.get_ident())
        started.wait()  # raises BrokenBarrierError if the others never come

    monkeypatch.setattr(processor, "_prepare", prepare)
    monkeypatch.setattr(processor, "_exercise", lambda context, style, locale: None)
    processor.warm("apa", None)
    assert len(threads) == jsbundle.CALLS_AT_ONCE
    assert len(jsbundle.pool.idle) == jsbundle.CALLS_AT_ONCE


def test_gunicorn_starts_the_warm_up_in_each_worker_unless_told_not_to(monkeypatch):
    started = []
    monkeypatch.setattr(warming, "warm_in_background", lambda: started.append(True))
    conf = runpy.run_path(str(Path(__file__).resolve().parents[2] / "gunicorn.conf.py"))
    conf["post_worker_init"](worker=None)
    assert started == [True]
    monkeypatch.setenv("SCIDRAFT_WARM", "0")
    conf["post_worker_init"](worker=None)
    assert started == [True]
