"""Two gunicorn processes behind one PostgreSQL and one Redis serve another process's write at
once when pages follow the generation, and within the staleness bound when they follow their
dependencies (never an older page after that).

The servers, the migration and every write run as separate processes against a database of
their own (created and dropped here), so a write really commits in another process while both
servers hold the old pages in the shared cache. The test process itself never touches a
database, so it needs no django_db mark. The servers run with DEBUG=1 only to spare the
18-second collectstatic that the manifest storage needs with DEBUG off; the page cache does
not look at DEBUG.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings

from reliability.servers import terminated

ROOT = Path(__file__).resolve().parents[2]
REDIS_DB = 12
CYCLES = 5

_WRITE = """
import json
from hugosite.reading import NoteSource
from hugosite.loading import note_import
for item in json.loads({payload!r}):
    note, outcome = note_import(source=NoteSource(path=item["slug"] + ".md", **item))
    print(note.slug, outcome)
"""


def _note(slug: str, title: str, weight: int = 0) -> dict:
    return {
        "slug": slug,
        "title": title,
        "body": f"The body of {slug}.\n",
        "show_title": True,
        "weight": weight,
        "tags": ["coherence"],
    }


@pytest.fixture
def services():
    """PostgreSQL server settings and REDIS_URL, or a skip when the suite runs without them."""
    database = settings.DATABASES["default"]
    if database["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("the two-process test needs the test database on PostgreSQL")
    if not os.environ.get("REDIS_URL"):
        pytest.skip("the two-process test needs REDIS_URL (one cache shared by both servers)")
    return database, os.environ["REDIS_URL"]


def _admin(database: dict, sql: str) -> None:
    import psycopg

    with psycopg.connect(
        dbname="postgres",
        user=database.get("USER") or None,
        password=database.get("PASSWORD") or None,
        host=database.get("HOST") or None,
        port=database.get("PORT") or None,
        autocommit=True,
        connect_timeout=5,
    ) as connection:
        connection.execute(sql)


def _database_url(database: dict, name: str) -> str:
    user = urllib.parse.quote(database.get("USER") or "")
    password = urllib.parse.quote(database.get("PASSWORD") or "")
    credentials = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = database.get("HOST") or "127.0.0.1"
    port = database.get("PORT") or 5432
    return f"postgres://{credentials}{host}:{port}/{name}"


def _manage(env: dict, *args: str, timeout: float = 60) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _write(env: dict, *notes: dict) -> None:
    """Import notes in a new process: its transaction has committed when this returns."""
    _manage(env, "shell", "-c", _WRITE.format(payload=json.dumps(notes)), timeout=30)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(base: str, path: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(base + path, timeout=10) as response:  # noqa: S310
            return response.status, response.headers.get("X-Cache", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("X-Cache", ""), error.read().decode()


def _start(env: dict, log: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    command = [
        *(sys.executable, "-m", "gunicorn", "scidraft.wsgi"),
        *("-k", "gthread", "--workers", "1", "--threads", "2", "-b", f"127.0.0.1:{port}"),
    ]
    env = {**env, "GUNICORN_BIND": f"127.0.0.1:{port}", "GUNICORN_MAX_REQUESTS": "0"}
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
    return process, f"http://127.0.0.1:{port}"


def _wait(process: subprocess.Popen, base: str, log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-3000:]
        try:
            if _get(base, "/robots.txt")[0] < 500:
                return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"gunicorn at {base} did not answer within 30 s: {log.read_text()[-3000:]}")


def _cached(base: str, path: str, *expected: str) -> str:
    """Request until an answer comes from the cache (the second, unless the page was stale and
    is being rendered again in the background: within 10 s); it must contain `expected`."""
    _get(base, path)
    deadline = time.monotonic() + 10
    status, cache, html = _get(base, path)
    while cache == "stale" and time.monotonic() < deadline:
        time.sleep(0.1)
        status, cache, html = _get(base, path)
    assert (status, cache) == (200, "hit"), (base, path, status, cache)
    for text in expected:
        assert text in html, (base, path, text)
    return html


@contextmanager
def own_site(database: dict, redis_url: str, label: str, redis_db: int, **extra: str):
    """The environment of manage.py and gunicorn for a site of its own: a PostgreSQL database
    (created here, dropped afterwards) and a key prefix in Redis database `redis_db` (its keys
    deleted afterwards)."""
    name = f"scidraft_{label}_{os.getpid()}_{secrets.token_hex(3)}"
    prefix = f"{label}-{secrets.token_hex(4)}"
    parts = urllib.parse.urlsplit(redis_url)
    redis_url = urllib.parse.urlunsplit(parts._replace(path=f"/{redis_db}"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "scidraft.settings",
        "DEBUG": "1",
        "DATABASE_URL": _database_url(database, name),
        "REDIS_URL": redis_url,
        "CACHE_KEY_PREFIX": prefix,
        "LOG_LEVEL": "WARNING",
        **extra,
    }
    _admin(database, f'CREATE DATABASE "{name}"')
    try:
        yield env
    finally:
        _admin(database, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        import redis

        client = redis.Redis.from_url(redis_url, socket_timeout=5)
        keys = list(client.scan_iter(f"{prefix}:*"))
        if keys:
            client.delete(*keys)


def served_fresh(base: str, path: str, texts, within: float) -> tuple[str, str]:
    """Read `path` until it shows every one of `texts`, for at most `within` seconds (0: one
    read); the page cache's states seen on the way, the last page's HTML."""
    deadline, states = time.monotonic() + within, []
    while True:
        status, cache, html = _get(base, path)
        assert status == 200, (base, path, status)
        states.append(cache)
        if all(text in html for text in texts) or time.monotonic() >= deadline:
            return ",".join(states), html
        time.sleep(0.1)


@pytest.mark.slow
def test_write_in_a_third_process_is_served_at_once_by_both(services, tmp_path):
    """Pages following the generation: a publish and an edit committed by another process
    show at once on both servers (their readers wait for the renders)."""
    database, redis_url = services
    with own_site(
        database, redis_url, "twoproc", REDIS_DB, SCIDRAFT_PAGE_INVALIDATION="generation"
    ) as env:
        _write_seen_by_both(env, tmp_path, within=0)


@pytest.mark.slow
def test_write_in_a_third_process_is_served_within_the_bound_by_both(services, tmp_path):
    """Pages invalidated by dependency: after another process's publish and edit, both
    servers answer at once (the stale page while one of them renders it again) and serve the
    new pages within SCIDRAFT_PAGE_STALE_MAX_SECONDS."""
    database, redis_url = services
    with own_site(
        database, redis_url, "twoproc", REDIS_DB, SCIDRAFT_PAGE_INVALIDATION="dependencies"
    ) as env:
        _write_seen_by_both(env, tmp_path, within=10)


def _write_seen_by_both(env: dict, tmp_path: Path, within: float) -> None:
    servers: list[subprocess.Popen] = []
    try:
        _manage(env, "migrate", "--noinput")
        _write(env, _note("alpha", "Alpha original", weight=1), _note("beta", "Beta note"))
        bases = []
        for label in ("a", "b"):
            process, base = _start(env, tmp_path / f"gunicorn-{label}.log")
            servers.append(process)
            bases.append(base)
        for process, base, label in zip(servers, bases, "ab", strict=True):
            _wait(process, base, tmp_path / f"gunicorn-{label}.log")
        a, b = bases

        title = "Alpha original"
        fresh: list[str] = []
        for cycle in range(1, CYCLES + 1):
            # Both servers hold the current pages in the shared cache.
            for base in (a, b):
                _cached(base, "/", title, *fresh)
            _cached(b, "/notes/alpha/", title)

            token = secrets.token_hex(4)
            title = f"Alpha edit {cycle} {token}"
            fresh.append(f"Fresh note {cycle} {token}")
            _write(env, _note(f"fresh-{cycle}", fresh[-1]), _note("alpha", title, weight=1))

            for base, path in ((a, "/"), (b, "/"), (b, "/notes/alpha/"), (a, "/notes/alpha/")):
                shown = [title, *fresh] if path == "/" else [title]
                cache, html = served_fresh(base, path, shown, within)
                for expected in shown:
                    assert expected in html, f"stale {path} from {base}, cycle {cycle} ({cache})"
            # Still cached after the write: the servers did not just stop caching.
            for base in (a, b):
                _cached(base, "/", title, *fresh)
    finally:
        for process in servers:
            terminated(process)
