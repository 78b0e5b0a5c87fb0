"""What the serving benchmark measures inside Django, each in a child interpreter of its own
(serving.py --child): the heaviest note page, then queries per page and uncached feed renders
at each number of synthetic notes."""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

from _copies import bulk_copies  # benchmarks/ is on sys.path: the script's folder

SIZES = (10, 1_000, 10_000)
FEED_RENDERS = 20
# Synthetic notes copy the published, tagged note whose stored HTML is nearest this size
# (copies of the heaviest note would make 10,000 rows of ~150 KB each).
SYNTHETIC_HTML_CHARS = 8_000


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

    from django.utils import timezone

    from notes.models import Note

    began = time.perf_counter()
    # Older than every demo note: the demo notes stay on feed page 1 at every size.
    oldest = Note.objects.order_by("date").values_list("date", flat=True).first() or timezone.now()
    bulk_copies(
        source,
        (
            {
                "slug": f"synthetic-{number:05d}",
                "title": f"Synthetic note {number}",
                "date": oldest - dt.timedelta(minutes=number + 1),
            }
            for number in range(start, start + count)
        ),
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
