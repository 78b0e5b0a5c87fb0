"""The scale benchmark's rows (one mode at one publish rate) and its table with the goals (a
helper module of benchmarks/scale.py: the benchmark runner skips `_` files)."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from _table import status, table

# Goals: p99 with writes against p99 without, per publish rate; no request over a second.
P99_FACTOR = {1: 2.0, 5: 3.0}
MAX_MS = 1000.0
DASH = "—"


@dataclass
class Row:
    mode: str
    rate: int
    seconds: float
    reads: list = field(default_factory=list)
    publishes: list = field(default_factory=list)
    rss_mb: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds by process group

    def _ms(self, share: float) -> float:
        times = sorted(answer.seconds for answer in self.reads)
        if not times:
            return 0.0
        return times[min(len(times) - 1, int(share * len(times)))] * 1000

    @property
    def p50(self) -> float:
        return self._ms(0.50)

    @property
    def p99(self) -> float:
        return self._ms(0.99)

    @property
    def max(self) -> float:
        return max((answer.seconds for answer in self.reads), default=0.0) * 1000

    @property
    def rps(self) -> float:
        return len(self.reads) / self.seconds

    @property
    def errors(self) -> int:
        return sum(answer.status not in (200, 304) for answer in self.reads)

    @property
    def caches(self) -> Counter:
        return Counter(answer.cache or "none" for answer in self.reads)

    def share(self, value: str) -> float:
        return self.caches[value] / max(1, len(self.reads))

    @property
    def written(self) -> int:
        return sum(answer.status == 302 for answer in self.publishes)


def publish_cpu_ms(row: Row, quiet: Row | None) -> dict[str, float] | None:
    """The server's CPU per publish by process group, in ms: what the row's processes spent
    beyond its reads at the cost a read had in the same mode without writes (`quiet`)."""
    if quiet is None or not row.written or not quiet.reads:
        return None
    return {
        group: 1000
        * (seconds - len(row.reads) * quiet.cpu.get(group, 0.0) / len(quiet.reads))
        / row.written
        for group, seconds in row.cpu.items()
    }


def cpu_lines(rows: list[Row]) -> list[str]:
    """A line per row with writes: the server's CPU per publish, by process group."""
    quiet = {row.mode: row for row in rows if row.rate == 0}
    lines = []
    for row in rows:
        costs = publish_cpu_ms(row, quiet.get(row.mode))
        if costs:
            split = ", ".join(f"{group} {ms:.0f}" for group, ms in costs.items())
            lines.append(
                f"{row.mode} at {row.rate}/s: {sum(costs.values()):.0f} ms of CPU a publish "
                f"({split})"
            )
    return lines


def report(rows: list[Row]) -> tuple[str, list[str]]:
    failures = []
    quiet = {row.mode: row for row in rows if row.rate == 0}
    baseline = {mode: row.p99 for mode, row in quiet.items()}
    cells = []
    for row in rows:
        goals, ok = [f"max ≤ {MAX_MS:g}"], row.max <= MAX_MS
        factor = P99_FACTOR.get(row.rate)
        if factor and row.mode in baseline:
            limit = factor * baseline[row.mode]
            goals.insert(0, f"p99 ≤ {factor:g}× = {limit:.1f}")
            if row.p99 > limit:
                ok = False
                failures.append(f"{row.mode} at {row.rate}/s: p99 {row.p99:.1f} > {limit:.1f} ms")
        if row.max > MAX_MS:
            ok = False
            failures.append(f"{row.mode} at {row.rate}/s: max {row.max:.0f} ms > {MAX_MS:g} ms")
        if row.errors:
            ok = False
            failures.append(f"{row.mode} at {row.rate}/s: {row.errors} errors")
        written = row.written
        publish_ms = [answer.seconds * 1000 for answer in row.publishes if answer.status == 302]
        costs = publish_cpu_ms(row, quiet.get(row.mode))
        cells.append(
            [
                row.mode,
                f"{row.rate} → {written / row.seconds:.2f}",
                f"{row.rps:,.0f}",
                f"{row.p50:.1f}",
                f"{row.p99:.1f}",
                f"{row.max:.0f}",
                f"{100 * row.share('hit'):.1f}",
                f"{100 * row.share('stale'):.1f}",
                f"{100 * row.share('miss'):.1f}",
                str(row.errors),
                f"{row.caches['miss'] / written:.1f}" if written else DASH,
                f"{statistics.median(publish_ms):.0f}" if publish_ms else DASH,
                f"{sum(costs.values()):.0f}" if costs else DASH,
                "; ".join(goals),
                status(ok),
            ]
        )
    header = [
        "mode",
        "publishes/s",
        "req/s",
        "p50 ms",
        "p99 ms",
        "max ms",
        "hit %",
        "stale %",
        "miss %",
        "errors",
        "misses/publish",
        "publish ms",
        "CPU ms/publish",
        "goals (ms)",
        "status",
    ]
    return table(header, cells, set(range(1, 13))), failures
