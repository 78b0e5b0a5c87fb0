"""Bounds on the work one render may do.

A hostile or broken note gets a warning and a plainer rendering, never minutes of CPU or a
crash: the body has a size limit, deeply nested blocks are shown as escaped text, and every
stage before `fill` shares one time budget. Once the budget is spent the remaining formulas
stay as their source and Markdown falls back to escaped paragraphs, so the rest of the render
is linear. Normal notes never come near these bounds and render exactly as before.
"""

from __future__ import annotations

import contextlib
import html
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from .rendered import RenderWarning

# The default body limit; the site passes its own (settings.NOTE_BODY_MAX_BYTES) in the context.
MAX_SOURCE_BYTES = 2 * 1024 * 1024
# CPU seconds the stages before `fill` may take together; what is left of a 5 s response goes
# to the linear stages (sanitise, fill) and the fallback, and a hostile body stays under half of
# it. CPU time of the rendering thread, not the wall clock: whether a note renders in full
# depends on the note, not on how busy the server was when it was saved (a stored render is
# kept until the next save). The most any example or benchmark note takes, cold, is 0.08 s.
RENDER_SECONDS = 1.0
# Seconds of V8's work the same render may wait on (KaTeX, pseudocode.js, citation-js), which
# runs in V8's threads (the rendering thread's CPU clock stands still meanwhile). A call is
# charged the process's CPU time while it ran, or the wall clock if that is less (other
# threads of the process may be busy too): a machine loaded by other processes does not spend
# it. A cold formula costs 1–3 ms: this is several hundred new formulas (the benchmark note's
# 300 take 0.25 s), and a formula seen before costs nothing.
ENGINE_SECONDS = 1.5
# Container levels (list items, block quotes) a line may sit in. The Markdown stage parses a
# container's content inside it, a level of recursion each; authors' notes stay under ten.
MAX_NESTING = 32
# Lines in one pseudo-algorithm: pseudocode.js is superlinear, a real algorithm is a page.
MAX_ALGORITHM_LINES = 2_000
# Placeholders (formulas, code spans, environments, citations…) in one render: each costs a
# stash entry and a substitution, and a real note has a few hundred (300 in the benchmark
# note). Past this the budget counts as spent and the remaining constructs stay as text; the
# stages after the budget still handle each one (~10 µs), so this bounds them too.
MAX_ITEMS = 20_000
# Warnings kept in a Rendered: the rest are summed up in one.
MAX_WARNINGS = 500


class BudgetExceeded(Exception):
    """The render's time budget is spent: the stage that raises it falls back to plain text."""


@dataclass
class Outcome:
    """What a budget saw: `cut_short` once time ran out (the CPU deadline, the engine's
    seconds, a JavaScript call stopped by its time limit), as opposed to input refused by a
    size or nesting bound (`exhaust`), which is a final result. A render cut short is not
    final: the same input may render in full with more time. `scale` multiplies the time
    limits of the JavaScript calls made inside."""

    scale: float = 1.0
    cut_short: bool = False


_local = threading.local()


@contextlib.contextmanager
def budget(
    seconds: float, engine_seconds: float = ENGINE_SECONDS, *, scale: float = 1.0
) -> Iterator[Outcome]:
    """Stages called inside share a deadline `seconds` of CPU time from now and
    `engine_seconds` of V8's work (nested calls keep the outer budget: a card rendered inside
    a page render spends the page's, and its outcome is the page's)."""
    if getattr(_local, "deadline", None) is not None:
        yield _local.outcome
        return
    _local.deadline = time.thread_time() + seconds
    _local.engine_left = engine_seconds
    _local.next_reading = 0.0
    _local.spent = False
    _local.outcome = outcome = Outcome(scale=scale)
    try:
        yield outcome
    finally:
        _local.deadline = None
        _local.outcome = None


def cut_short() -> None:
    """Record that time, not the input, stopped part of the current render."""
    outcome = getattr(_local, "outcome", None)
    if outcome is not None:
        outcome.cut_short = True


def time_scale() -> float:
    """How much longer than usual a JavaScript call may run inside the current budget."""
    outcome = getattr(_local, "outcome", None)
    return outcome.scale if outcome is not None else 1.0


def remaining() -> float:
    """Seconds left in the current budget (infinite outside `budget`)."""
    deadline = getattr(_local, "deadline", None)
    if deadline is None:
        return float("inf")
    return min(deadline - time.thread_time(), _local.engine_left)


def expired() -> bool:
    """Whether the budget is spent, noticed at most CHECK_INTERVAL late (see check): stages
    ask this once per construct, hundreds of thousands of times on a hostile body."""
    return _spent()


def charge_engine(seconds: float) -> None:
    """Count `seconds` spent waiting on the JavaScript engine against the budget."""
    if getattr(_local, "deadline", None) is not None:
        _local.engine_left -= seconds
        _local.next_reading = 0.0


def exhaust() -> None:
    """Spend the rest of the budget now: the stages from here on take their plain path."""
    if getattr(_local, "deadline", None) is not None:
        _local.deadline = time.thread_time()
        _local.spent = True


def cap_warnings(warnings: list[RenderWarning]) -> list[RenderWarning]:
    if len(warnings) <= MAX_WARNINGS:
        return warnings
    extra = len(warnings) - MAX_WARNINGS
    return warnings[:MAX_WARNINGS] + [
        RenderWarning(warnings[MAX_WARNINGS].line, "too-many-warnings", f"{extra} more warnings")
    ]


# How often check() reads the thread's CPU clock, in seconds of wall-clock time.
CHECK_INTERVAL = 0.001


def check() -> None:
    """Raise BudgetExceeded once the budget is spent, noticed at most CHECK_INTERVAL late."""
    if _spent():
        raise BudgetExceeded


def _spent() -> bool:
    """The Markdown stage asks this at every block and special character, thousands of times
    a render, and reading the thread's CPU clock is a system call (~0.4 µs). The wall clock
    is read instead (vDSO, ~0.08 µs) and the CPU clock only once CHECK_INTERVAL of it has
    passed since the last reading: a thread cannot use more CPU time than passes on the wall
    clock, so no overrun is missed for longer.
    A spent budget stays spent without another reading: the stages after it ask once per
    construct, and what they do then must stay cheap (see the module docstring).
    """
    deadline = getattr(_local, "deadline", None)
    if deadline is None:
        return False
    if _local.spent:
        return True
    now = time.perf_counter()
    if now < _local.next_reading:
        return False
    _local.next_reading = now + CHECK_INTERVAL
    _local.spent = time.thread_time() >= deadline or _local.engine_left <= 0
    if _local.spent:
        _local.outcome.cut_short = True
    return _local.spent


def describe_bytes(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    if size >= 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size} bytes"


def oversized(source: str, limit: int) -> int:
    """The UTF-8 size of `source` when it is over `limit` bytes, else 0."""
    if not limit or len(source) * 4 <= limit:  # UTF-8 needs at most four bytes a character
        return 0
    size = len(source.encode("utf-8"))
    return size if size > limit else 0


# Blank lines between blocks.
BLANK_LINES = re.compile(r"\n(?:[ \t]*\n)+")


def escaped_paragraphs(text: str) -> str:
    """The fallback when Markdown cannot finish: each block as an escaped paragraph
    (placeholders survive escaping, so math and code still appear). It is written as the
    sanitiser writes HTML back, so it is not sanitised again (nh3 took a second over 2 MB of
    `<`, after the budget was spent)."""
    # Escaping adds no whitespace: the blocks split and strip as the author's text does.
    blocks = map(str.strip, BLANK_LINES.split(html.escape(text, quote=False)))
    return _as_sanitiser_writes("\n".join(f"<p>{block}</p>" for block in blocks if block))


# What nh3 (html5ever) does to text besides escaping &, < and >, in its order: it reads CRLF
# and CR as LF (before parsing), drops NUL and writes U+00A0 back as &nbsp;. Quotes stay.
_SANITISER_TEXT = (("\r\n", "\n"), ("\r", "\n"), ("\x00", ""), ("\xa0", "&nbsp;"))


def _as_sanitiser_writes(markup: str) -> str:
    """`markup` (tags and text escaped by html.escape(quote=False)) as nh3.clean writes it
    back (tests/markup/test_fast_paths.py compares the two on random text)."""
    for character, replacement in _SANITISER_TEXT:
        if character in markup:
            markup = markup.replace(character, replacement)
    return markup
