"""How fast one gunicorn serves SciDraft pages next to a static file, and queries per page.

Standalone: `python benchmarks/serving.py`, or `make bench` for every benchmark. (Not named
http.py: a script's folder comes first on sys.path, so benchmarks/http.py would shadow the
standard library's `http` for every script in this folder.)

It creates a fresh PostgreSQL database and uses Redis database 9 (flushed before and after),
runs migrate, seed_demo and collectstatic with the production settings (DEBUG=0), and starts
one gunicorn (gthread, 1 worker, 4 threads) pinned to core 0. wrk, pinned to core 1, loads:
1. the cached heaviest demo note, 2. the cached feed, 3. a 304 revalidation, 4. an uncached
render of the same note (each request carries a session cookie, which the page cache never
answers; a query string no longer makes a render: the page cache drops parameters a page does
not read), 5. a whitenoise static file of the
same size as that note page. Then, in a child interpreter started with the same environment
(another benchmark may already have set Django up in this process), it counts queries per page
and times uncached feed renders at 10 / 1,000 / 10,000 notes seeded with bulk_create.

It reports and never gates: the exit code is 0 even when a target fails, so FAIL is printed
where a reader cannot miss it. Processes and the database are removed on the way out.
"""

from __future__ import annotations

import json
import os
import platform
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from _server import production_environment  # benchmarks/ is on sys.path: the script's folder
from _table import status, table

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

VENV_BIN = ROOT / ".venv" / "bin"
GUNICORN = VENV_BIN / "gunicorn" if (VENV_BIN / "gunicorn").exists() else None
PYTHON = sys.executable

REDIS_DB = 9
WARMUP_S = 3
RUN_S = 10
RUNS = 3
CONNECTIONS = 16
SIZES = (10, 1_000, 10_000)
FEED_RENDERS = 20
# Targets from the issue.
TARGET_RATIO = 0.9
TARGET_FEED_MS = 50.0
# Synthetic notes copy the published, tagged note whose stored HTML is nearest this size
# (copies of the heaviest note would make 10,000 rows of ~150 KB each).
SYNTHETIC_HTML_CHARS = 8_000

DASH = "—"
# A session cookie (of no session): the page cache never answers such a request, so the note
# is rendered every time, as for a reader the cache cannot serve.
UNCACHED = {"Cookie": "sessionid=benchmark-no-such-session"}


# --- Services --------------------------------------------------------------------------------


def _clear_page_caches() -> None:
    """Empty the shared cache, this process's copy of recent pages and its generation lease
    (an uncached render that reads the generation, whatever time the previous one took)."""
    from django.core.cache import cache

    from scidraft.site import dependencies
    from scidraft.site.caching import local_pages
    from scidraft.site.generation import lease

    cache.clear()
    local_pages.clear()
    lease.drop()
    dependencies.lease.drop()


def _postgres_admin_url() -> str:
    """The server to create the benchmark database on: DATABASE_URL's when it is PostgreSQL."""
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        return url
    return "postgres://postgres@127.0.0.1:5432/postgres"


def _with_database(url: str, name: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))


def _redis_url() -> str:
    base = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    parts = urllib.parse.urlsplit(base)
    return urllib.parse.urlunsplit(parts._replace(path=f"/{REDIS_DB}"))


def _admin(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(_with_database(url, "postgres"), autocommit=True, connect_timeout=5) as c:
        c.execute(sql)


def _flush_redis(url: str) -> None:
    import redis

    redis.Redis.from_url(url, socket_timeout=5).flushdb()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _pinned(core: int, command: list[str]) -> list[str]:
    taskset = shutil.which("taskset")
    if taskset and len(os.sched_getaffinity(0)) > core:
        return [taskset, "-c", str(core), *command]
    return command


def _manage(env: dict, *args: str, timeout: float = 600) -> None:
    subprocess.run(  # noqa: S603 - our interpreter, manage.py, fixed arguments
        [PYTHON, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=timeout,
        stdout=subprocess.DEVNULL,
    )


def _child(env: dict, mode: str, result: Path, *extra: str, timeout: float = 900) -> dict:
    """Run this file in a new interpreter (Django set up there with `env`); return its JSON."""
    subprocess.run(  # noqa: S603 - our interpreter and this file
        [PYTHON, str(Path(__file__).resolve()), "--child", mode, str(result), *extra],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=timeout,
        stdout=subprocess.DEVNULL,
    )
    return json.loads(result.read_text())


def _get(url: str, headers: dict | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers or {})  # noqa: S310 - loopback http
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


class Gunicorn:
    """One gunicorn on loopback, pinned to core 0; always stopped by stop()."""

    def __init__(self, env: dict, log: Path):
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.command = [
            str(GUNICORN),
            "scidraft.wsgi",
            "-k",
            "gthread",
            "--workers",
            "1",
            "--threads",
            "4",
            "-b",
            f"127.0.0.1:{self.port}",
        ]
        env = {
            **env,
            "WEB_CONCURRENCY": "1",
            "GUNICORN_THREADS": "4",
            "GUNICORN_BIND": f"127.0.0.1:{self.port}",
            # A worker recycled mid-run would measure its start-up, not serving.
            "GUNICORN_MAX_REQUESTS": "0",
        }
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(  # noqa: S603 - the venv's gunicorn
                _pinned(0, self.command), cwd=ROOT, env=env, stdout=out, stderr=out
            )

    def wait(self, path: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited ({self.process.returncode}); see {self.log}")
            try:
                status, _, _ = _get(self.base + path)
                if status < 500:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not answer within {timeout:g} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


# --- wrk -------------------------------------------------------------------------------------


def ensure_wrk() -> tuple[str | None, str]:
    """wrk's path, installing Debian's package if missing; (None, why) when it cannot."""
    found = shutil.which("wrk")
    if found:
        return found, ""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return None, "wrk is not installed and apt-get needs root"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-qq", "wrk"]
    for command in (install, ["apt-get", "update", "-qq"], install):
        if shutil.which("wrk"):
            break
        subprocess.run(command, env=env, capture_output=True, timeout=600)  # noqa: S603
    found = shutil.which("wrk")
    return (found, "") if found else (None, "`apt-get install -y -qq wrk` failed")


_UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(number) * _UNIT[unit]


def parse_wrk(output: str) -> dict:
    """requests/s, p50 and p99 in ms, and errors (non-2xx/3xx plus socket errors)."""
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1))
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1))
    errors = 0
    if match := re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output):
        errors += int(match.group(1))
    if match := re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    ):
        errors += sum(int(value) for value in match.groups())
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    return {"rps": rps, "p50": p50, "p99": p99, "errors": errors, "requests": requests}


def wrk(wrk_path: str, case: dict, seconds: int) -> dict:
    command = [wrk_path, "-t1", f"-c{CONNECTIONS}", f"-d{seconds}s", "--latency"]
    for name, value in case.get("headers", {}).items():
        command += ["-H", f"{name}: {value}"]
    command.append(case["url"])
    done = subprocess.run(  # noqa: S603 - wrk with fixed arguments
        _pinned(1, command), capture_output=True, text=True, timeout=seconds + 60, check=True
    )
    return parse_wrk(done.stdout)


# --- Child processes (Django) ----------------------------------------------------------------


def _django():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")
    import django

    django.setup()


def child_probe(result: Path, static_file: Path) -> None:
    """Render every published note page; write the heaviest one's HTML to `static_file`."""
    _django()
    from django.test import Client

    from notes.models import Note

    client = Client(HTTP_HOST="127.0.0.1")
    sizes = {}
    pages = {}
    for slug in Note.objects.published().values_list("slug", flat=True):
        response = client.get(f"/notes/{slug}/")
        if response.status_code == 200:
            sizes[slug] = len(response.content)
            pages[slug] = response.content
    heaviest = max(sizes, key=sizes.get)
    static_file.parent.mkdir(parents=True, exist_ok=True)
    static_file.write_bytes(pages[heaviest])
    result.write_text(json.dumps({"heaviest": heaviest, "sizes": sizes}))


def _trim(keep_total: int, heaviest: str, source: str) -> None:
    from notes.models import Note

    keep = [heaviest, source]
    keep += Note.objects.published().promotions().order_by("slug").values_list("slug", flat=True)
    others = Note.objects.published().regular().exclude(slug__in=keep).order_by("slug")
    keep += list(others.values_list("slug", flat=True)[: max(0, keep_total - len(keep))])
    Note.objects.exclude(slug__in=keep[:keep_total]).delete()


def _seed(count: int, start: int, source) -> float:
    """bulk_create `count` published copies of `source` (its render, authors and tags)."""
    import datetime as dt

    from django.db import transaction
    from django.utils import timezone

    from notes.models import Note, NoteAuthor

    began = time.perf_counter()
    skip = {"id", "slug", "title", "date", "created_at", "updated_at", "version"}
    template = {
        field.attname: getattr(source, field.attname)
        for field in Note._meta.concrete_fields
        if field.attname not in skip
    }
    authors = list(source.authorships.values_list("author_id", "position"))
    tags = list(source.tags.values_list("pk", flat=True))
    # Older than every demo note: the demo notes stay on feed page 1 at every size.
    oldest = Note.objects.order_by("date").values_list("date", flat=True).first() or timezone.now()
    Tagging = Note.tags.through
    with transaction.atomic():
        notes = Note.objects.bulk_create(
            (
                Note(
                    **template,
                    slug=f"synthetic-{number:05d}",
                    title=f"Synthetic note {number}",
                    date=oldest - dt.timedelta(minutes=number + 1),
                )
                for number in range(start, start + count)
            ),
            batch_size=500,
        )
        NoteAuthor.objects.bulk_create(
            (
                NoteAuthor(note_id=note.pk, author_id=author, position=position)
                for note in notes
                for author, position in authors
            ),
            batch_size=2_000,
        )
        Tagging.objects.bulk_create(
            (Tagging(note_id=note.pk, tag_id=tag) for note in notes for tag in tags),
            batch_size=2_000,
        )
    return time.perf_counter() - began


def child_queries(result: Path, heaviest: str) -> None:
    """Queries per page and uncached feed time at each size in SIZES."""
    _django()
    from django.db import connection
    from django.db.models.functions import Length
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from notes.models import Note

    candidates = (
        Note.objects.published()
        .regular()
        .filter(tags__isnull=False)
        .exclude(slug=heaviest)
        .distinct()
        .annotate(size=Length("rendered_html"))
        .values_list("slug", "size")
    )
    source_slug = min(candidates, key=lambda row: abs(row[1] - SYNTHETIC_HTML_CHARS))[0]
    _trim(SIZES[0], heaviest, source_slug)
    source = Note.objects.get(slug=source_slug)
    tag = source.tags.order_by("slug").first()
    pages = {"feed page 1": "/", "note page": f"/notes/{heaviest}/", "tag page": ""}
    pages["tag page"] = f"/tags/{tag.slug}/"

    client = Client(HTTP_HOST="127.0.0.1")
    report = {
        "source": source_slug,
        "source_chars": len(source.rendered_html),
        "tag": tag.slug,
        "pages": pages,
        "sizes": [],
    }
    seeded = Note.objects.count()
    for size in SIZES:
        seconds = _seed(size - seeded, seeded, source) if size > seeded else 0.0
        seeded = Note.objects.count()
        with connection.cursor() as cursor:
            # What autovacuum does after a bulk load: planner statistics for the new rows.
            cursor.execute("ANALYZE")
        queries, statuses = {}, {}
        for name, path in pages.items():
            client.get(path)  # first read: connections, template loading
            _clear_page_caches()
            with CaptureQueriesContext(connection) as captured:
                response = client.get(path)
            queries[name] = len(captured.captured_queries)
            statuses[name] = response.status_code
        times = []
        for _ in range(FEED_RENDERS):
            _clear_page_caches()
            began = time.perf_counter()
            response = client.get("/")
            times.append((time.perf_counter() - began) * 1000)
            statuses["feed page 1"] = max(statuses["feed page 1"], response.status_code)
        report["sizes"].append(
            {
                "notes": seeded,
                "seed_s": seconds,
                "queries": queries,
                "statuses": statuses,
                "feed_p50_ms": statistics.median(times),
            }
        )
    result.write_text(json.dumps(report))


# --- Reporting -------------------------------------------------------------------------------


def _table(rows: list[list[str]]) -> str:
    return table(
        ["case", "req/s", "p50 ms", "p99 ms", "errors", "queries", "target", "status"],
        rows,
        {1, 2, 3, 4, 5},
    )


def http_rows(wrk_path: str, server: Gunicorn, heaviest: str, static_name: str):
    """The five wrk cases: (rows, failures, notes)."""
    note = f"/notes/{heaviest}/"
    note_status, headers, body = _get(server.base + note)
    etag = headers.get("ETag")
    static_path = f"/static/{static_name}"
    _, static_headers, static_body = _get(server.base + static_path)
    _get(server.base + "/")
    _, feed_headers, _ = _get(server.base + "/")
    _, note_headers, _ = _get(server.base + note)
    _, fresh_headers, _ = _get(server.base + note, UNCACHED)
    not_modified, _, _ = _get(server.base + note, {"If-None-Match": etag or ""})
    checks = [
        f"note page {len(body):,} bytes, static file {len(static_body):,} bytes "
        f"(static Cache-Control: {static_headers.get('Cache-Control', DASH)})",
        f"X-Cache on a second request: note {note_headers.get('X-Cache')}, feed "
        f"{feed_headers.get('X-Cache')}; with a session cookie: "
        f"{fresh_headers.get('X-Cache', 'not cached')}; "
        f"If-None-Match answered {not_modified}",
    ]
    cases = [
        {"name": f"1. cached note page ({heaviest})", "path": note},
        {"name": "2. cached feed page /", "path": "/"},
        {"name": "3. 304 revalidation (note, If-None-Match)", "path": note},
        {"name": "4. uncached note render (session cookie)", "path": note, "headers": UNCACHED},
        {"name": f"5. static file ({len(static_body):,} B)", "path": static_path},
    ]
    cases[2]["headers"] = {"If-None-Match": etag}
    for case in cases:
        case["url"] = server.base + case["path"]
        case["runs"] = []
    for case in cases:
        wrk(wrk_path, case, WARMUP_S)
    for _ in range(RUNS):  # interleaved, so drift on the machine spreads over every case
        for case in cases:
            case["runs"].append(wrk(wrk_path, case, RUN_S))

    rows, failures = [], []
    medians = {}
    for case in cases:
        runs = case["runs"]
        median = {key: statistics.median(run[key] for run in runs) for key in ("rps", "p50", "p99")}
        errors = sum(run["errors"] for run in runs)
        medians[case["name"][0]] = median
        if errors:
            failures.append(f"{case['name']}: {errors} errors")
        rows.append(
            [
                case["name"],
                f"{median['rps']:,.0f}",
                f"{median['p50']:.2f}",
                f"{median['p99']:.2f}",
                str(errors),
                DASH,
                "0 errors",
                status(not errors),
            ]
        )
    ratio = medians["1"]["rps"] / medians["5"]["rps"]
    if ratio < TARGET_RATIO:
        failures.append(f"ratio (1)/(5) {ratio:.2f} < {TARGET_RATIO}")
    rows.append(
        [
            "ratio req/s (1) cached note / (5) static file",
            f"{ratio:.2f}",
            DASH,
            DASH,
            DASH,
            DASH,
            f">= {TARGET_RATIO}",
            status(ratio >= TARGET_RATIO),
        ]
    )
    if note_status != 200 or etag is None:
        failures.append(f"note page answered {note_status} without an ETag")
    return rows, failures, checks


def query_rows(report: dict) -> tuple[list[list[str]], list[str]]:
    rows, failures = [], []
    sizes = report["sizes"]
    label = " / ".join(f"{entry['notes']:,}" for entry in sizes)
    for name in report["pages"]:
        counts = [entry["queries"][name] for entry in sizes]
        statuses = {entry["statuses"][name] for entry in sizes}
        ok = len(set(counts)) == 1 and statuses == {200}
        if not ok:
            failures.append(f"queries for {name}: {counts} (statuses {sorted(statuses)})")
        rows.append(
            [
                f"queries, {name} at {label} notes",
                DASH,
                DASH,
                DASH,
                DASH,
                " / ".join(map(str, counts)),
                "constant",
                status(ok),
            ]
        )
    for entry in sizes:
        last = entry is sizes[-1]
        ok = entry["feed_p50_ms"] < TARGET_FEED_MS
        if last and not ok:
            failures.append(f"uncached feed {entry['feed_p50_ms']:.1f} ms at {entry['notes']:,}")
        rows.append(
            [
                f"uncached feed page / at {entry['notes']:,} notes (Django Client)",
                DASH,
                f"{entry['feed_p50_ms']:.2f}",
                DASH,
                DASH,
                str(entry["queries"]["feed page 1"]),
                f"< {TARGET_FEED_MS:g} ms" if last else DASH,
                status(ok) if last else DASH,
            ]
        )
    return rows, failures


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    print("Serving benchmark (one gunicorn, production settings, PostgreSQL + Redis)")
    print(
        f"machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), "
        f"Python {platform.python_version()} ({platform.machine()})"
    )
    admin_url = _postgres_admin_url()
    redis_url = _redis_url()
    name = f"scidraft_bench_{os.getpid()}_{secrets.token_hex(3)}"
    try:
        _admin(admin_url, f'CREATE DATABASE "{name}"')
        _flush_redis(redis_url)
    except Exception as error:  # noqa: BLE001 - report and skip, never crash the bench run
        print(f"SKIP: PostgreSQL or Redis unavailable ({type(error).__name__}: {error}).")
        return 0
    if GUNICORN is None:
        print(f"SKIP: {VENV_BIN / 'gunicorn'} is missing (make setup).")
        return 0

    server = None
    work = Path(tempfile.mkdtemp(prefix="scidraft-bench-serving-"))
    rows: list[list[str]] = []
    failures: list[str] = []
    lines: list[str] = []
    try:
        env = production_environment(
            _with_database(admin_url, name), redis_url, work / "static", "bench"
        )
        began = time.perf_counter()
        _manage(env, "migrate", "--noinput")
        _manage(env, "seed_demo")
        _manage(env, "collectstatic", "--noinput")
        lines.append(
            f"setup: migrate, seed_demo, collectstatic in {time.perf_counter() - began:.0f} s; "
            f"database {name}, Redis {redis_url}"
        )
        static_name = "bench/heaviest-note.html"
        probe = _child(env, "probe", work / "probe.json", str(work / "static" / static_name))
        heaviest = probe["heaviest"]
        _flush_redis(redis_url)

        wrk_path, why = ensure_wrk()
        if wrk_path is None:
            print(f"SKIP wrk part: {why}; the request-rate rows are missing.")
        else:
            version = subprocess.run(  # noqa: S603
                [wrk_path, "-v"], capture_output=True, text=True, timeout=10
            )
            server = Gunicorn(env, work / "gunicorn.log")
            server.wait(f"/static/{static_name}")
            lines.append(
                f"server: taskset -c 0 {' '.join(server.command[:1] + server.command[1:])} "
                f"(gunicorn.conf.py {'read' if (ROOT / 'gunicorn.conf.py').exists() else 'absent'})"
            )
            lines.append(
                f"load: taskset -c 1 wrk {(version.stdout + version.stderr).split()[1]} "
                f"-t1 -c{CONNECTIONS} --latency; {WARMUP_S} s warm-up per case, then {RUNS} "
                f"interleaved runs of {RUN_S} s; medians; errors summed over the runs"
            )
            http, problems, checks = http_rows(wrk_path, server, heaviest, static_name)
            rows += http
            failures += problems
            lines += checks
            server.stop()
            server = None

        report = _child(env, "queries", work / "queries.json", heaviest)
        lines.append(
            f"synthetic notes: bulk_create copies of {report['source']} "
            f"({report['source_chars']:,} chars of HTML), tag page /tags/{report['tag']}/; "
            "seeding took "
            + ", ".join(
                f"{entry['seed_s']:.1f} s to {entry['notes']:,}" for entry in report["sizes"][1:]
            )
            + f"; page cache cleared before each request; feed p50 of {FEED_RENDERS} renders"
        )
        more_rows, more_failures = query_rows(report)
        rows += more_rows
        failures += more_failures
    except Exception as error:  # noqa: BLE001 - report it; the exit code stays 0
        traceback.print_exc()
        failures.append(f"the benchmark crashed ({type(error).__name__}: {error})")
    finally:
        if server is not None:
            server.stop()
        try:
            _flush_redis(redis_url)
        except Exception:  # noqa: BLE001 - best effort on the way out
            print(f"warning: could not flush {redis_url}", file=sys.stderr)
        _admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        shutil.rmtree(work, ignore_errors=True)

    for line in lines:
        print(line)
    print()
    print(_table(rows))
    print()
    if failures:
        print(f"FAIL: {'; '.join(failures)}.")
    else:
        print("PASS: every serving target is met.")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        mode, result = sys.argv[2], Path(sys.argv[3])
        if mode == "probe":
            child_probe(result, Path(sys.argv[4]))
        else:
            child_queries(result, sys.argv[4])
        sys.exit(0)
    sys.exit(main())
