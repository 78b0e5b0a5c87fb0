"""Faults: Redis, then PostgreSQL, stopped under load and started again (scenarios a and b).

a. Redis stopped for ~10 s under load, then started again (empty): no 5xx, no stale page after
   a publish, and the shared cache holds the generation and pages again afterwards.
b. PostgreSQL stopped for ~10 s under load, then started again: cached anonymous pages stay
   200, pages that need the database and every write answer 503 (never 500), nothing is half
   saved, and everything works again afterwards without restarting gunicorn; the autosaves
   refused meanwhile are retried and saved, as the browser does.

Each returns a Result (results.py) for run.py's table.
"""

from __future__ import annotations

import time

from authors import Authors
from readers import Readers
from results import (
    Result,
    check_revisions,
    describe,
    latencies,
    logged_in_authors,
    server_errors,
    tally,
)
from traffic import Answer, Recorder

# After a service is back, requests may take this long to find it again (the cache's retry
# delay, the database's health check on the next request).
RECOVERY_GRACE_S = 3.0


def _hits_after(answers: list[Answer], moment: float) -> int:
    return sum(1 for a in answers if a.at >= moment and a.kind == "cached" and a.cache == "hit")


def redis_outage(site, readers: int = 20, before: float = 8, down: float = 10, after: float = 12):
    result = Result("a. Redis stopped 10 s under load")
    recorder = Recorder()
    authors = logged_in_authors(site, recorder, 2, "redis")
    crowd = Readers(site.port, recorder, site.cached, site.uncached, readers)
    writers = Authors(authors, period=1.0)
    began = time.monotonic()
    crowd.start()
    writers.start()
    try:
        time.sleep(before)
        stopped = time.monotonic()
        site.redis.stop()
        time.sleep(down)
        site.redis.start()
        restarted = time.monotonic()
        time.sleep(after)
    finally:
        writers.stop()
        crowd.stop()
    elapsed = time.monotonic() - began
    answers = recorder.answers
    reads = tally(result, answers, authors, began, elapsed)
    during = [a for a in reads if stopped <= a.at < restarted]
    keys = site.redis.keys()
    generation = [key for key in keys if key.endswith("site:generation")]
    pages = [key for key in keys if ":page:" in key]
    hits = _hits_after(answers, restarted + RECOVERY_GRACE_S)
    result.notes.append(
        f"during the outage: {len(during)} reads answered, "
        f"{sum(1 for a in during if a.status == 200)} with 200; "
        f"after the restart: Redis holds the generation ({len(generation)} key) and "
        f"{len(pages)} pages again; {hits} cache hits"
    )
    if not generation or not pages:
        result.problems.append("caching did not resume in Redis after the restart")
    result.notes.append(
        f"authors: {sum(a.log.publishes for a in authors)} publishes, "
        f"{sum(a.log.checks for a in authors)} reads checked after them"
    )
    check_revisions(site, authors, result, strict=True)
    return result


def database_outage(site, readers: int = 20, before: float = 8, down: float = 10,
                    after: float = 15):  # fmt: skip
    result = Result("b. PostgreSQL stopped 10 s under load")
    recorder = Recorder()
    authors = logged_in_authors(site, recorder, 2, "database")
    crowd = Readers(site.port, recorder, site.cached, site.uncached, readers, uncached_every=5)
    # Every save bumps the content generation, which is in every page's key: authors start
    # writing when the database goes, so that the pages readers had are still the current ones.
    writers = Authors(authors, period=1.0)
    began = time.monotonic()
    crowd.start()
    try:
        time.sleep(before)
        site.warm()  # every cached path is in the cache under the current generation
        stopping = time.monotonic()
        site.postgres.stop()
        stopped = time.monotonic()
        writers.start()
        time.sleep(down)
        starting = time.monotonic()
        site.postgres.start()
        started = time.monotonic()
        time.sleep(after)
    finally:
        writers.stop()
        crowd.stop()
        if not site.postgres.running():
            site.postgres.start()
    elapsed = time.monotonic() - began
    answers = recorder.answers
    result.requests = len(answers)
    # Anywhere: a 5xx other than 503, or no answer at all. Before the outage and once it is
    # over: any error answer. During it: a cached page that was not served.
    errors = server_errors(answers, allowed_503=True)
    outside = [
        a
        for a in answers
        if a.at + a.seconds < stopping or a.at >= started + RECOVERY_GRACE_S  # answered before
    ]
    errors += [a for a in outside if a.status >= 400 and a.kind != "check"]
    # Sent and answered while the database was down: a request still queued when it came back
    # may rightly be rendered.
    during = [a for a in answers if stopped + 0.5 <= a.at and a.at + a.seconds < starting]
    cached = [a for a in during if a.kind == "cached"]
    uncached = [a for a in during if a.kind == "uncached"]
    writes = [a for a in during if a.kind in ("autosave", "publish", "editor")]
    cached_failed = [a for a in cached if a.status != 200]
    errors += cached_failed
    errors = list({id(answer): answer for answer in errors}.values())  # each answer once
    result.errors = len(errors)
    if errors:
        result.notes.append(describe(errors, began))
    result.notes.append(
        f"timeline: PostgreSQL stopped {stopping - began:.1f}–{stopped - began:.1f} s, "
        f"started {starting - began:.1f}–{started - began:.1f} s"
    )
    not_503 = [a for a in uncached + writes if a.status != 503]
    if not_503:
        result.problems.append(
            f"{len(not_503)} page renders or writes during the outage did not answer 503 "
            f"(statuses {sorted({a.status for a in not_503})}): {describe(not_503, began)}"
        )
    if not cached or not uncached or not writes:
        result.problems.append("the outage window saw no cached, uncached or write requests")
    recovered = [
        a.at for a in answers if a.at >= started and a.kind == "uncached" and a.status == 200
    ]
    recovery = f"{recovered[0] - started:.1f} s" if recovered else "never"
    if not recovered:
        result.problems.append("pages needing the database did not recover")
    reads = [a for a in answers if a.kind in ("cached", "uncached")]
    latencies(reads, elapsed, result)
    running = all(server.process.poll() is None for server in site.servers)
    result.notes.append(
        f"during the outage: cached pages {len(cached) - len(cached_failed)}/{len(cached)} "
        f"answered 200; renders {sum(a.status == 503 for a in uncached)}/{len(uncached)} and "
        f"writes {sum(a.status == 503 for a in writes)}/{len(writes)} answered 503; "
        f"first render after the restart {recovery} after it; gunicorn not restarted "
        f"({'still the same processes' if running else 'EXITED'})"
    )
    retried = sum(author.log.retried_ok for author in authors)
    refused = sum(author.log.refused for author in authors)
    result.notes.append(
        f"authors: {refused} saves refused with 503 during the outage, {retried} autosaves "
        f"saved by their retry afterwards, {sum(a.log.publishes for a in authors)} publishes"
    )
    unclear = sum(author.log.unclear for author in authors)
    if unclear:
        result.problems.append(f"{unclear} autosave 503s without the editor's JSON error")
    result.stale_reads = sum(author.log.stale for author in authors)
    check_revisions(site, authors, result, strict=False)
    return result
