"""Readers and writers on a production-sized site: latency while authors publish.

Standalone: `python benchmarks/scale.py [--notes N] [--seconds T] [--redis-db D]
[--redis-url URL] [--modes generation,dependencies] [--rates 0,1,5]
[--rss-limit N] [--log-dir DIR]`, or `make bench`.

It creates a fresh PostgreSQL database, runs migrate, seed_demo and collectstatic with the
production settings (DEBUG=0), then grows the site to N notes (default 10,000) with 500 tags,
50 authors and a 5,000-entry .bib (benchmarks/_seed.py: stored renders copied across clones of
the same source note, a few citing notes rendered through notes.services), its RSS feeds at the
site's default length (SCIDRAFT_RSS_LIMIT; `--rss-limit N` sets the site's own). For each page
invalidation mode (SCIDRAFT_PAGE_INVALIDATION) it starts gunicorn as gunicorn.conf.py says (its
workers and threads; max requests off, so that no worker restarts mid-run and its peak RSS is
the run's), on the given Redis database (flushed first and last), reads each page once uncached
(the slow ones are listed; one without a 200 within FIRST_READ_S is left out and reported), and
for each publish rate runs, for T seconds (default 30):
- readers: 16 keep-alive connections (threads of reliability/readers.py, in two processes of
  their own), each asking for the next of 50 pages (home, feed pages, note, tag and author
  pages, RSS) as soon as the last answered;
- writers: at 0, 1 and 5 publishes a second, authors signed in through the login form publish
  a change to the body of a note of theirs (on the home page, with tags the readers ask for)
  through the editor's form, as the browser posts it.
A mode may carry settings of its own, compared side by side in one run:
`--modes dependencies,dependencies+SCIDRAFT_PAGE_REFRESH_THREADS=1` runs gunicorn twice, the
second time with that variable set. `+AUTHORING_CONCURRENCY=N` (docker-compose.yml's variable)
starts a second gunicorn of N workers for the writers, as nginx routes the editor's requests to
the authoring pool; the readers stay on the first. `+WEB_NICE=N` runs the readers' pool N nice
levels below the rest (docker-compose.yml's lower CPU weight for web is about 6).
It prints one table: mode × rate → req/s, p50, p99, max, the share of X-Cache hit/stale/miss,
misses per publish (the renders the writes cost the readers), and the goals; then the peak RSS
of the gunicorn workers (VmRSS and VmHWM from /proc, sampled through the run).

The load generator shares the machine with the server: its figures are a floor.
It reports and never gates: the exit code is 0 even when a goal fails, and FAIL is printed.
Processes and the database are removed on the way out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

# benchmarks/ is on sys.path: the script's folder.
from _gunicorn import Gunicorn, MemorySampler, code_tree
from _process_cpu import CpuClock, named, spent
from _scale_rows import MAX_MS, Row, cpu_lines, report
from _seed import citing_body, seed
from _serving_processes import (
    GUNICORN,
    PYTHON,
    ROOT,
    VENV_BIN,
    admin_sql,
    clean_up,
    flush_redis,
    machine,
    postgres_admin_url,
    site_set_up,
)
from _table import status, verdict
from _writers import Publishing, Writer

# The reliability suite's readers (_writers put its folder on sys.path): keep-alive connections,
# threads in processes of their own, every answer recorded with its time and X-Cache.
from readers import Readers  # noqa: E402
from traffic import Recorder  # noqa: E402

NOTES = 10_000
TAGS = 500
AUTHORS = 50
BIB_ENTRIES = 5_000
SECONDS = 30
WARMUP_S = 5
READERS = 16
READER_PROCESSES = 2
PAGES = 50
MODES = ("generation", "dependencies")
RATES = (0, 1, 5)
REDIS_DB = 10
# Writers a publish rate has, per publish a second: a publish takes about a second on a busy
# machine, and each writer publishes one at a time.
WRITERS_PER_RATE = 2
# The writers' notes among the readers' pages (their note pages change with every publish).
READ_WRITER_NOTES = 5
# Goal: the memory of a worker (the latency goals are _scale_rows's).
RSS_MB = 300.0
# How long the first, uncached read of a page may take before the page is left out of the mix.
FIRST_READ_S = 120
# Items of the RSS feeds the site sets (SiteSettings.rss_limit, never past SCIDRAFT_RSS_LIMIT);
# 0 keeps the default.
RSS_LIMIT = 0


# --- The site ------------------------------------------------------------------------------


def child_seed(result: Path, notes: int, writers: int, rss_limit: int) -> None:
    """Seed (benchmarks/_seed.py), set the RSS feeds' limit (0: the default), make the
    writers' accounts, and list what the readers' pages are made of."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.db.models import Count

    from notes.models import Author as NoteAuthorRow
    from notes.models import Note, Tag
    from scidraft.site.models import SiteSettings

    report = seed(notes=notes, tags=TAGS, authors=AUTHORS, bib_entries=BIB_ENTRIES)
    if rss_limit:
        settings = SiteSettings.objects.current()
        settings.rss_limit = rss_limit
        settings.save()
    group = Group.objects.get(name="Author")
    accounts = []
    for number in range(writers):
        name, password = f"writer{number + 1}", secrets.token_urlsafe(16)
        User.objects.create_user(name, f"{name}@example.org", password).groups.add(group)
        accounts.append([name, password])
    published = Note.objects.published()
    tags = list(
        Tag.objects.filter(slug__startswith="topic-", notes__in=published)
        .annotate(used=Count("notes"))
        .order_by("-used", "slug")
        .values_list("slug", "name", "used")[:12]
    )
    authors = list(
        NoteAuthorRow.objects.filter(handle__startswith="scale-author-")
        .annotate(used=Count("authorships"))
        .order_by("-used", "handle")
        .values_list("handle", "used")[:7]
    )
    notes_newest = list(published.regular().order_by("-date").values_list("slug", flat=True)[:25])
    feed_pages = published.regular().count() // 10  # the theme's feed shows 10 a page at most
    report.update(
        accounts=accounts,
        mix_tags=tags,
        mix_authors=authors,
        notes_newest=notes_newest,
        feed_pages=feed_pages,
    )
    result.write_text(json.dumps(report))


def reader_pages(site: dict, writer_slugs: list[str]) -> list[str]:
    """The readers' 50 pages: home and feed pages, RSS, tag and author pages, note pages (the
    writers' notes among them)."""
    last = max(2, site["feed_pages"])
    pages = ["/", "/page/2/", f"/page/{min(5, last)}/", "/notes/", f"/notes/page/{last}/"]
    pages.append("/index.xml")
    tags = site["mix_tags"]
    pages.append(f"/tags/{tags[0][0]}/index.xml")
    pages.append("/tags/")
    pages += [f"/tags/{slug}/" for slug, _, _ in tags[:10]]
    pages.append(f"/tags/{tags[0][0]}/page/2/" if tags[0][2] > 10 else f"/tags/{tags[10][0]}/")
    authors = site["mix_authors"]
    pages += [f"/authors/{handle}/" for handle, _ in authors[:6]]
    pages.append(
        f"/authors/{authors[0][0]}/page/2/" if authors[0][1] > 10 else f"/authors/{authors[6][0]}/"
    )
    notes = [f"/notes/{slug}/" for slug in writer_slugs]
    notes += [f"/notes/{slug}/" for slug in site["notes_newest"] if f"/notes/{slug}/" not in notes]
    pages += notes[: PAGES - len(pages)]
    return list(dict.fromkeys(pages))


def first_reads(server: Gunicorn, pages: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Each page read once, uncached: (the pages answering 200, those slower than MAX_MS with
    their time, those that did not answer 200 within FIRST_READ_S with why)."""
    kept, slow, missing = [], [], []
    for path in pages:
        began = time.perf_counter()
        try:
            with urllib.request.urlopen(server.base + path, timeout=FIRST_READ_S) as answer:  # noqa: S310 - loopback
                answer.read()
                code = answer.status
        except urllib.error.HTTPError as error:
            code = error.code
        except OSError as error:
            code = type(error).__name__
        took = time.perf_counter() - began
        if code != 200:
            missing.append(f"{path} ({code} after {took:.0f} s)")
            continue
        kept.append(path)
        if took * 1000 > MAX_MS:
            slow.append(f"{path} {took:.1f} s")
    return kept, slow, missing


# --- One run -------------------------------------------------------------------------------


def measure(server: Gunicorn, pages: list[str], writers: list[Writer], mode: str, rate: int,
            seconds: float, samplers: list[MemorySampler], clock: CpuClock) -> Row:  # fmt: skip
    readers_log, writers_log = Recorder(), Recorder()
    for writer in writers:
        writer.recorder = writers_log
    readers = Readers(server.port, readers_log, pages, [], READERS, 10**9, READER_PROCESSES)
    publishing = Publishing(writers[: WRITERS_PER_RATE * rate], rate)
    readers.start()
    time.sleep(1.0)  # the reader processes start and connect
    began, ticks = time.monotonic(), clock.read()
    publishing.start()
    time.sleep(seconds)
    publishing.stop()
    ended, cpu = time.monotonic(), spent(ticks, clock.read())
    readers.stop()
    reads = [answer for answer in readers_log.answers if began <= answer.at < ended]
    row = Row(mode, rate, ended - began, reads, list(writers_log.answers), cpu=cpu)
    row.rss_mb = max(sampler.peak_mb for sampler in samplers)
    return row


def run_mode(env: dict, work: Path, mode: str, site: dict, rates: list[int], seconds: float,
             redis_url: str, lines: list[str], problems: list[str],
             log_dir: Path | None) -> list[Row]:  # fmt: skip
    flush_redis(redis_url)
    invalidation, *overrides = mode.split("+")
    settings = dict(override.split("=", 1) for override in overrides)
    # As docker-compose.yml's variable: the editor's requests go to a pool of their own, as
    # nginx sends them (deploy/nginx.conf); the readers stay on the public pool.
    authoring_workers = int(settings.pop("AUTHORING_CONCURRENCY", "0"))
    # The public pool's priority below the others', as docker-compose.yml's cpu_shares for
    # web (256 against the default 1024) is, near enough, a nice value of 6.
    web_nice = int(settings.pop("WEB_NICE", "0"))
    # The code of another commit (`+CODE=<ref>`), served on the same site: before and after a
    # change side by side. Its migrations must be this checkout's.
    code = code_tree(settings.pop("CODE"), work) if "CODE" in settings else None
    mode_env = {**env, "SCIDRAFT_PAGE_INVALIDATION": invalidation, **settings}
    log_name = re.sub(r"[^A-Za-z0-9_.-]+", "-", mode)
    server = Gunicorn(mode_env, work / f"gunicorn-{log_name}.log", nice=web_nice, code=code)
    authoring = None
    if authoring_workers:
        authoring = Gunicorn(
            {**mode_env, "WEB_CONCURRENCY": str(authoring_workers)},
            work / f"gunicorn-authoring-{log_name}.log",
            code=code,
        )
    samplers: list[MemorySampler] = []
    try:
        server.wait("/")
        if authoring is not None:
            authoring.wait("/")
        samplers = [MemorySampler(pool) for pool in (server, authoring) if pool is not None]
        sampler = samplers[0]
        for each in samplers:
            each.start()
        recorder = Recorder()
        writers = []
        body = citing_body(99, BIB_ENTRIES)
        mix_tags = [name for _, name, _ in site["mix_tags"]]
        for number, (username, password) in enumerate(
            site["accounts"][: WRITERS_PER_RATE * max(rates)]
        ):
            writer = Writer((authoring or server).port, recorder, username, password, body)
            writer.prepare(
                f"Scale writer note {number + 1} ({mode})",
                [mix_tags[number % len(mix_tags)], mix_tags[(number + 1) % len(mix_tags)]],
            )
            writers.append(writer)
        pages = reader_pages(site, [writer.slug for writer in writers[:READ_WRITER_NOTES]])
        pages, slow, missing = first_reads(server, pages)
        if slow:
            lines.append(f"{mode}: first (uncached) reads over {MAX_MS:g} ms: {', '.join(slow)}")
        if missing:
            problems.append(
                f"{mode}: left out of the readers' pages, no 200 within {FIRST_READ_S} s: "
                + ", ".join(missing)
            )
        lines.append(
            f"{mode}: {len(pages)} pages read; {len(writers)} writers, their notes "
            f"{writers[0].slug} … {writers[-1].slug}"
        )
        warm = Recorder()
        warmup = Readers(server.port, warm, pages, [], READERS, 10**9, READER_PROCESSES)
        warmup.start()
        time.sleep(WARMUP_S)
        warmup.stop()
        sampler.sample()
        lines.append(
            f"{mode}: worker RSS after the warm-up "
            + ", ".join(f"{kb / 1024:.0f} MB" for _, kb in sorted(sampler.peak_kb.items()))
        )
        clock = CpuClock(
            {
                "gunicorn": lambda: server.workers() + (authoring.workers() if authoring else []),
                "PostgreSQL": named("postgres"),
                "Redis": named("redis-server"),
            }
        )
        rows = []
        for rate in rates:
            rows.append(measure(server, pages, writers, mode, rate, seconds, samplers, clock))
        return rows
    finally:
        for pool, each in zip(("", "authoring "), samplers, strict=False):
            each.stop()
            lines.append(
                f"{mode}: {pool}worker peak RSS over the run "
                + ", ".join(f"{kb / 1024:.0f} MB" for _, kb in sorted(each.peak_kb.items()))
            )
        for pool in (server, authoring):
            if pool is None:
                continue
            pool.stop()
            if log_dir is not None:
                log_dir.mkdir(parents=True, exist_ok=True)
                shutil.copy(pool.log, log_dir / pool.log.name)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--notes", type=int, default=NOTES, help=f"default {NOTES:,}")
    parser.add_argument(
        "--seconds", type=float, default=SECONDS, help=f"per row, default {SECONDS}"
    )
    parser.add_argument("--redis-db", type=int, default=REDIS_DB, help=f"default {REDIS_DB}")
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0",
        help="the Redis server (its database number is replaced by --redis-db)",
    )
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help="invalidation modes, each optionally with +NAME=VALUE settings of its own",
    )
    parser.add_argument("--rates", default=",".join(map(str, RATES)))
    parser.add_argument(
        "--rss-limit",
        type=int,
        default=RSS_LIMIT,
        help="items of the RSS feeds (at most SCIDRAFT_RSS_LIMIT); 0, the default, keeps it",
    )
    parser.add_argument(
        "--log-dir", type=Path, default=None, help="a folder to copy gunicorn's logs to"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    options = parse(sys.argv[1:] if argv is None else argv)
    modes = [mode for mode in options.modes.split(",") if mode]
    rates = sorted({int(rate) for rate in options.rates.split(",") if rate})
    if 0 not in rates:
        rates.insert(0, 0)  # the baseline the goals compare with
    print("Scale benchmark (gunicorn as gunicorn.conf.py, production settings, PostgreSQL + Redis)")
    print(machine(load=True))
    admin_url = postgres_admin_url()
    parts = urllib.parse.urlsplit(options.redis_url)
    redis_url = urllib.parse.urlunsplit(parts._replace(path=f"/{options.redis_db}"))
    name = f"scidraft_scale_{os.getpid()}_{secrets.token_hex(3)}"
    try:
        admin_sql(admin_url, f'CREATE DATABASE "{name}"')
    except Exception as error:  # noqa: BLE001 - report and skip, never crash the bench run
        print(f"SKIP: PostgreSQL unavailable ({type(error).__name__}: {error}).")
        return 0
    try:
        flush_redis(redis_url)
    except Exception as error:  # noqa: BLE001
        admin_sql(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        print(f"SKIP: Redis {redis_url} unavailable ({type(error).__name__}: {error}).")
        return 0
    if GUNICORN is None:
        admin_sql(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        print(f"SKIP: {VENV_BIN / 'gunicorn'} is missing (make setup).")
        return 0

    work = Path(tempfile.mkdtemp(prefix="scidraft-bench-scale-"))
    rows: list[Row] = []
    failures: list[str] = []
    lines: list[str] = []
    try:
        env, setup_s = site_set_up(admin_url, name, redis_url, work, "scale")
        began = time.perf_counter()
        result = work / "site.json"
        subprocess.run(  # noqa: S603 - our interpreter and this file
            [PYTHON, str(Path(__file__).resolve()), "--child-seed", str(result),
             str(options.notes), str(WRITERS_PER_RATE * max(rates)), str(options.rss_limit)],
            cwd=ROOT, env=env, check=True, timeout=3600, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        site = json.loads(result.read_text())
        timings = site["timings"]
        lines.append(
            f"setup: migrate, seed_demo, collectstatic {setup_s:.0f} s; seeding "
            f"{time.perf_counter() - began:.0f} s (.bib {timings['bib']:.1f} s, "
            f"{len(site['citing_sources'])} citing notes rendered {timings['render']:.1f} s, "
            f"clones {timings['clone']:.1f} s, search vectors and ANALYZE "
            f"{timings['index']:.1f} s); database {name}, Redis {redis_url}"
        )
        lines.append(
            f"site: {site['notes']:,} notes ({site['published']:,} published, clones of "
            f"{site['sources']} source notes), {site['tags']:,} tags, {site['authors']:,} "
            f"authors, a {BIB_ENTRIES:,}-entry .bib; RSS feeds of "
            + (f"{options.rss_limit} items" if options.rss_limit else "the default length")
        )
        lines.append(
            f"load: {READERS} readers (Python threads, keep-alive, {READER_PROCESSES} "
            f"processes) for {options.seconds:g} s a row after a {WARMUP_S} s warm-up; publishes "
            f"evenly spaced, {WRITERS_PER_RATE} writers per publish a second, each a body change "
            "through the editor's form"
        )
        for mode in modes:
            rows += run_mode(
                env,
                work,
                mode,
                site,
                rates,
                options.seconds,
                redis_url,
                lines,
                failures,
                options.log_dir,
            )
    except Exception as error:  # noqa: BLE001 - report it; the exit code stays 0
        traceback.print_exc()
        failures.append(f"the benchmark crashed ({type(error).__name__}: {error})")
    finally:
        clean_up(admin_url, name, redis_url, work)

    for line in lines:
        print(line)
    print()
    if rows:
        text, more = report(rows)
        failures += more
        print(text)
        print()
        print("The server's CPU per publish beyond its reads (gunicorn, PostgreSQL, Redis):")
        for line in cpu_lines(rows):
            print(f"  {line}")
        peak = max(row.rss_mb for row in rows)
        print()
        print(
            f"gunicorn worker peak RSS: {peak:.0f} MB (goal ≤ {RSS_MB:g} MB) "
            f"{status(peak <= RSS_MB)}"
        )
        if peak > RSS_MB:
            failures.append(f"worker RSS {peak:.0f} MB > {RSS_MB:g} MB")
    print()
    print(verdict(failures, "every scale goal is met."))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child-seed"]:
        child_seed(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        sys.exit(0)
    sys.exit(main())
