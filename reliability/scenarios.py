"""The three scenarios of `make reliability` ("Faults" and "Load").

a. Redis stopped for ~10 s under load, then started again (empty): no 5xx, no stale page after
   a publish, and the shared cache holds the generation and pages again afterwards.
b. PostgreSQL stopped for ~10 s under load, then started again: cached anonymous pages stay
   200, pages that need the database and every write answer 503 (never 500), nothing is half
   saved, and everything works again afterwards without restarting gunicorn; the autosaves
   refused meanwhile are retried and saved, as the browser does.
c. 200 readers for RELIABILITY_SECONDS (60) while 5 authors autosave and publish every second:
   no 5xx, every acknowledged save in the revision table under its number (numbers consecutive,
   none missing, none doubled, each with the text its save sent), no stale page after a publish;
   it reports the rate the authors achieved (autosaves and publishes per second per author)
   and the load generator's own CPU time.
d. A flood of random query strings on cached pages and random searches (items 7
   and 8) under Redis capped as docker-compose.yml caps it (256mb, allkeys-lru), while an
   attacker tries 25 wrong passwords on an account, then its right one, and the account's
   owner logs in from elsewhere and from a browser behind the attacker's address; then
   guesses shared out over 12 addresses; then Redis full with noeviction and the attack again.
   Passes if no flood request fails, Redis grows by at most FLOOD_MEMORY_BOUND and evicts
   nothing, at most the limits' number of wrong passwords are checked, the right password is
   refused to the attacker, and the owner always logs in.
e. Writing together: 20 co-authors, 5 on each of 4 notes, type for
   RELIABILITY_SECONDS at 5–10 characters a second at random places, through pycrdt and the
   y-websocket protocol (live_editor.py), on two daphne servers sharing Redis (the channel
   layer) and PostgreSQL, each note's co-authors split across both. It measures the
   propagation from one editor's keystroke to each other editor of the note (p95 goal
   200 ms), and counts the characters lost: typed by anyone but missing, at the end, from an
   editor, from the stored document (the updates in PostgreSQL), or from the note's text and
   newest revision after the final merged save. Passes with every keystroke acknowledged and
   delivered, nothing lost, every editor with one text, and p95 under the goal.
g. An @string bomb (about 750 bytes of macros that each double the last, once three titles of
   33.5 M characters) uploaded through the editor's bibliography form while 20 readers read:
   refused with the line of the @string within BOMB_SECONDS_BOUND, the authoring workers'
   RSS grows by less than BOMB_RSS_BOUND, nothing is stored, and no read fails meanwhile.

Each returns a Result; run.py prints them as one table (d and e add tables of their own).
"""

from __future__ import annotations

import asyncio
import base64
import os
import random
import re
import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from _table import status
from traffic import Answer, Author, Authors, Browser, Readers, Recorder

# After a service is back, requests may take this long to find it again (the cache's retry
# delay, the database's health check on the next request).
RECOVERY_GRACE_S = 3.0


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
        published_bodies = {row[2] for row in rows if row[1] == "save"}
        wanted = [save.body for save in author.log.saves if save.kind == "publish"]
        lost += sum(1 for body in wanted if body not in published_bodies)
        if len(publishes) < len(wanted):
            lost += len(wanted) - len(publishes)
        if author.log.pending is not None:
            lost += 1  # refused and never saved by a retry
        result.lost_writes += lost
        acknowledged = 1 + sum(1 if s.kind == "autosave" else 2 for s in author.log.saves)
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


def _authors(site, recorder: Recorder, count: int, label: str) -> list[Author]:
    authors = []
    for number in range(count):
        username, password = site.accounts[number]
        author = Author(site.authoring_port, recorder, username, password, reader_port=site.port)
        author.login()
        author.create_note(f"Reliability {label} {username}")
        authors.append(author)
    return authors


def _hits_after(answers: list[Answer], moment: float) -> int:
    return sum(1 for a in answers if a.at >= moment and a.kind == "cached" and a.cache == "hit")


def redis_outage(site, readers: int = 20, before: float = 8, down: float = 10, after: float = 12):
    result = Result("a. Redis stopped 10 s under load")
    recorder = Recorder()
    authors = _authors(site, recorder, 2, "redis")
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
    authors = _authors(site, recorder, 2, "database")
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


def _percentiles(times: list[float]) -> str:
    times = sorted(times)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return f"p50 {statistics.median(times) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms"


def load(site, seconds: float, readers: int = 200, authors_count: int = 5):
    result = Result(f"c. {readers} readers + {authors_count} authors, {seconds:g} s")
    recorder = Recorder()
    authors = _authors(site, recorder, authors_count, "load")
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
        f"{publishes} publishes, each saving then publishing), "
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


# --- d. The query-string flood and the login attack -------------------------------------------

ATTACKER = "203.0.113.66"
OWNER_ELSEWHERE = "198.51.100.7"
WRONG = 25
SPREAD = 12  # addresses of the shared-out guesses, 5 wrong passwords each
# Redis may grow by this much over the flood (formulas of search excerpts, claims); a flood
# that made entries would add ~270 KB a request.
FLOOD_MEMORY_BOUND = 16 * 1024 * 1024
MB = 1024 * 1024


class MemorySampler:
    """Redis's used_memory every half second while the flood runs: its peak."""

    def __init__(self, redis):
        self.redis = redis
        self.peak = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stopping.wait(0.5):
            self.peak = max(self.peak, self.redis.memory()["used_memory"])

    def start(self) -> None:
        self.peak = self.redis.memory()["used_memory"]
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=5)


def _held(outcomes: Counter, limit: int) -> bool:
    """At most `limit` passwords were checked, and none let in."""
    return outcomes["wrong"] <= limit and not outcomes["logged in"]


def _attack(port: int, username: str, password: str, address: str) -> tuple[Counter, str]:
    """WRONG wrong passwords from one browser at `address`, then the right one."""
    browser = Browser(port, address)
    try:
        outcomes = Counter(browser.login(username, f"not-it-{n}") for n in range(WRONG))
        return outcomes, browser.login(username, password)
    finally:
        browser.close()


def _logs_in(port: int, username: str, password: str, address: str) -> Browser:
    """A browser of the owner's that has logged in once (it holds the device cookie)."""
    browser = Browser(port, address)
    outcome = browser.login(username, password)
    if outcome != "logged in":
        raise RuntimeError(f"{username} could not log in before the attack: {outcome}")
    return browser


def flood(site, seconds: float, readers: int = 100):
    result = Result(f"d. query-string flood + login attack, {seconds:g} s")
    port = site.authoring_port  # /accounts/ goes to the authoring pool, as nginx routes it
    client_limit = int(site.env.get("ACCOUNTS_LOGIN_CLIENT_LIMIT", "5"))
    account_limit = int(site.env.get("ACCOUNTS_LOGIN_ACCOUNT_LIMIT", "50"))
    (owner, password), (second, second_password), (third, third_password) = site.owners
    behind_nat = _logs_in(port, owner, password, ATTACKER)
    second_known = _logs_in(port, second, second_password, "198.51.100.9")
    rows: list[list[str]] = []

    def row(case, outcomes: Counter, expected: str, ok: bool) -> None:
        rows.append(
            [
                case,
                str(sum(outcomes.values())),
                str(outcomes["wrong"]),
                str(outcomes["refused"]),
                str(outcomes["logged in"]),
                expected,
                status(ok),
            ]
        )
        if not ok:
            result.problems.append(f"{case}: {dict(outcomes)} (expected {expected})")

    def single(case: str, outcome: str, expected: str) -> None:
        row(case, Counter([outcome]), expected, outcome == expected)

    recorder = Recorder()
    before = site.redis.memory()
    sampler = MemorySampler(site.redis)
    crowd = Readers(site.port, recorder, site.cached, [], readers, flood=True)
    began = time.monotonic()
    sampler.start()
    crowd.start()
    try:
        time.sleep(min(3.0, seconds / 4))  # the flood is under way
        outcomes, right = _attack(port, owner, password, ATTACKER)
        row(
            f"attacker at {ATTACKER}: {WRONG} wrong passwords",
            outcomes,
            f"≤ {client_limit} checked",
            _held(outcomes, client_limit),
        )
        single("attacker: then the right password", right, "refused")
        elsewhere = Browser(port, OWNER_ELSEWHERE)
        outcome = elsewhere.login(owner, password)
        elsewhere.close()
        single(f"owner at {OWNER_ELSEWHERE}, meanwhile", outcome, "logged in")
        outcome = behind_nat.login(owner, password)
        single(f"owner's browser behind {ATTACKER}", outcome, "logged in")

        spread: Counter = Counter()
        for number in range(SPREAD):
            browser = Browser(port, f"192.0.2.{10 + number}")
            spread.update(browser.login(second, f"not-it-{n}") for n in range(client_limit))
            browser.close()
        row(
            f"{SPREAD} addresses × {client_limit} wrong passwords, one account",
            spread,
            f"≤ {account_limit} checked",
            _held(spread, account_limit),
        )
        newcomer = Browser(port, "192.0.2.200")
        outcome = newcomer.login(second, second_password)
        newcomer.close()
        single("then a browser new to it, right password", outcome, "refused")
        outcome = second_known.login(second, second_password)
        single("then the owner's known browser", outcome, "logged in")
        time.sleep(max(0.0, seconds - (time.monotonic() - began)))
    finally:
        crowd.stop()
        sampler.stop()
    elapsed = time.monotonic() - began
    after = site.redis.memory()

    answers = recorder.answers
    result.requests = len(answers)
    failed = server_errors(answers) + [a for a in answers if 400 <= a.status < 500]
    result.errors = len(failed)
    if failed:
        result.notes.append(describe(failed, began))
    latencies(answers, elapsed, result)
    junk = [a for a in answers if a.kind == "junk"]
    searches = [a for a in answers if a.kind == "search"]
    hits = sum(a.cache == "hit" for a in junk)
    result.notes.append(
        f"flood: {len(junk)} reads with a random query string ({hits} cache hits), "
        f"{len(searches)} random searches, {readers} readers"
    )
    grown = after["used_memory"] - before["used_memory"]
    evicted = after["evicted_keys"] - before["evicted_keys"]
    memory_ok = grown <= FLOOD_MEMORY_BOUND and evicted == 0
    if not memory_ok:
        result.problems.append(
            f"Redis grew by {grown / MB:.1f} MB (bound {FLOOD_MEMORY_BOUND / MB:.0f}) and "
            f"evicted {evicted} keys during the flood"
        )
    memory_rows = [
        [
            "used_memory",
            f"{before['used_memory'] / MB:.2f} MB",
            f"{after['used_memory'] / MB:.2f} MB",
            f"peak {sampler.peak / MB:.2f} MB, grew {grown / MB:+.2f} MB",
        ],
        ["keys", str(before["keys"]), str(after["keys"]), f"{after['keys'] - before['keys']:+d}"],
        ["evicted_keys", str(before["evicted_keys"]), str(after["evicted_keys"]), f"{evicted:+d}"],
        ["maxmemory", f"{before['maxmemory'] / MB:.0f} MB {before['policy']}", "", ""],
    ]

    # Redis over its cap, without eviction (the cap set well under what it holds, so that it
    # stays over however its buffers come and go): every write it is sent fails, as when a
    # flood filled it. The limits must hold.
    cap = max(MB, site.redis.memory()["used_memory"] - 4 * MB)
    site.redis.configure(maxmemory_policy="noeviction", maxmemory=str(cap))
    try:
        full = _redis_refuses_writes(site.redis)
        outcomes, right = _attack(port, third, third_password, "203.0.113.77")
        elsewhere = Browser(port, "198.51.100.8")
        owner_outcome = elsewhere.login(third, third_password)
        elsewhere.close()
        pages = _read_a_few(site.port, site.cached)
        full = full and _redis_refuses_writes(site.redis)  # all along
    finally:
        site.redis.configure(maxmemory=str(before["maxmemory"]), maxmemory_policy=before["policy"])
    row(
        f"Redis full, noeviction ({'writes refused' if full else 'WRITES STILL ACCEPTED'}): "
        f"{WRONG} wrong passwords",
        outcomes,
        f"≤ {client_limit} checked",
        full and _held(outcomes, client_limit),
    )
    single("Redis full: then the right password", right, "refused")
    single("Redis full: the owner from elsewhere", owner_outcome, "logged in")
    if pages != {200}:
        result.problems.append(f"with Redis full, pages answered {sorted(pages)}")
    result.notes.append(f"with Redis full (noeviction): pages answered {sorted(pages)}")

    result.tables.append(
        (
            "d. login rate limits under the flood (checked = the password was compared)",
            ["case", "attempts", "checked", "refused", "logged in", "expected", "status"],
            rows,
        )
    )
    result.tables.append(
        (
            "d. Redis over the flood",
            ["", "before", "after", ""],
            memory_rows,
        )
    )
    return result


def _redis_refuses_writes(redis) -> bool:
    from redis.exceptions import OutOfMemoryError

    try:
        redis.client().set("reliability:probe", "x" * MB, ex=60)
    except OutOfMemoryError:  # "OOM command not allowed when used memory > 'maxmemory'"
        return True
    redis.client().delete("reliability:probe")
    return False


def _read_a_few(port: int, cached: list[str]) -> set[int]:
    """Statuses of each cached page and a search, read once (Redis refusing writes)."""
    from traffic import Connection

    conn = Connection(port)
    try:
        paths = [*cached, f"/search/?q=full-{time.monotonic_ns()}"]
        return {conn.request("GET", path)[0] for path in paths}
    finally:
        conn.close()


# --- e. Writing together: co-authors typing into shared notes across two daphne servers ------

LIVE_P95_GOAL_MS = 200.0
# Each co-author of a note types one digit of its own (the notes' texts have none), so every
# character can be counted back wherever the note's text ends up.
LIVE_DIGITS = "123456789"
LIVE_SEED = "Written together, live.\n"
# A human typist: 5 to 10 characters a second, each at a random place in the text.
KEYSTROKE_GAP_S = (0.1, 0.2)
LIVE_SETTLE_S = 15.0
LIVE_SAVE_WAIT_S = 40.0


@dataclass
class Keystrokes:
    """Every character typed (by editor client id and clock) with when it was typed, and when
    it reached each other editor of its note and its "stored" acknowledgement."""

    typed_at: dict[tuple[int, int], float] = field(default_factory=dict)
    arrivals: Counter = field(default_factory=Counter)
    propagation: list[float] = field(default_factory=list)
    acknowledgement: list[float] = field(default_factory=list)

    def arrived(self, client: int, first: int, end: int, when: float) -> None:
        for clock in range(first, end):
            typed = self.typed_at.get((client, clock))
            if typed is not None:
                self.arrivals[client, clock] += 1
                self.propagation.append(when - typed)

    def acknowledged_by(self, client: int):
        def acknowledged(first: int, end: int, when: float) -> None:
            for clock in range(first, end):
                typed = self.typed_at.get((client, clock))
                if typed is not None:
                    self.acknowledgement.append(when - typed)

        return acknowledged


# Close codes after which WebsocketProvider's page stops reconnecting
# (docs/architecture.md#writing-together, "The browser").
FINAL_CLOSE_CODES = {4401, 4403, 4413}
# y-websocket's reconnect back-off: 100 ms doubling, at most 2.5 s (maxBackoffTime).
BACKOFF_S = (0.1, 2.5)


@dataclass
class CoAuthor:
    note: int
    digit: str
    server: str
    editor: object  # live_editor.LiveEditor
    typed: int = 0
    typed_offline: int = 0  # kept in the editor's document, sent on reconnecting
    closes: list = field(default_factory=list)  # close codes seen, in order
    gave_up: bool = False


def _percentile(ordered: list[float], share: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


async def _type(author: CoAuthor, keystrokes: Keystrokes, stop_at: float, rng) -> None:
    """Keystrokes at a human rate; while the socket is down they go on into the document."""
    editor = author.editor
    while True:
        await asyncio.sleep(rng.uniform(*KEYSTROKE_GAP_S))
        if time.monotonic() >= stop_at:
            return
        typed = time.monotonic()
        clock = editor.clock
        # Stamped before the insert: the update leaves inside it.
        keystrokes.typed_at[editor.doc.client_id, clock] = typed
        editor.insert(rng.randint(0, len(editor.text)), author.digit)
        author.typed += 1
        author.typed_offline += not editor.connected


async def _stay_connected(author: CoAuthor, stopping: asyncio.Event) -> None:
    """Reconnect after a close, as the browser's provider does (with its back-off), except
    after the close codes that say reconnecting cannot help."""
    from live_editor import LiveClosed

    editor = author.editor
    failures = 0
    while not stopping.is_set():
        if editor.connected:
            closed = asyncio.ensure_future(editor.closed(timeout=3600))
            stop = asyncio.ensure_future(stopping.wait())
            await asyncio.wait({closed, stop}, return_when=asyncio.FIRST_COMPLETED)
            closed.cancel()
            stop.cancel()
            if stopping.is_set():
                return
            author.closes.append(editor.close_code)
        if editor.close_code in FINAL_CLOSE_CODES:
            author.gave_up = True
            return
        await asyncio.sleep(min(BACKOFF_S[1], BACKOFF_S[0] * 2**failures))
        try:
            await editor.connect(timeout=10)
            failures = 0
        except (LiveClosed, TimeoutError):
            failures += 1


def _missing(expected: Counter, text: str) -> Counter:
    """Characters of `expected` (digit -> count typed) that `text` lacks, by digit."""
    found = Counter(character for character in text if character in LIVE_DIGITS)
    return Counter({digit: max(0, count - found[digit]) for digit, count in expected.items()})


async def _co_author_session(site, seconds: float, result: Result, keystrokes: Keystrokes):
    from live_editor import LiveEditor, merged_text

    rng = random.Random(21)  # noqa: S311 - typing positions, not secrets
    setup = site.live
    authors: list[CoAuthor] = []
    for number, (_username, cookie, note) in enumerate(setup["co_authors"]):
        server = site.daphnes[number % len(site.daphnes)]
        editor = LiveEditor(f"{server.url}/live/notes/{note}/", cookie, server.base)
        editor.arrived = keystrokes.arrived
        editor.acknowledged = keystrokes.acknowledged_by(editor.doc.client_id)
        digit = LIVE_DIGITS[sum(1 for a in authors if a.note == note)]
        authors.append(CoAuthor(note, digit, f"daphne {number % len(site.daphnes) + 1}", editor))
    opened = await asyncio.gather(
        *(author.editor.connect(timeout=30) for author in authors), return_exceptions=True
    )
    failed = [error for error in opened if isinstance(error, BaseException)]
    if failed:  # those editors connect again with the others' reconnections below
        result.problems.append(f"{len(failed)} editors could not connect at first: {failed[0]!r}")
    seeded = [a for a in authors if a.editor.connected and a.editor.text != LIVE_SEED]
    if seeded:
        result.problems.append(
            f"{len(seeded)} editors did not start from the note's text: {seeded[0].editor.text!r}"
        )

    began = time.monotonic()
    stop_at = began + seconds
    stopping = asyncio.Event()
    connections = [asyncio.ensure_future(_stay_connected(author, stopping)) for author in authors]
    await asyncio.gather(*(_type(author, keystrokes, stop_at, rng) for author in authors))
    typing_seconds = time.monotonic() - began

    # Everyone back on line (a reconnect sends what was typed offline), every keystroke
    # acknowledged ("stored"), then every editor holding every character.
    deadline = time.monotonic() + LIVE_SETTLE_S
    while time.monotonic() < deadline and not all(a.editor.connected or a.gave_up for a in authors):
        await asyncio.sleep(0.1)
    stopping.set()
    await asyncio.gather(*connections)
    await asyncio.gather(*(author.editor.stored(timeout=LIVE_SETTLE_S) for author in authors))
    expected: dict[int, Counter] = {note: Counter() for note in setup["notes"]}
    for author in authors:
        expected[author.note][author.digit] += author.typed
    deadline = time.monotonic() + LIVE_SETTLE_S
    while time.monotonic() < deadline and any(
        _missing(expected[a.note], a.editor.text).total() for a in authors
    ):
        await asyncio.sleep(0.1)
    unacknowledged = sum(max(0, a.editor.clock - a.editor.stored_clock) for a in authors)
    closes = [(a.server, code) for a in authors for code in a.closes]
    errors = [error for a in authors for error in a.editor.errors]
    in_editors = {note: Counter() for note in expected}
    for author in authors:
        in_editors[author.note] |= _missing(expected[author.note], author.editor.text)
    texts = {a.note: a.editor.text for a in authors}
    differ = sum(1 for a in authors if a.editor.text != texts[a.note])
    saved_messages = sum(len(a.editor.saved) for a in authors)

    # The last editor of a note leaving (on each server) makes the final merged save.
    await asyncio.gather(*(author.editor.close() for author in authors))
    deadline = time.monotonic() + LIVE_SAVE_WAIT_S
    while True:
        documents = site.live_documents(setup["notes"])
        saved = {int(n): d["working"] for n, d in documents.items()}
        if all(saved[n] == texts[n] for n in expected) or time.monotonic() > deadline:
            break
        await asyncio.sleep(1.0)
    waited_for_save = time.monotonic() - (deadline - LIVE_SAVE_WAIT_S)

    # Lost: typed, and missing from an editor, the stored document (every update in PostgreSQL,
    # merged), the note's saved text (the working copy, or a draft's row) or its newest revision.
    lost = {"anywhere": 0, "editors": 0, "stored": 0, "working": 0, "revision": 0}
    for note, wanted in expected.items():
        document = documents[str(note)]
        stored = merged_text([base64.b64decode(row) for row in document["updates"]])
        per_place = {
            "editors": in_editors[note],
            "stored": _missing(wanted, stored),
            "working": _missing(wanted, document["working"]),
            "revision": _missing(wanted, document["revision"]),
        }
        anywhere = Counter()
        for place, missing in per_place.items():
            lost[place] += missing.total()
            anywhere |= missing  # the larger count per digit
        lost["anywhere"] += anywhere.total()
        if document["working"] != texts[note]:
            result.problems.append(
                f"note {note}: the saved text is not the editors' text "
                f"({len(document['working'])} and {len(texts[note])} characters)"
            )
    return {
        "authors": authors,
        "typing_seconds": typing_seconds,
        "unacknowledged": unacknowledged,
        "closes": closes,
        "gave_up": sum(a.gave_up for a in authors),
        "offline": sum(a.typed_offline for a in authors),
        "errors": errors,
        "lost": lost,
        "differ": differ,
        "saved_messages": saved_messages,
        "waited_for_save": waited_for_save,
        "documents": documents,
    }


def live_editing(site, seconds: float, notes: int = 4, per_note: int = 5) -> Result:
    """e. `notes` × `per_note` co-authors, each on one note, split over two daphne servers
    that share Redis (the channel layer) and PostgreSQL, type for `seconds` at a human rate."""
    co_authors = notes * per_note
    result = Result(f"e. {co_authors} co-authors on {notes} notes, 2 daphne, {seconds:g} s")
    site.start_live(notes, per_note, LIVE_SEED)
    keystrokes = Keystrokes()
    own_cpu = time.process_time()
    try:
        session = asyncio.run(_co_author_session(site, seconds, result, keystrokes))
    finally:
        site.stop_live()
    own_cpu = time.process_time() - own_cpu
    authors = session["authors"]
    typed = sum(author.typed for author in authors)
    elapsed = session["typing_seconds"]
    peers = per_note - 1
    propagation = sorted(keystrokes.propagation)
    acknowledgement = sorted(keystrokes.acknowledgement)
    not_delivered = sum(max(0, peers - keystrokes.arrivals[key]) for key in keystrokes.typed_at)
    lost = session["lost"]
    result.requests = typed
    result.rps = typed / elapsed if elapsed else None
    result.errors = len(session["errors"]) + len(session["closes"])
    result.lost_writes = lost["anywhere"]
    if propagation:
        result.p50_ms = statistics.median(propagation) * 1000
        result.p99_ms = _percentile(propagation, 0.99) * 1000
    p95 = _percentile(propagation, 0.95) * 1000 if propagation else None
    if p95 is None or p95 >= LIVE_P95_GOAL_MS:
        result.problems.append(f"propagation p95 {p95} ms, the goal is < {LIVE_P95_GOAL_MS:g} ms")
    if session["errors"] or session["closes"]:
        closes = Counter(session["closes"])
        result.notes.append(
            "sockets closed by the server or dropped (server, code): "
            + ", ".join(f"{count}× {key}" for key, count in closes.most_common())
            + f"; error messages: {session['errors'][:5]}"
        )
    if session["unacknowledged"]:
        result.problems.append(f"{session['unacknowledged']} keystrokes never acknowledged")
    if not_delivered:
        result.problems.append(f"{not_delivered} deliveries to co-authors never happened live")
    if session["differ"]:
        result.problems.append(f"{session['differ']} editors ended with another text")
    if session["gave_up"]:
        result.problems.append(f"{session['gave_up']} editors were closed for good")
    if session["offline"]:
        result.notes.append(
            f"{session['offline']} keystrokes typed while the editor's socket was down (sent "
            "on reconnecting)"
        )

    def ms(ordered: list[float], share: float) -> str:
        return f"{_percentile(ordered, share) * 1000:.0f}" if ordered else "—"

    result.tables.append(
        (
            "e. writing together: keystrokes, propagation to the co-authors of the note (either "
            "server), acknowledgements, lost characters",
            ["keystrokes", "updates/s", "deliveries", "p50 ms", "p95 ms", "p99 ms", "max ms",
             "stored p95 ms", "unacked", "lost chars", "in editors", "stored doc",
             "working copy", "revision", "status"],
            [[
                f"{typed:,}",
                f"{result.rps:.1f}" if result.rps else "—",
                f"{len(propagation):,}/{typed * peers:,}",
                ms(propagation, 0.5), ms(propagation, 0.95), ms(propagation, 0.99),
                ms(propagation, 1.0), ms(acknowledgement, 0.95),
                str(session["unacknowledged"]), str(lost["anywhere"]),
                str(lost["editors"]), str(lost["stored"]), str(lost["working"]),
                str(lost["revision"]), status(result.ok),
            ]],
        )
    )  # fmt: skip
    by_server = Counter(author.server for author in authors)
    result.notes.append(
        f"{len(authors)} co-authors ({per_note} per note, split {dict(by_server)}) typed "
        f"{typed:,} characters in {elapsed:.1f} s at 5–10 a second each; "
        f"{session['saved_messages']} 'saved' messages received; the final merged saves were "
        f"in the database {session['waited_for_save']:.1f} s after the editors left"
    )
    documents = session["documents"]
    published = {row[0] for row in site.live["published"]}
    result.notes.append(
        "notes "
        + ", ".join(
            f"{n} ({'published' if n in published else 'draft'})" for n in site.live["notes"]
        )  # fmt: skip
        + "; stored updates per note: "
        + ", ".join(f"{n}: {len(d['updates'])} rows" for n, d in sorted(documents.items()))
        + "; revisions per note: "
        + ", ".join(f"{n}: {d['revisions']}" for n, d in sorted(documents.items()))
    )
    result.notes.append(
        f"load generator CPU {own_cpu:.1f} s over {elapsed:.1f} s (one asyncio loop, "
        f"{len(authors)} sockets), on {os.cpu_count()} cores shared with both servers"
    )
    return result


# --- g. An @string bomb uploaded through the editor --------------------------------------------

# Macros that each double the last: about 750 bytes that once spelled three titles of 33.5 M
# characters (the upload's worker grew by 442 MB). The parse refuses it at the first @string
# past the bound for one value.
BOMB_LEVELS = 24
# What the upload may cost the authoring worker that reads it, and how long it may take.
BOMB_RSS_BOUND = 64 * 1024 * 1024
BOMB_SECONDS_BOUND = 10.0


def string_bomb(levels: int = BOMB_LEVELS, titles: int = 3) -> bytes:
    lines = ['@string{ a0 = "xx" }']
    lines += [f"@string{{ a{k} = a{k - 1} # a{k - 1} }}" for k in range(1, levels + 1)]
    lines += [f"@misc{{ bomb{i},\n  title = a{levels}\n}}" for i in range(titles)]
    return ("\n".join(lines) + "\n").encode()


def _children(parent: int) -> list[int]:
    """The processes whose parent is `parent` (a gunicorn master's workers)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                # The command may hold spaces and parentheses: the fields after its last ")".
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            found.append(int(entry))
    return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status_file:
            for line in status_file:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class RssSampler:
    """The largest growth of any of `pids`' resident memory over its own starting size,
    sampled every 50 ms while running."""

    def __init__(self, pids: list[int]):
        self.start_rss = {pid: _rss(pid) for pid in pids}
        self.growth = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stopping.wait(0.05):
            for pid, start in self.start_rss.items():
                self.growth = max(self.growth, _rss(pid) - start)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=5)


def _multipart(fields: dict[str, str], name: str, filename: str, content: bytes):
    boundary = f"----reliability{random.getrandbits(64):016x}"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
        for key, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"'
        "\r\nContent-Type: application/x-bibtex\r\n\r\n".encode()
        + content
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def string_bomb_upload(site, readers: int = 20, before: float = 3, after: float = 3) -> Result:
    """The bomb uploaded through /write/bibliographies/ to the authoring pool while readers
    read the public pool: refused (400, the line of the @string) within BOMB_SECONDS_BOUND, the
    authoring workers' RSS grows by less than BOMB_RSS_BOUND, nothing is stored, and no read
    fails meanwhile."""
    result = Result("g. @string bomb uploaded in the editor")
    recorder = Recorder()
    username, password = site.accounts[0]
    author = Author(site.authoring_port, recorder, username, password, reader_port=site.port)
    author.login()
    token = author._csrf_form("/write/bibliographies/")
    body, content_type = _multipart(
        {"csrfmiddlewaretoken": token, "name": "bomb"}, "upload", "bomb.bib", string_bomb()
    )
    authoring = site.authoring or site.server
    sampler = RssSampler(_children(authoring.process.pid))
    crowd = Readers(site.port, recorder, site.cached, site.uncached, readers)
    began = time.monotonic()
    crowd.start()
    sampler.start()
    try:
        time.sleep(before)
        sent = time.monotonic()
        status_code, _, content = recorder.timed(
            author.conn, "upload", "POST", "/write/bibliographies/", body=body,
            headers={"Content-Type": content_type, "Referer": f"http://127.0.0.1:{author.port}/"},
        )  # fmt: skip
        answered = time.monotonic()
        time.sleep(after)
        # The author's own list of files, as the editor shows it: the bomb must not be there.
        listed = author.conn.request("GET", "/write/bibliographies/")
        stored = listed[0] != 200 or b"bib/bomb.bib" in listed[2]
    finally:
        sampler.stop()
        crowd.stop()
        author.conn.close()
    elapsed = time.monotonic() - began
    reads = [a for a in recorder.answers if a.kind in ("cached", "uncached")]
    failed = server_errors(reads) + [a for a in reads if 400 <= a.status < 500]
    result.requests = len(recorder.answers)
    result.errors = len(failed)
    if failed:
        result.notes.append(describe(failed, began))
    latencies(reads, elapsed, result)
    # The reads sent from a second before the upload to a second after its answer: a refusal
    # in well under a second leaves few reads inside the upload itself.
    during = [a for a in reads if sent - 1 <= a.at < answered + 1]
    text = content.decode("utf-8", "replace")
    refused = status_code == 400 and "reading stopped here" in text and "expands to more" in text
    line = re.search(r"Line (\d+): reading stopped here", text)
    result.notes.append(
        f"upload of {len(string_bomb())} bytes answered {status_code} in "
        f"{answered - sent:.2f} s ({'refused at line ' + line.group(1) if line else 'not refused'}"
        f"); authoring workers' RSS grew by at most {sampler.growth / 1_048_576:.1f} MB; "
        f"{len(during)} reads sent from 1 s before to 1 s after it, "
        f"{sum(1 for a in during if a.status == 200)} answered 200; stored: {stored}"
    )
    if not refused:
        result.problems.append(f"the bomb was not refused (status {status_code})")
    if answered - sent > BOMB_SECONDS_BOUND:
        result.problems.append(f"the upload took {answered - sent:.1f} s")
    if sampler.growth > BOMB_RSS_BOUND:
        result.problems.append(f"a worker grew by {sampler.growth / 1_048_576:.0f} MB")
    if stored:
        result.problems.append("bib/bomb.bib was stored (or the list did not answer)")
    if not during or any(a.status != 200 for a in during):
        result.problems.append("public pages did not all answer 200 around the upload")
    return result
