"""A long command's progress on stderr: redrawn on a terminal, a line now and then elsewhere."""

from __future__ import annotations

import io

from django.core.management.base import OutputWrapper

from scidraft.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_a_line_is_written_per_interval_and_at_the_end():
    """Not a terminal: no carriage returns, no line before the interval has passed, and a
    last line with the total and the time taken."""
    out = io.StringIO()
    with Progress("notes", 1000, out, unit="notes", every=3600) as progress:
        for _ in range(1000):
            progress.advance()
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert len(lines) == 1
    assert lines[0].startswith("notes: 1,000/1,000 notes (100%), ")
    assert "/s, done in 0:0" in lines[0]


def test_off_a_terminal_each_interval_gives_a_line_with_the_time_left():
    out = io.StringIO()
    progress = Progress("notes", 10, out, every=0)
    progress.advance(4)
    assert out.getvalue().startswith("notes: 4/10 (40%), ")
    assert out.getvalue().rstrip().endswith("left")


def test_on_a_terminal_one_line_is_redrawn():
    """On a terminal the line is rewritten in place and ends with a newline when done."""
    out = Terminal()
    progress = Progress("notes", 3, OutputWrapper(out))
    progress.every = 0
    progress.advance()
    progress.advance()
    progress.finish()
    text = out.getvalue()
    assert text.count("\r") == 3 and text.count("\n") == 1 and text.endswith("\n")
    assert "notes: 2/3 (67%)" in text
