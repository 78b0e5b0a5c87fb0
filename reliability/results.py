"""What a scenario of `make reliability` reports (Result), and the tallies the scenarios share:
latencies, server errors, stale reads, and the revisions every acknowledged save must have left.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from authors import Author
from traffic import Answer, Recorder

MB = 1024 * 1024


@dataclass
class Result:
    name: str
    requests: int = 0
    errors: int = 0
    lost_writes: int = 0
    stale_reads: int = 0
    rps: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # (title, header, rows): tables a scenario prints below the summary.
    tables: list[tuple[str, list[str], list[list[str]]]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.errors or self.lost_writes or self.stale_reads or self.problems)


def latencies(answers: list[Answer], seconds: float, result: Result) -> None:
    times = sorted(answer.seconds for answer in answers)
    if not times:
        return
    result.rps = len(times) / seconds
    result.p50_ms = statistics.median(times) * 1000
    result.p99_ms = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000


def server_errors(answers: list[Answer], allowed_503: bool = False) -> list[Answer]:
    """5xx answers and requests that got no HTTP answer at all (status 0)."""
    return [
        answer
        for answer in answers
        if answer.status == 0
        or (answer.status >= 500 and (answer.status != 503 or not allowed_503))
    ]


def describe(errors: list[Answer], began: float) -> str:
    """The errors grouped by request kind and status, with when the first one happened."""
    groups = Counter((answer.kind, answer.status or f"no answer ({answer.error})")
                     for answer in errors)  # fmt: skip
    first = min(answer.at for answer in errors) - began
    listed = ", ".join(f"{count}× {kind} {status}" for (kind, status), count
                       in groups.most_common())  # fmt: skip
    return f"errors: {listed} (the first {first:.1f} s into the scenario)"


def tally(result: Result, answers: list[Answer], authors, began: float, elapsed: float):
    """Requests, error answers (any 4xx or 5xx), stale reads and read latencies into `result`;
    the reads, for the scenario's own figures."""
    result.requests = len(answers)
    errors = server_errors(answers) + [a for a in answers if 400 <= a.status < 500]
    result.errors = len(errors)
    if errors:
        result.notes.append(describe(errors, began))
    result.stale_reads = sum(author.log.stale for author in authors)
    reads = [a for a in answers if a.kind in ("cached", "uncached")]
    latencies(reads, elapsed, result)
    return reads


def check_revisions(site, authors: list[Author], result: Result, strict: bool) -> None:
    """Every acknowledged save is in the revision table with its text; numbers are 1..N.

    `strict`: the revision count must match the acknowledged saves exactly (no outage, so no
    save may have committed without an answer). Otherwise extra revisions are reported only.
    """
    table = site.revisions([author.note_id for author in authors])
    for author in authors:
        rows = table[str(author.note_id)]  # [[number, kind, body], ...] by number
        numbers = [row[0] for row in rows]
        if numbers != list(range(1, len(numbers) + 1)):
            result.problems.append(f"note {author.note_id}: revision numbers {numbers[:20]}…")
        by_number = {row[0]: row for row in rows}
        lost = 0
        for save in author.log.saves:
            if save.kind == "autosave":
                row = by_number.get(save.revision)
                if row is None:
                    lost += 1
                elif row[1] != "autosave" or row[2] != save.body:
                    result.problems.append(
                        f"note {author.note_id}: revision {save.revision} holds another save's "
                        "text (interleaved)"
                    )
        publishes = [row for row in rows if row[1] == "publish"]
        # A publish click saves the form and publishes in one revision (kind "publish").
        published_bodies = {row[2] for row in rows if row[1] in ("save", "publish")}
        wanted = [save.body for save in author.log.saves if save.kind == "publish"]
        lost += sum(1 for body in wanted if body not in published_bodies)
        if len(publishes) < len(wanted):
            lost += len(wanted) - len(publishes)
        if author.log.pending is not None:
            lost += 1  # refused and never saved by a retry
        result.lost_writes += lost
        acknowledged = 1 + len(author.log.saves)  # the note's creation, then one a save
        acknowledged += author.log.conflicts  # a refused save is kept as a revision
        extra = len(rows) - acknowledged
        if extra and strict:
            result.problems.append(
                f"note {author.note_id}: {len(rows)} revisions for {acknowledged} acknowledged"
            )
        elif extra > 0:
            result.notes.append(
                f"note {author.note_id}: {extra} revision(s) committed while the answer was lost"
            )


def logged_in_authors(site, recorder: Recorder, count: int, label: str) -> list[Author]:
    authors = []
    for number in range(count):
        username, password = site.accounts[number]
        author = Author(site.authoring_port, recorder, username, password, reader_port=site.port)
        author.login()
        author.create_note(f"Reliability {label} {username}")
        authors.append(author)
    return authors
