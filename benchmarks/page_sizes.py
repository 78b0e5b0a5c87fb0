"""The size and cold render time of every kind of public page at 10,000 published notes.

Standalone: `python benchmarks/page_sizes.py`, or `make bench` for every benchmark. Goals: every
page at most 1 MB uncompressed and rendered cold in at most 300 ms.

In a child interpreter (another benchmark may already have set Django up in this process) with
a fresh SQLite database in a temporary folder (or PAGE_SIZES_DATABASE_URL, which is flushed
first), it runs migrate and seed_demo, then bulk_creates published copies of a demo note up to
PAGE_SIZES_NOTES notes (10,000): ten years of notes, one every 8.76 hours, each with the demo
note's tags and authors; every fifth copy carries its own `resultTitle`, so the demo's
Results A–Z entry index grows with the site. For each URL kind it reads the page once
(connections, templates), then three times cold (the page cache emptied and the content
generation moved on, as after a write) and reports the median time and the page's bytes.

It reports and never gates: a missed goal prints FAIL; the exit code is 0.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _copies import bulk_copies  # benchmarks/ is on sys.path: the script's folder
from _table import status, table

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GOAL_BYTES = 1_000_000
GOAL_MS = 300.0
NOTES = int(os.environ.get("PAGE_SIZES_NOTES", "10000"))
COLD_READS = 3
SOURCE = "result-theorem-doeblin-convergence"  # a demo note with tags and a resultTitle
SPACING_HOURS = 8.76  # 10,000 notes over ten years
# Settings the child decides: never inherited from the shell that started the script.
_OWN = ("DJANGO_", "SCIDRAFT_", "DATABASE_", "REDIS_")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = {key: value for key, value in os.environ.items() if not key.startswith(_OWN)}
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "scidraft.settings",
                "DEBUG": "1",
                "LOG_LEVEL": "WARNING",
                "DATABASE_URL": os.environ.get("PAGE_SIZES_DATABASE_URL")
                or f"sqlite:///{folder}/page_sizes.sqlite3",
                "MEDIA_ROOT": str(Path(folder) / "media"),
            }
        )
        subprocess.run(  # noqa: S603 - this script, with fixed arguments
            [sys.executable, __file__, "--child"], cwd=ROOT, env=env, check=True, timeout=3600
        )


# --- The child: seed, then measure ------------------------------------------------------------


def _seed(count: int) -> float:
    """bulk_create `count` published copies of SOURCE (render, tags, authors)."""
    import datetime as dt

    from django.utils import timezone

    from notes.models import Author, Note

    began = time.perf_counter()
    source = Note.objects.get(slug=SOURCE)
    authors = list(source.authorships.values_list("author_id", "position"))
    if not authors:  # the copies need an author for the author page to grow with the site
        authors = [(Author.objects.order_by("pk").values_list("pk", flat=True).first(), 0)]
    oldest = Note.objects.order_by("date").values_list("date", flat=True).first() or timezone.now()
    bulk_copies(
        source,
        (
            {
                "slug": f"synthetic-{number:05d}",
                "title": f"Synthetic note {number}",
                "date": oldest - dt.timedelta(hours=SPACING_HOURS * (number + 1)),
                "params": (
                    {
                        "resultTitle": f"Synthetic result {number:05d}",
                        "resultSummary": "A result stated by a synthetic note.",
                    }
                    if number % 5 == 0
                    else {}
                ),
            }
            for number in range(count)
        ),
        authors,
    )
    return time.perf_counter() - began


def _cold() -> None:
    """As after a write: a new content generation (every page key new), the cache empty."""
    from django.core.cache import cache

    from scidraft.site.generation import bump_generation

    cache.clear()
    bump_generation()


def _urls() -> dict[str, str]:
    from notes.models import Author, Note
    from notes.sitemaps import CHUNK

    source = Note.objects.get(slug=SOURCE)
    tag = source.tags.order_by("slug").first()
    author = Author.objects.filter(authorships__note__slug=f"synthetic-{NOTES // 2:05d}").first()
    middle = Note.objects.get(slug=f"synthetic-{NOTES // 2:05d}")
    year = middle.local_date.year
    return {
        "home": "/",
        "feed page": "/page/2/",
        "note": f"/notes/{middle.slug}/",
        "tag": f"/tags/{tag.slug}/",
        "tag RSS": f"/tags/{tag.slug}/index.xml",
        "author": f"/authors/{author.handle}/" if author else "",
        "site RSS": "/index.xml",
        "index.json": "/index.json",
        "archives": "/archives/",
        "archive year": f"/archives/{year}/",
        "sitemap index": "/sitemap.xml",
        "sitemap file": f"/sitemap-notes-{middle.pk // CHUNK}.xml",
        "entry index": "/results-a-to-z/",
        "search": "/search/?q=doeblin+condition",
    }


def child() -> None:
    import io
    import logging

    import django

    django.setup()
    logging.getLogger("django.request").setLevel(logging.ERROR)  # the 404s are reported below
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from notes.models import Note

    began = time.perf_counter()
    call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    call_command("seed_demo", verbosity=0, stdout=io.StringIO())
    demo_seconds = time.perf_counter() - began
    seed_seconds = _seed(max(0, NOTES - Note.objects.published().count()))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    published = Note.objects.published().count()

    client = Client()
    rows, failed = [], []
    for name, path in _urls().items():
        if not path:
            rows.append([name, "-", "-", "-", "-", "-", "skipped: no author"])
            continue
        client.get(path)  # first read: connections, templates
        times = []
        for _ in range(COLD_READS):
            _cold()
            with CaptureQueriesContext(connection) as queries:
                start = time.perf_counter()
                response = client.get(path)
                times.append((time.perf_counter() - start) * 1000)
        size = len(response.content)
        median = statistics.median(times)
        ok = response.status_code in (200, 404) and size <= GOAL_BYTES and median <= GOAL_MS
        if not ok:
            failed.append(name)
        rows.append(
            [name, path, str(response.status_code), f"{size:,}", f"{median:.0f}",
             str(len(queries.captured_queries)), status(ok)]
        )  # fmt: skip
    print(
        f"{published:,} published notes on {connection.vendor}; seed_demo and migrate "
        f"{demo_seconds:.1f} s, {NOTES:,} notes seeded in {seed_seconds:.1f} s; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(
        table(
            ["page", "path", "status", "bytes", "cold ms", "queries", "≤1 MB, ≤300 ms"],
            rows,
            {2, 3, 4, 5},
        )
    )
    if failed:
        print(f"missed a goal: {', '.join(failed)}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
    else:
        main()
