"""CPU time the server's processes spend over a stretch of a run, from /proc (a helper module
of benchmarks/scale.py: the benchmark runner skips `_` files).

Latency on a shared machine moves with whatever else runs; the CPU a publish costs the
server does not, so the scale benchmark reports both. Groups: the gunicorn workers, the
PostgreSQL server's processes and Redis's. A process that ends within the stretch loses what
it spent (PostgreSQL's backends live as long as the workers' connections, which outlast a
row)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")

Ticks = dict[str, dict[int, int]]


def _stat(pid: int) -> tuple[str, int] | None:
    """The process's command name and CPU ticks (user and system) so far."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat.rsplit(")", 1)[1].split()
    return name, int(fields[11]) + int(fields[12])


def named(*prefixes: str) -> Callable[[], list[int]]:
    """The processes whose command name starts with one of `prefixes`."""

    def find() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                stat = _stat(int(entry.name))
                if stat is not None and stat[0].startswith(prefixes):
                    found.append(int(entry.name))
        return found

    return find


class CpuClock:
    """Reads the CPU ticks of each group's processes (group name → its processes' finder)."""

    def __init__(self, groups: dict[str, Callable[[], list[int]]]):
        self.groups = groups

    def read(self) -> Ticks:
        ticks: Ticks = {}
        for group, find in self.groups.items():
            ticks[group] = {}
            for pid in find():
                stat = _stat(pid)
                if stat is not None:
                    ticks[group][pid] = stat[1]
        return ticks


def spent(before: Ticks, after: Ticks) -> dict[str, float]:
    """CPU seconds each group spent between two reads (processes started meanwhile count
    from zero)."""
    return {
        group: sum(ticks - before.get(group, {}).get(pid, 0) for pid, ticks in now.items())
        / TICKS_PER_SECOND
        for group, now in after.items()
    }
