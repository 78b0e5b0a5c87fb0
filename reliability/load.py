"""Load: readers while authors autosave and publish (scenario c).

c. 200 readers for RELIABILITY_SECONDS (60) while 5 authors autosave and publish every second:
   no 5xx, every acknowledged save in the revision table under its number (numbers consecutive,
   none missing, none doubled, each with the text its save sent), no stale page after a publish;
   it reports the rate the authors achieved (autosaves and publishes per second per author)
   and the load generator's own CPU time.

Each returns a Result (results.py) for run.py's table.
"""

from __future__ import annotations

import os
import statistics
import time

from authors import Authors
from readers import Readers
from results import Result, check_revisions, logged_in_authors, tally
from traffic import Recorder


def _percentiles(times: list[float]) -> str:
    times = sorted(times)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return f"p50 {statistics.median(times) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms"


def load(site, seconds: float, readers: int = 200, authors_count: int = 5):
    result = Result(f"c. {readers} readers + {authors_count} authors, {seconds:g} s")
    recorder = Recorder()
    authors = logged_in_authors(site, recorder, authors_count, "load")
    crowd = Readers(site.port, recorder, site.cached, site.uncached, readers)
    writers = Authors(authors, period=1.0)
    began = time.monotonic()
    own_cpu = time.process_time()
    crowd.start()
    writers.start()
    try:
        time.sleep(seconds)
    finally:
        writers.stop()
        crowd.stop()
    own_cpu = time.process_time() - own_cpu
    elapsed = time.monotonic() - began
    answers = recorder.answers
    tally(result, answers, authors, began, elapsed)
    for kind in ("cached", "uncached", "autosave", "publish", "editor", "check"):
        these = [a for a in answers if a.kind == kind]
        if these:
            result.notes.append(
                f"{kind}: {len(these)} requests, {_percentiles([a.seconds for a in these])}, "
                f"{sum(a.cache == 'hit' for a in these)} cache hits"
            )
    autosaves = sum(1 for author in authors for save in author.log.saves if save.kind == "autosave")
    publishes = sum(author.log.publishes for author in authors)
    per_author = authors_count * writers.seconds
    result.notes.append(
        f"authors: {autosaves + publishes} saves acknowledged ({autosaves} autosaves and "
        f"{publishes} publishes, each saving and publishing in one revision), "
        f"{sum(a.log.conflicts for a in authors)} conflicts"
    )
    result.notes.append(
        f"author rate: {autosaves / per_author:.2f} autosaves/s and {publishes / per_author:.2f} "
        f"publishes/s per author over {writers.seconds:.1f} s (target 1 and 1); all "
        f"{authors_count}: {(autosaves + publishes) / writers.seconds:.1f} saves/s and "
        f"{publishes / writers.seconds:.1f} publishes/s (target {authors_count} publishes/s, "
        f"each with an autosave before it)"
    )
    lags = [lag for author in authors for checker in author.checkers for lag in checker.lags]
    if lags:
        result.notes.append(
            f"stale checks: {sum(a.log.checks for a in authors)} anonymous reads of the note "
            f"and the feed after publishes answered, sent {_percentiles(lags)} after the answer"
        )
    result.notes.append(
        f"load generator CPU: readers ({crowd.processes} processes) {crowd.cpu_seconds:.1f} s, "
        f"authors {own_cpu:.1f} s, over {elapsed:.1f} s on {os.cpu_count()} cores shared with "
        "the server"
    )
    if publishes < seconds * authors_count * 0.9:
        result.notes.append(
            f"note: fewer publishes than one per author per second ({publishes} in {seconds:g} s)"
        )
    check_revisions(site, authors, result, strict=True)
    return result
