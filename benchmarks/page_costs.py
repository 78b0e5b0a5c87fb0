"""What a public page costs at 10,000 notes: its recommendations, a tag page, an author page and
searches, each timed as the code reads them now and as it read them before, side by side.

Standalone: `python benchmarks/page_costs.py [--database NAME] [--keep]`, or `make bench` for every
benchmark. It creates a PostgreSQL database (NAME, default scidraft_bench_page_costs, on the
server of DATABASE_URL when that is PostgreSQL, else 127.0.0.1:5432), migrates it and seeds
10,000 published notes with bulk_create (500 tags, one of them on a fifth of the notes; 50
authors, one of them on a fifth; a Zipf vocabulary of 3,000 words, so a search matches most
notes, some or a few), then times, in a child interpreter (another benchmark may already have
set Django up in this process):

1. a note page's recommendations: before, every published note's slug ranked by a hash of the
   pair (the list itself read once per content generation); now, one indexed read from a point
   on the ring (Note.draw_key);
2. the largest tag's and author's first and last pages: before, the tag's every note sorted
   with its columns to cut one page; now, a count by aggregate and one page of ids from the
   feed's order, then those rows;
3. the feed's first and last pages, read the same two ways;
4. searches: before, every match ranked; now, the newest SEARCH_CANDIDATES matches ranked;
5. the whole note, feed, tag, author and search pages as now, uncached (Django test client
   with a session cookie, which the page cache never answers), with their queries.

It reports and never gates: the exit code is 0 even when a goal is missed. The database is
dropped on the way out, unless --keep. No Redis: the child uses the local-memory cache.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

# benchmarks/ is on sys.path: the script's folder.
from _serving_processes import admin_sql, postgres_admin_url, with_database
from _table import status, table, verdict

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PYTHON = sys.executable
DEFAULT_DATABASE = "scidraft_bench_page_costs"
NOTES = 10_000
TAGS = 500
AUTHORS = 50
VOCABULARY = 3_000
WORDS_PER_NOTE = 400
REPEATS = 30
SEARCH_REPEATS = 20
PAGE_REPEATS = 10
GOAL_SEARCH_P95_MS = 100.0
# The queries searched: a word in nearly every note, in about half, in a few percent, in a
# handful; two words; a phrase; `or`; a negation.
SEARCHES = ("common", "half", "some", "rare", "two words", "phrase", "either", "negated")
DASH = "—"
HEADER = [
    "case", "before p50", "before p95", "now p50", "now p95", "now CPU p50", "shown", "goal",
    "status",
]  # fmt: skip


# --- The parent: a database, a child, a table --------------------------------------------------


def _environment(database_url: str) -> dict[str, str]:
    own = ("DJANGO_", "SCIDRAFT_", "DATABASE_", "REDIS_")
    env = {key: value for key, value in os.environ.items() if not key.startswith(own)}
    # DEBUG: static files from the finders (no collectstatic); its query log is bounded.
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "scidraft.settings",
            "DEBUG": "1",
            "DATABASE_URL": database_url,
            "REDIS_URL": "",
            "LOG_LEVEL": "WARNING",
        }
    )
    return env


def _ms(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def _rows(report: dict) -> tuple[list[list[str]], list[str]]:
    rows, failures = [], []
    for case in report["cases"]:
        before = case.get("before")
        after = case["after"]
        goal = case.get("goal_p95")
        ok = None if goal is None else after[1] <= goal
        if ok is False:
            failures.append(f"{case['name']}: p95 {after[1]:.1f} ms > {goal:g} ms")
        rows.append(
            [
                case["name"],
                f"{before[0]:.2f}" if before else DASH,
                f"{before[1]:.2f}" if before else DASH,
                f"{after[0]:.2f}",
                f"{after[1]:.2f}",
                DASH if case["cpu"] is None else f"{case['cpu']:.2f}",
                case.get("rows", DASH),
                f"p95 <= {goal:g} ms" if goal is not None else DASH,
                status(ok) if ok is not None else DASH,
            ]
        )
    return rows, failures


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    name = argv[argv.index("--database") + 1] if "--database" in argv else DEFAULT_DATABASE
    keep = "--keep" in argv  # leave the seeded database, to EXPLAIN its queries
    where = "kept" if keep else "dropped after"
    print(f"Page costs at {NOTES:,} notes (PostgreSQL, database {name}, {where})")
    admin = postgres_admin_url()
    try:
        admin_sql(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin_sql(admin, f'CREATE DATABASE "{name}"')
    except Exception as error:  # noqa: BLE001 - report and skip, never crash the bench run
        print(f"SKIP: PostgreSQL unavailable ({type(error).__name__}: {error}).")
        return 0
    failures: list[str] = []
    work = Path(tempfile.mkdtemp(prefix="scidraft-bench-page-costs-"))
    result = work / "report.json"
    try:
        subprocess.run(  # noqa: S603 - our interpreter and this file
            [PYTHON, str(Path(__file__).resolve()), "--child", str(result)],
            cwd=ROOT,
            env=_environment(with_database(admin, name)),
            check=True,
            timeout=1_800,
        )
        report = json.loads(result.read_text())
        for line in report["lines"]:
            print(line)
        print()
        rows, failures = _rows(report)
        print(
            table(
                HEADER,
                rows,
                {1, 2, 3, 4, 5},
            )
        )
    except Exception as error:  # noqa: BLE001 - report it; the exit code stays 0
        traceback.print_exc()
        failures.append(f"the benchmark crashed ({type(error).__name__}: {error})")
    finally:
        if not keep:
            admin_sql(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        result.unlink(missing_ok=True)
        work.rmdir()
    print()
    print(verdict(failures, "every goal is met."))
    return 0


# --- The child: seed, then time ----------------------------------------------------------------


def _vocabulary(rng: random.Random) -> list[str]:
    """Pronounceable made-up words, letters only (one token each for the text search parser)."""
    syllables = [a + b for a in "bdfgklmnprstvz" for b in "aeiou"]
    words: list[str] = []
    seen = set()
    while len(words) < VOCABULARY:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(3, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def _seed() -> dict:
    """10,000 published notes copying one rendered template, with their own text and title."""
    import datetime as dt

    from django.db import connection, transaction
    from django.utils import timezone

    from notes import search_index
    from notes.feed import draw_key
    from notes.models import Author, Note, NoteAuthor, Page, Status, Tag
    from notes.rendering import RENDERED_FIELDS
    from notes.services import note_render_store

    rng = random.Random(20)
    words = _vocabulary(rng)
    # Zipf weights: the first words are in nearly every note, the last in a few.
    weights = [1 / (rank + 1) for rank in range(len(words))]
    body = (
        "A note about the spectrum of a matrix, with a formula \\(\\lambda_i\\) and a display\n\n"
        "$$\\sum_{i=1}^n \\lambda_i = \\operatorname{tr} A.$$\n\n"
        + "Some words of text to give the card a body. "
        * 40
    )
    template = Note.objects.create(
        slug="template", title="Template", body=body, status=Status.PUBLISHED,
        summary="", date=timezone.now() - dt.timedelta(days=1),
    )  # fmt: skip
    note_render_store(note=template, force=True)
    template.refresh_from_db()
    rendered = {name: getattr(template, name) for name in RENDERED_FIELDS}
    authors = Author.objects.bulk_create(
        Author(name=f"Author {index}", handle=f"author-{index:02d}") for index in range(AUTHORS)
    )
    tags = Tag.objects.bulk_create(
        Tag(name=f"Tag {index}", slug=f"tag-{index:03d}") for index in range(TAGS)
    )
    Page.objects.create(slug="search", title="Search", layout=Page.Layout.SEARCH, body="Search.",
                        status=Status.PUBLISHED)  # fmt: skip
    began = time.perf_counter()
    now = timezone.now() - dt.timedelta(days=2)
    notes = []
    for index in range(NOTES):
        text = " ".join(rng.choices(words, weights, k=WORDS_PER_NOTE))
        slug = f"note-{index:05d}"
        notes.append(
            Note(
                slug=slug,
                title=f"Note {index} {words[rng.randrange(200, len(words))]}",
                body=body,
                has_body=True,  # bulk_create skips save(), which keeps it
                draw_key=draw_key(slug),  # and this
                status=Status.PUBLISHED,
                date=now - dt.timedelta(minutes=index * 7),
                promotion=index % 500 == 7,
                weight=1 if index % 2_000 == 3 else 0,
                # The note's words are its text and close its page, as a render stores them:
                # a search's preview finds its match in the HTML.
                **{
                    **rendered,
                    "rendered_text": text,
                    "rendered_html": f"{rendered['rendered_html']}<p>{text}</p>",
                },
            )
        )
    Tagging = Note.tags.through
    with transaction.atomic():
        notes = Note.objects.bulk_create(notes, batch_size=1_000)
        Tagging.objects.bulk_create(
            (
                Tagging(note_id=note.pk, tag_id=tag.pk)
                for index, note in enumerate(notes)
                for tag in {tags[0]}
                if index % 5 == 0
            ),
            batch_size=5_000,
        )
        Tagging.objects.bulk_create(
            (
                Tagging(note_id=note.pk, tag_id=tag.pk)
                for note in notes
                for tag in set(rng.sample(tags[1:], 3))
            ),
            batch_size=5_000,
        )
        NoteAuthor.objects.bulk_create(
            (
                NoteAuthor(note_id=note.pk, author_id=author.pk, position=position)
                for index, note in enumerate(notes)
                for position, author in enumerate(
                    [authors[0]] if index % 5 == 0 else [authors[1 + index % (AUTHORS - 1)]]
                )
            ),
            batch_size=5_000,
        )
        search_index.vectors_store(Note.objects.all())
        search_index.vectors_store(Page.objects.all())
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # what autovacuum does after a bulk load
    return {
        "seconds": time.perf_counter() - began,
        "words": {
            "common": words[0],
            "half": words[3],
            "some": words[60],
            "rare": words[2_500],
            "two words": f"{words[1]} {words[40]}",
            "phrase": f'"{words[0]} {words[0]}"',
            "either": f"{words[800]} or {words[900]}",
            "negated": f"{words[2]} -{words[5]}",
        },  # fmt: skip
        "tag": tags[0].slug,
        "author": authors[0].handle,
    }


def _time(function, repeats: int = REPEATS) -> tuple[list[float], object]:
    """Wall-clock milliseconds of `repeats` calls after one warm-up, and the last result; the
    process's CPU milliseconds go to CPU_MS (what this process spent, PostgreSQL's work not
    included: on a loaded machine the wall clock also counts waiting for a core)."""
    function()  # warm: connections, plans, imports
    times, cpu = [], []
    result = None
    for _ in range(repeats):
        began, began_cpu = time.perf_counter(), time.process_time()
        result = function()
        times.append((time.perf_counter() - began) * 1000)
        cpu.append((time.process_time() - began_cpu) * 1000)
    CPU_MS[id(times)] = cpu
    return times, result


CPU_MS: dict[int, list[float]] = {}


def _case(name: str, after: list[float], before: list[float] | None = None, **extra) -> dict:
    cpu = CPU_MS.get(id(after))
    case = {"name": name, "after": _ms(after), "cpu": statistics.median(cpu) if cpu else None}
    if before is not None:
        case["before"] = _ms(before)
    return {**case, **extra}


# What the code did before, kept here to time it beside what it does now.


def _old_candidates() -> dict[str, str]:
    from notes.models import Note

    rows = (
        Note.objects.published().order_by("date", "slug").values_list("slug", "title", "promotion")
    )
    return {slug: title for slug, title, promotion in rows if not promotion}


def _old_recommendations(regular: dict[str, str], seed: int, slug: str, count: int) -> list:
    from notes.feed import seeded_index

    candidates = {other: title for other, title in regular.items() if other != slug}
    ranked = sorted(
        sorted(candidates), key=lambda other: seeded_index(f"{seed}-{slug}-{other}", 2**32)
    )
    return [(other, candidates[other]) for other in ranked[:count]]


def _columns(notes, feed: bool):
    """What the page reads of each row: a card's columns on the feed, an entry's elsewhere."""
    return notes.card_columns() if feed else notes.for_entries()


def _old_entries(notes, offset: int, size: int, feed: bool) -> list:
    total = notes.count()
    return [total, list(_columns(notes.in_feed_order(), feed)[offset : offset + size])]


def _new_entries(notes, offset: int, size: int, feed: bool) -> list:
    total, pinned = notes.count_in_feed()
    return [total, _columns(notes, feed).page_in_feed_order(offset, size, pinned)]


def _old_search(query: str, per_page: int) -> list:
    from django.contrib.postgres.search import SearchQuery, SearchRank
    from django.db.models import F

    from notes import search

    ts_query = SearchQuery(query, search_type="websearch", config="english")
    hits = []
    kinds = (("note", search.searchable_notes()), ("page", search.searchable_pages()))
    for kind, queryset in kinds:
        rows = (
            queryset.filter(search_vector=ts_query)
            .annotate(_rank=SearchRank(F("search_vector"), ts_query))
            .values_list("pk", "_rank", "date")
        )
        hits.extend(search.SearchHit(kind, pk, float(rank), date) for pk, rank, date in rows)
    hits = search._order(hits)
    return [len(hits), search.load_results(hits[:per_page], query)]


def _new_search(query: str, per_page: int) -> list:
    from notes import search

    found = search.search_notes(query)
    return [len(found), search.load_results(found[:per_page], query)]


def child(result: Path) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from notes import search
    from notes.feed import recommendation_start
    from notes.models import Author, Note, Tag
    from scidraft.site.models import SiteSettings

    call_command("migrate", verbosity=0)
    seeded = _seed()
    site = SiteSettings.objects.current()
    size = site.pager_size
    lines = [
        f"seeded {Note.objects.count():,} notes in {seeded['seconds']:.1f} s (bulk_create, "
        f"{TAGS} tags, {AUTHORS} authors, {WORDS_PER_NOTE} words a note); {REPEATS} timed "
        f"runs a case ({SEARCH_REPEATS} a search, {PAGE_REPEATS} a whole page) after one "
        f"warm-up; PostgreSQL {connection.pg_version // 10_000}, "
        f"pager size {size}, search candidates {getattr(search, 'SEARCH_CANDIDATES', 'all')}"
    ]
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    lines.append(f"machine: {os.cpu_count()} CPUs, load average {load} before timing")
    cases = []

    note = Note.objects.published().regular().order_by("slug")[5_000]
    seed, count = 12_345, 3
    load_times, regular = _time(_old_candidates, 5)
    lines.append(
        f"before: the list recommendations were drawn from ({len(regular):,} rows) was read "
        f"once per content generation in {statistics.median(load_times):.1f} ms (p50)"
    )
    old, _ = _time(lambda: _old_recommendations(regular, seed, note.slug, count))
    new, picks = _time(
        lambda: Note.objects.published().recommended(
            note, recommendation_start(seed, note.slug), count
        )
    )
    cases.append(_case("note page: recommendations (3)", new, old, rows=str(len(picks))))

    tag = Tag.objects.get(slug=seeded["tag"])
    author = Author.objects.get(handle=seeded["author"])
    lists = {
        "feed": Note.objects.published().regular(),
        f"tag page ({tag.slug})": Note.objects.published().with_tag(tag),
        f"author page ({author.handle})": Note.objects.published().filter(authors=author),
    }
    last_pages = {}
    for label, notes in lists.items():
        total = notes.count()
        per_page = site.notes_per_page if label == "feed" else size
        last = (-(-total // per_page) - 1) * per_page
        last_pages[label] = last // per_page + 1
        for where, offset in (("first", 0), ("last", last)):
            feed = label == "feed"
            old, before = _time(
                lambda n=notes, o=offset, k=per_page, f=feed: _old_entries(n, o, k, f)
            )
            new, after = _time(
                lambda n=notes, o=offset, k=per_page, f=feed: _new_entries(n, o, k, f)
            )
            if [n.pk for n in before[1]] != [n.pk for n in after[1]]:
                lines.append(f"MISMATCH: {label} {where} page differs before and after")
            name = f"{label}, {where} page, SQL ({total:,} notes)"
            cases.append(_case(name, new, old, rows=f"{len(after[1])} rows"))

    client = Client(HTTP_HOST="127.0.0.1")
    client.cookies["sessionid"] = "benchmark-no-such-session"  # the page cache never answers
    pages = {
        "note page, whole": f"/notes/{note.slug}/",
        "feed page 1, whole": "/",
        "feed last page, whole": f"/page/{last_pages['feed']}/",
        "tag page 1, whole": f"/tags/{tag.slug}/",
        "tag last page, whole": f"/tags/{tag.slug}/page/{last_pages[f'tag page ({tag.slug})']}/",
        "author page 1, whole": f"/authors/{author.handle}/",
    }
    for label, path in pages.items():
        times, response = _time(lambda path=path: client.get(path), PAGE_REPEATS)
        assert response.status_code == 200, (path, response.status_code)
        with CaptureQueriesContext(connection) as captured:
            client.get(path)
        cases.append(_case(label, times, rows=f"{len(captured.captured_queries)} queries"))

    old_all, new_all = [], []
    for label in SEARCHES:
        query = seeded["words"][label]
        old, before = _time(lambda query=query: _old_search(query, size), SEARCH_REPEATS)
        new, after = _time(lambda query=query: _new_search(query, size), SEARCH_REPEATS)
        old_all += old
        new_all += new
        same = [r.url for r in before[1]] == [r.url for r in after[1]]
        shown = f"{after[0]:,} of {before[0]:,}" + ("" if same else ", page 1 differs")
        cases.append(_case(f"search {label!r}", new, old, rows=shown))
    cases.append(_case("search, all queries", new_all, old_all, goal_p95=GOAL_SEARCH_P95_MS))
    common = seeded["words"]["common"]
    times, response = _time(lambda: client.get("/search/", {"q": common}), SEARCH_REPEATS)
    assert response.status_code == 200
    cases.append(_case("search page 'common', whole", times, goal_p95=GOAL_SEARCH_P95_MS))
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    lines.append(f"machine: load average {load} after timing")
    result.write_text(json.dumps({"lines": lines, "cases": cases}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(Path(sys.argv[2]))
        sys.exit(0)
    sys.exit(main())
