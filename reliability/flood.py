"""The query-string flood and the login attack (scenario d).

d. A flood of random query strings on cached pages and random searches (items 7
   and 8) under Redis capped as docker-compose.yml caps it (256mb, allkeys-lru), while an
   attacker tries 25 wrong passwords on an account, then its right one, and the account's
   owner logs in from elsewhere and from a browser behind the attacker's address; then
   guesses shared out over 12 addresses; then Redis full with noeviction and the attack again.
   Passes if no flood request fails, Redis grows by at most FLOOD_MEMORY_BOUND and evicts
   nothing, at most the limits' number of wrong passwords are checked, the right password is
   refused to the attacker, and the owner always logs in.

Each returns a Result (results.py) for run.py's table, and a table of its own.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

from _table import status
from readers import Readers
from results import MB, Result, describe, latencies, server_errors
from traffic import Browser, Recorder

# --- d. The query-string flood and the login attack -------------------------------------------

ATTACKER = "203.0.113.66"
OWNER_ELSEWHERE = "198.51.100.7"
WRONG = 25
SPREAD = 12  # addresses of the shared-out guesses, 5 wrong passwords each
# Redis may grow by this much over the flood (formulas of search excerpts, claims); a flood
# that made entries would add ~270 KB a request.
FLOOD_MEMORY_BOUND = 16 * 1024 * 1024


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
