"""The server's citation bundle in V8 contexts of their own pool: citation-js's core, BibTeX,
CSL and RIS plugins and citeproc-js from the locked npm packages, with SciDraft's functions
(bibliography/js/), built by scripts/build-citations.mjs for V8 itself (no polyfill, no
browser globals). scidraft.markup.v8pool pools and bounds the contexts; bibliography.processor
calls them.
"""

from __future__ import annotations

from pathlib import Path

from py_mini_racer import MiniRacer

from scidraft.markup import v8_at_once, v8pool

BUNDLE = v8pool.ASSETS / "citations" / "citations.js"
SOURCES = Path(__file__).resolve().parent / "js"  # what the bundle is built from

# Citation calls one caller may run at once, each in a context of its own (the independent
# slices of a numbered reference list: bibliography.formatting), and the citation contexts a
# worker keeps ready, with the site's style built (the pool's floor). Each such context holds
# 15–20 MB under Vancouver, 100 MB under APA or Chicago: two by default
# (SCIDRAFT_V8_CITATION_CONTEXTS: configure), fewer than a worker's threads.
CALLS_AT_ONCE = min(2, v8_at_once.CALLS_AT_ONCE)
# A reference list's call is not cut shorter than this by the render's budget: citeproc-js
# takes 3-20 ms an entry (APA and Chicago are the slow ones, a busy machine doubles it), and a
# list cut off would show raw entries at every render, as nothing stopped is cached. Only one
# such call can overrun a render: the budget is spent after it, and later lists are not
# formatted (scidraft.markup.citations).
FLOOR_SECONDS = v8pool.CALL_TIMEOUT_SECONDS


def load() -> MiniRacer:
    """A fresh context with the bundle evaluated: the functions processor.py calls are
    globals."""
    return v8pool.new_context(BUNDLE)


# The floor is what one request uses at once; the bundle is several times KaTeX's size and
# needed only by reference lists, hence a pool of its own. Contexts in use at once are bounded
# by a worker's threads (SCIDRAFT_V8_CONTEXTS: configure).
pool = v8pool.Pool(load, floor=CALLS_AT_ONCE, size_max=max(CALLS_AT_ONCE, 4))


def configure(*, calls_at_once: int | None = None, contexts: int | None = None) -> None:
    """How many citation calls one caller runs at once (and contexts are kept ready), and how
    many citation contexts may be in use at once (never fewer than one caller's calls)."""
    global CALLS_AT_ONCE
    if calls_at_once is not None:
        CALLS_AT_ONCE = max(1, int(calls_at_once))
        pool.floor = CALLS_AT_ONCE
    if contexts is not None:
        pool.size_max = max(CALLS_AT_ONCE, int(contexts))


def call(function: str, *args, before=None):
    """`function(*args)` in a citation context, bounded like a formula (time, memory, the
    render's budget); `before(context)` runs first (loading a style), under its own time
    limits, and the render's budget is charged for it too."""
    return v8pool.call(function, *args, pool=pool, before=before, floor=FLOOR_SECONDS)


def call_at_once(function: str, arg_lists: list[tuple], *, before=None) -> list:
    """`function(*args)` for each of `arg_lists`, at once, in citation contexts of their own
    (v8_at_once.call): each call's result, or the JSError it raised."""
    return v8_at_once.call(function, arg_lists, pool=pool, before=before, floor=FLOOR_SECONDS)


def warm(before=None) -> None:
    """Make CALLS_AT_ONCE citation contexts (as many as one list uses at once) before the first
    requests need them, each given `before(context)` (a style to build), all at once."""
    v8_at_once.prepare(pool, CALLS_AT_ONCE, before)
