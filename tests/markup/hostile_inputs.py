"""What the denial-of-service tests share: the time limit each hostile input must render in
(`_timed` measures CPU time), the note rendered before and after every test to show the engine
keeps serving (`_engine_keeps_serving`, an autouse fixture each module imports), and a body of
ordinary constructs of any size."""

from __future__ import annotations

import time

import pytest

from scidraft.markup import RenderContext, render

SECONDS = 5.0
MB = 1024 * 1024

NORMAL = "# Heat\n\nSee $e^{i\\pi} + 1 = 0$ and **bold**.\n\n- one\n    - two\n"


def _timed(source: str, context: RenderContext | None = None):
    """Render, asserting the work took under SECONDS of CPU time. CPU time, not the wall
    clock: the limit is on the work an input can cause, and the test machine is shared (the
    wall-clock time is reported with any failure)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    rendered = render(source, context)
    cpu, wall = time.process_time() - start_cpu, time.perf_counter() - start
    assert cpu < SECONDS, f"took {cpu:.1f} s of CPU time ({wall:.1f} s on the clock)"
    return rendered


def _codes(rendered) -> set[str]:
    return {warning.code for warning in rendered.warnings}


@pytest.fixture(autouse=True)
def _engine_keeps_serving():
    """Every hostile input is followed by a normal note rendering exactly as before it."""
    before = render(NORMAL).html
    yield
    assert render(NORMAL).html == before


def _mixed_body(size: int) -> str:
    unit = (
        "## Section\n\nProse with $x_{i}^{2}$, \\(a+b\\), **bold**, *em*, `code`, a [link]"
        "(https://example.org) and \\cite{knuth}.\n\n$$\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}$$\n\n"
        "- item\n    - nested *item*\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "```python\nprint('hi')\n```\n\n:::lemma[Name]{#lem-x}\nText.\n:::\n\n"
    )
    body = unit * (size // len(unit) + 1)
    return body[:size]
