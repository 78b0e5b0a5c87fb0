"""Progress of a long command (import_hugo, import_bib, rerender) on stderr: done, total, rate
and the time left.

On a terminal one line is redrawn in place, at most every REDRAW_SECONDS. Anywhere else (a
log file, cron mail, a pipe) a redrawn line would be thousands of lines, so a full line is
written every LINE_SECONDS instead, and one at the end.
"""

from __future__ import annotations

import time

from django.core.management.base import OutputWrapper

REDRAW_SECONDS = 0.2
LINE_SECONDS = 10.0


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


class Progress:
    """Counts what `label` has done of `total`, reporting to `stream` (a command's stderr).

    `every` overrides LINE_SECONDS, the interval between lines when `stream` is no terminal."""

    def __init__(
        self, label: str, total: int, stream, *, unit: str = "", every: float | None = None
    ):
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = stream
        self.done = 0
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.every = REDRAW_SECONDS if self.tty else (LINE_SECONDS if every is None else every)
        self.started = time.monotonic()
        self.shown = self.started

    def _write(self, text: str) -> None:
        if isinstance(self.stream, OutputWrapper):
            self.stream.write(text, ending="")
        else:
            self.stream.write(text)
        self.stream.flush()

    def line(self) -> str:
        """`label: done/total unit (percent) rate/s, time left`, or the time taken once done."""
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        unit = f" {self.unit}" if self.unit else ""
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        text = f"{self.label}: {self.done:,}/{self.total:,}{unit}{share}, {rate:,.1f}/s"
        if self.done >= self.total:
            return f"{text}, done in {_duration(elapsed)}"
        if self.done and rate > 0:
            return f"{text}, {_duration((self.total - self.done) / rate)} left"
        return text

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        if now - self.shown >= self.every and self.done < self.total:
            self.shown = now
            self._write(f"\r{self.line()}\033[K" if self.tty else f"{self.line()}\n")

    def finish(self) -> None:
        """The last line, whatever the interval (also after an interrupt: how far it got)."""
        self._write(f"\r{self.line()}\033[K\n" if self.tty else f"{self.line()}\n")

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.finish()
