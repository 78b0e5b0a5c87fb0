"""`make reliability`: the fault and load scenarios against the running system.

It starts its own redis-server (port 6391) and PostgreSQL cluster (initdb, port 5491) in a
temporary folder, so that it can stop and start them without touching the machine's services;
migrates, seeds the demo site and collects static files with the production settings (DEBUG
off); starts gunicorn (gunicorn.conf.py) on 127.0.0.1, ports 8350-8359, in the two pools that
deploy/nginx.conf routes to: the public pool (2 workers × 8 threads) that readers reach, and
the authoring pool (1 worker × 4 threads) for the editor, accounts and admin paths, so that a
crowd of readers never queues the authors' saves; then runs the scenarios (outages.py: a
and b, load.py: c, flood.py: d, writing_together.py: e, live_bloat.py: f, string_bomb.py: g)
and prints one table: scenario, requests, errors, lost writes, stale reads, and the readers'
request rate and latency (measured by the Python load generator on the same two cores as the
server: a floor, not a benchmark).

RELIABILITY_SECONDS (default 60) sets the length of the load scenario;
RELIABILITY_AUTHORING_WORKERS (default 1) the authoring pool's workers, 0 sending the authors
to the public pool with the readers (a site without the proxy's routing);
RELIABILITY_PUBLIC_NICENESS (default 6) the public pool's niceness, the CPU weight that
docker-compose.yml gives it; RELIABILITY_FLOOD_SECONDS (default 30) the length of the flood
scenario d, and RELIABILITY_REDIS_MAXMEMORY (default 256mb, docker-compose.yml's) Redis's cap,
with allkeys-lru as there; RELIABILITY_LOG_DIR, a folder to copy the servers' logs to before the
run's folder is removed. The app runs with ACCOUNTS_TRUSTED_PROXY_COUNT=1, as behind the
proxy, so that d's clients are told apart by X-Forwarded-For. Scenario e (writing together)
starts two daphne servers (ports 8360-8369, the compose service "live") on the same Redis and
PostgreSQL for its RELIABILITY_SECONDS; in the summary table its requests are keystrokes, its
req/s keystrokes a second and its latencies the propagation from one editor to another (its
own table adds p95, acknowledgements and the lost characters by place). Scenario f
(live_bloat.py) starts one more daphne, where a co-author floods one note with 200 KB updates
beside its texts for RELIABILITY_BLOAT_SECONDS (default 45) while another types on another
note. Scenario g uploads an @string bomb through the editor while readers read, and samples
the authoring workers' RSS. `run.py b` (or any of a, b, c, d, e, f, g) runs only the scenarios
named.
Everything is stopped and removed on the way out. The exit code is 1 when a scenario fails, 0
otherwise (also when a tool is missing: then it says SKIP).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(1, str(ROOT / "benchmarks"))  # the benchmarks' table printer

from _server import production_environment  # noqa: E402
from _table import status, table  # noqa: E402
from flood import flood  # noqa: E402
from live_bloat import live_bloat  # noqa: E402
from load import load  # noqa: E402
from outages import database_outage, redis_outage  # noqa: E402
from results import Result  # noqa: E402
from servers import (  # noqa: E402
    PG_BIN,
    REDIS_SERVER,
    VENV_BIN,
    Daphne,
    Gunicorn,
    PostgresCluster,
    RedisServer,
    port_free,
)
from string_bomb import string_bomb_upload  # noqa: E402
from traffic import Connection  # noqa: E402
from writing_together import live_editing  # noqa: E402

REDIS_PORT = 6391
POSTGRES_PORT = 5491
GUNICORN_PORTS = range(8350, 8360)
DAPHNE_PORTS = range(8360, 8370)
LIVE_SERVERS = 2
AUTHORS = 5
AUTHORING_WORKERS = int(os.environ.get("RELIABILITY_AUTHORING_WORKERS", "1"))
# docker-compose.yml gives the public pool a quarter of the default CPU weight (cpu_shares 256
# of 1024); nice 6 is that weight for a process (272 of 1024).
PUBLIC_NICENESS = int(os.environ.get("RELIABILITY_PUBLIC_NICENESS", "6"))
REDIS_MAXMEMORY = os.environ.get("RELIABILITY_REDIS_MAXMEMORY", "256mb")
OWNERS = 3  # accounts scenario d attacks
DASH = "—"
SEARCH_WORDS = ("theorem", "proof", "matrix", "error", "citation")
MARK = "RELIABILITY-JSON "

_SETUP = """
import json, secrets
from django.contrib.auth.models import Group, User
from notes.models import Note, Tag
accounts = []
group = Group.objects.get(name="Author")
for number in range({authors}):
    name, password = f"author{{number + 1}}", secrets.token_urlsafe(16)
    user = User.objects.create_user(name, f"{{name}}@example.org", password)
    user.groups.add(group)
    accounts.append([name, password])
owners = []
for number in range({owners}):
    name, password = f"owner{{number + 1}}", secrets.token_urlsafe(16)
    User.objects.create_user(name, f"{{name}}@example.org", password).groups.add(group)
    owners.append([name, password])
notes = list(Note.objects.published().order_by("-date").values_list("slug", flat=True)[:12])
tags = list(Tag.objects.public().order_by("slug").values_list("slug", flat=True)[:3])
found = {{"accounts": accounts, "owners": owners, "notes": notes, "tags": tags}}
print({mark!r} + json.dumps(found))
"""

# Scenario e's co-authors: accounts signed in (a session each, as a browser has after the login
# form), notes whose authors they are, half of them published (their merged saves go to the
# working copy) and half drafts (to the row).
_LIVE_SETUP = """
import json
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.test import Client
from notes.models import Note, NoteAuthor
from notes.services.editing import author_for_user, note_create, note_save
from notes.services.publishing import note_publish
group = Group.objects.get(name="Author")
co_authors, notes = [], []
for number in range({notes}):
    people = []
    for seat in range({per_note}):
        name = f"coauthor{{number * {per_note} + seat + 1}}"
        user = User.objects.create_user(name, f"{{name}}@example.org", None)
        user.groups.add(group)
        people.append(user)
    note = note_create(user=people[0], title=f"Written together {{number + 1}}")
    note = note_save(note_id=note.pk, user=people[0], base_version=note.version,
                     fields={{"body": {seed!r}}}).note
    if number % 2:
        note_publish(note_id=note.pk, user=people[0], base_version=note.version)
    for seat, user in enumerate(people[1:], start=1):
        NoteAuthor.objects.create(note=note, author=author_for_user(user), position=seat)
    notes.append(note.pk)
    for user in people:
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        co_authors.append([user.username, f"{{cookie.key}}={{cookie.value}}", note.pk])
published = list(Note.objects.filter(pk__in=notes, status="published").values_list("pk"))
print({mark!r} + json.dumps({{"co_authors": co_authors, "notes": notes, "published": published}}))
"""

# What the server has of each note at the end: its stored updates, its text as saved (the
# working copy of a published note, a draft's row) and its newest revision.
_LIVE_DOCUMENTS = """
import base64, json
from collaboration.models import DocumentUpdate
from notes.models import Note, NoteRevision
from notes.services.working import working_state
found = {{}}
for note in Note.objects.filter(pk__in={ids!r}):
    revisions = NoteRevision.objects.filter(note=note).order_by("-number")
    rows = DocumentUpdate.objects.filter(note=note).order_by("id").values_list("data", flat=True)
    found[str(note.pk)] = {{
        "updates": [base64.b64encode(bytes(data)).decode() for data in rows],
        "working": working_state(note)["body"],
        "revision": revisions[0].body,
        "revisions": revisions.count(),
    }}
print({mark!r} + json.dumps(found))
"""

_REVISIONS = """
import json
from notes.models import NoteRevision
table = {{}}
for note_id in {ids!r}:
    rows = NoteRevision.objects.filter(note_id=note_id).order_by("number")
    table[str(note_id)] = [[r.number, r.kind, r.body] for r in rows]
print({mark!r} + json.dumps(table))
"""


class Site:
    """The running system the scenarios act on, and what they need to know about it."""

    def __init__(self, work: Path):
        self.work = work
        self.redis = RedisServer(REDIS_PORT, work, maxmemory=REDIS_MAXMEMORY)
        self.postgres = PostgresCluster(POSTGRES_PORT, work)
        self.env: dict[str, str] = {}
        self.server: Gunicorn | None = None
        self.authoring: Gunicorn | None = None
        self.port = 0  # the public pool: readers
        self.authoring_port = 0  # the editor's paths (the public pool's, without a pool)
        self.accounts: list[list[str]] = []
        self.daphnes: list[Daphne] = []
        self.live: dict = {}  # scenario e's co-authors and notes (_LIVE_SETUP)
        self.owners: list[list[str]] = []
        self.cached: list[str] = []
        self.uncached: list[str] = []

    def shell(self, code: str) -> dict:
        done = subprocess.run(  # noqa: S603 - our interpreter and manage.py
            [sys.executable, str(ROOT / "manage.py"), "shell", "-c", code],
            cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=300, check=True,
        )  # fmt: skip
        for line in done.stdout.splitlines():
            if line.startswith(MARK):
                return json.loads(line[len(MARK) :])
        raise RuntimeError(f"manage.py shell printed no result: {done.stdout[-500:]}")

    def manage(self, *args: str) -> None:
        subprocess.run(  # noqa: S603 - our interpreter and manage.py
            [sys.executable, str(ROOT / "manage.py"), *args],
            cwd=ROOT, env=self.env, check=True, timeout=600, stdout=subprocess.DEVNULL,
        )  # fmt: skip

    def set_up(self) -> list[str]:
        lines = []
        began = time.monotonic()
        self.redis.start()
        self.postgres.init()
        self.postgres.start()
        database = self.postgres.create_database("scidraft_reliability")
        # The project's own STATIC_ROOT (git-ignored): collectstatic only redoes what changed.
        self.env = production_environment(
            database, self.redis.url, ROOT / "staticfiles", "reliability",
            DATABASE_CONNECT_TIMEOUT="2", MEDIA_ROOT=str(self.work / "media"),
            PYTHONUNBUFFERED="1", ACCOUNTS_TRUSTED_PROXY_COUNT="1",
            # Every acknowledged autosave is checked under its own revision number: none are
            # coalesced into their run's revision here.
            NOTE_AUTOSAVE_COALESCE_SECONDS="0",
        )  # fmt: skip
        self.manage("migrate", "--noinput")
        self.manage("seed_demo")
        self.manage("collectstatic", "--noinput")
        found = self.shell(_SETUP.format(authors=AUTHORS, owners=OWNERS, mark=MARK))
        self.accounts = found["accounts"]
        self.owners = found["owners"]
        notes, tags = found["notes"], found["tags"]
        self.cached = ["/", "/tags/", "/index.xml", "/page/2/"]
        self.cached += [f"/notes/{slug}/" for slug in notes[:8]]
        self.cached += [f"/tags/{slug}/" for slug in tags]
        # Searches for words of the demo, each made unique (readers._ReaderThreads): a query
        # string on any other page is answered with that page from the cache.
        self.uncached = [f"/search/?q={word}" for word in SEARCH_WORDS]
        ports = (port for port in GUNICORN_PORTS if port_free(port))
        self.port = next(ports)
        self.server = Gunicorn(
            self.env, self.port, self.work / "gunicorn.log", niceness=PUBLIC_NICENESS
        )
        pools = (
            f"gunicorn public pool (2 workers × 8 threads, nice {PUBLIC_NICENESS}, DEBUG off) "
            f"on 127.0.0.1:{self.port}"
        )
        if AUTHORING_WORKERS:
            self.authoring_port = next(ports)
            self.authoring = Gunicorn(
                self.env, self.authoring_port, self.work / "gunicorn-authoring.log",
                workers=AUTHORING_WORKERS, threads=4,
            )  # fmt: skip
            self.authoring.wait()
            pools += (
                f", authoring pool ({AUTHORING_WORKERS} worker(s) × 4 threads) on "
                f"127.0.0.1:{self.authoring_port}"
            )
        else:
            self.authoring_port = self.port
            pools += ", authors on the same pool (RELIABILITY_AUTHORING_WORKERS=0)"
        self.server.wait()
        self.warm()
        lines.append(
            f"setup in {time.monotonic() - began:.0f} s: redis-server on 127.0.0.1:{REDIS_PORT} "
            f"(maxmemory {REDIS_MAXMEMORY}, allkeys-lru), "
            f"PostgreSQL ({PG_BIN}) on 127.0.0.1:{POSTGRES_PORT}, {pools}; demo site seeded; "
            f"{AUTHORS} authors"
        )
        lines.append(
            f"readers ask for {len(self.cached)} cacheable pages and, one request in 10 (in "
            f"b: 5), a new search for one of {len(self.uncached)} words (a full render)"
        )
        return lines

    def warm(self) -> None:
        conn = Connection(self.port)
        try:
            for path in self.cached:
                for _ in range(2):
                    conn.request("GET", path)
        finally:
            conn.close()

    def start_live(self, notes: int, per_note: int, seed: str, servers: int = LIVE_SERVERS) -> None:
        """Co-authors and notes (scenarios e and f), and `servers` daphne processes (the
        compose service "live") sharing this run's Redis and PostgreSQL."""
        self.live = self.shell(
            _LIVE_SETUP.format(notes=notes, per_note=per_note, seed=seed, mark=MARK)
        )
        ports = [port for port in DAPHNE_PORTS if port_free(port)][:servers]
        first = len(self.daphnes) + 1
        started = [
            Daphne(self.env, port, self.work / f"daphne-{number}.log")
            for number, port in enumerate(ports, start=first)
        ]
        self.daphnes += started
        for daphne in started:
            daphne.wait()

    def stop_live(self) -> None:
        for daphne in self.daphnes:
            daphne.stop()

    def live_documents(self, note_ids: list[int]) -> dict:
        return self.shell(_LIVE_DOCUMENTS.format(ids=note_ids, mark=MARK))

    def revisions(self, note_ids: list[int]) -> dict:
        return self.shell(_REVISIONS.format(ids=note_ids, mark=MARK))

    def tear_down(self) -> None:
        for stop in (
            self.server.stop if self.server else None,
            self.authoring.stop if self.authoring else None,
            *(daphne.stop for daphne in self.daphnes),
            self.postgres.stop if self.postgres.running() else None,
            self.redis.stop,
        ):
            if stop is None:
                continue
            try:
                stop()
            except Exception:  # noqa: BLE001 - stop the others whatever happens
                traceback.print_exc()

    @property
    def servers(self) -> list[Gunicorn]:
        return [server for server in (self.server, self.authoring) if server is not None]

    def server_errors_logged(self) -> int:
        return sum(
            server.log.read_text(errors="replace").count("Internal Server Error")
            for server in self.servers
            if server.log.exists()
        )

    def daphne_exceptions_logged(self) -> Counter:
        """The exceptions daphne's logs end tracebacks with ("module.Error: message"), counted."""
        found: Counter = Counter()
        for daphne in self.daphnes:
            if not daphne.log.exists():
                continue
            lines = daphne.log.read_text(errors="replace").splitlines()
            inside = False
            for line in lines:
                if line.startswith("Traceback"):
                    inside = True
                elif inside and line and not line.startswith((" ", "\t", "During", "The above")):
                    found[line[:160]] += 1
                    inside = False
        return found


def _missing() -> str | None:
    if not Path(REDIS_SERVER).exists():
        return f"{REDIS_SERVER} is missing (Debian package redis-server)"
    if not (PG_BIN / "initdb").exists():
        return f"{PG_BIN / 'initdb'} is missing (Debian package postgresql)"
    if os.geteuid() == 0 and not shutil.which("runuser"):
        return "running as root needs runuser to start PostgreSQL as the postgres user"
    if not (VENV_BIN / "gunicorn").exists():
        return f"{VENV_BIN / 'gunicorn'} is missing (make setup)"
    busy = [port for port in (REDIS_PORT, POSTGRES_PORT) if not port_free(port)]
    if busy:
        return f"port(s) {busy} are in use on 127.0.0.1"
    if sum(port_free(port) for port in GUNICORN_PORTS) < 2:
        return "ports 8350-8359 are all in use but one"
    if sum(port_free(port) for port in DAPHNE_PORTS) < LIVE_SERVERS:
        return "ports 8360-8369 are all in use but one"
    if not (VENV_BIN / "daphne").exists():
        return f"{VENV_BIN / 'daphne'} is missing (make setup)"
    return None


def _number(value: float | None, digits: int = 0) -> str:
    return DASH if value is None else f"{value:,.{digits}f}"


def report(results: list[Result]) -> str:
    rows = [
        [
            result.name,
            f"{result.requests:,}",
            str(result.errors),
            str(result.lost_writes),
            str(result.stale_reads),
            _number(result.rps),
            _number(result.p50_ms, 1),
            _number(result.p99_ms, 1),
            status(result.ok),
        ]
        for result in results
    ]
    header = ["scenario", "requests", "errors", "lost writes", "stale reads", "req/s",
              "p50 ms", "p99 ms", "status"]  # fmt: skip
    return table(header, rows, {1, 2, 3, 4, 5, 6, 7})


def main(argv: list[str]) -> int:
    """`run.py [a] [b] [c]`: the scenarios named, or all of them."""
    chosen = {arg.strip(".").lower() for arg in argv}
    seconds = float(os.environ.get("RELIABILITY_SECONDS", "60"))
    flood_seconds = float(os.environ.get("RELIABILITY_FLOOD_SECONDS", "30"))
    bloat_seconds = float(os.environ.get("RELIABILITY_BLOAT_SECONDS", "45"))
    print("Reliability: faults and load against gunicorn, its own Redis and PostgreSQL")
    print(
        f"machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), "
        f"Python {platform.python_version()} ({platform.machine()})"
    )
    why = _missing()
    if why:
        print(f"SKIP: {why}.")
        return 0
    work = Path(tempfile.mkdtemp(prefix="scidraft-reliability-"))
    site = Site(work)
    results: list[Result] = []
    lines: list[str] = []
    try:
        lines += site.set_up()
        for name, scenario in (
            ("a. Redis stopped 10 s under load", lambda: redis_outage(site)),
            ("b. PostgreSQL stopped 10 s under load", lambda: database_outage(site)),
            (f"c. 200 readers + {AUTHORS} authors, {seconds:g} s", lambda: load(site, seconds)),
            (
                f"d. query-string flood + login attack, {flood_seconds:g} s",
                lambda: flood(site, flood_seconds),
            ),
            (
                f"e. 20 co-authors on 4 notes, 2 daphne, {seconds:g} s",
                lambda: live_editing(site, seconds),
            ),
            (
                f"f. live-document bloat on 1 daphne, {bloat_seconds:g} s",
                lambda: live_bloat(site, bloat_seconds),
            ),
            ("g. @string bomb uploaded in the editor", lambda: string_bomb_upload(site)),
        ):
            if chosen and name[0] not in chosen:
                continue
            print(f"running {name} …", flush=True)
            try:
                results.append(scenario())
            except Exception as error:  # noqa: BLE001 - report it and go on with the next
                traceback.print_exc()
                results.append(Result(name, problems=[f"crashed: {type(error).__name__}: {error}"]))
        logged = site.server_errors_logged()
        lines.append(f"gunicorn's log: {logged} 'Internal Server Error' records over the run")
        if site.daphnes:
            exceptions = site.daphne_exceptions_logged()
            lines.append(f"daphne's logs: {exceptions.total()} tracebacks over the run")
            lines += [f"  {count}× {line}" for line, count in exceptions.most_common(5)]
    except Exception:  # noqa: BLE001 - setup failed: say so, clean up, fail
        traceback.print_exc()
        results.append(Result("setup", problems=["setup failed (see above)"]))
    finally:
        site.tear_down()
        if os.environ.get("RELIABILITY_LOG_DIR"):
            kept = Path(os.environ["RELIABILITY_LOG_DIR"])
            kept.mkdir(parents=True, exist_ok=True)
            for log in work.glob("*.log"):
                shutil.copy(log, kept / log.name)
        shutil.rmtree(work, ignore_errors=True)

    print()
    for line in lines:
        print(line)
    print()
    print(report(results))
    print()
    for result in results:
        for title, header, rows in result.tables:
            print(title)
            print(table(header, rows))
            print()
    for result in results:
        for line in result.notes + [f"FAIL: {problem}" for problem in result.problems]:
            print(f"{result.name[:2]} {line}")
    failed = [result.name for result in results if not result.ok]
    print()
    print(f"FAIL: {', '.join(failed)}." if failed else "PASS: every scenario.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
