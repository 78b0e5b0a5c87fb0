"""A production-sized site built fast, for the scale benchmark (a helper module: the benchmark
runner skips `_` files). Called in an interpreter where Django is set up, on a database that
seed_demo has filled.

The notes are the demo's, many times over: every clone copies the stored render of its source
note (the same body in the same context renders the same HTML, and the source hash stays
current, so no page renders it again), under a slug, title and date of its own, with tags and
authors drawn from the generated ones. A few source notes are written here, citing entries of a
generated .bib, and rendered once through notes.services (note_render_store), as an import
renders. Rows are written with bulk_create, which is why 10,000 notes take minutes.
"""

from __future__ import annotations

import datetime as dt
import random
import time

from _copies import note_columns  # benchmarks/ is on sys.path: the script's folder

BIB_NAME = "bib/scale.bib"
# Demo notes over this much HTML are not cloned: 10,000 copies of the heaviest (77 KB) would
# make the database several times the size a site of ordinary notes has.
MAX_SOURCE_HTML = 50_000
CITING_SOURCES = 4
CITES_PER_NOTE = 12

_SURNAMES = (
    "Ahlberg", "Baptiste", "Chen", "Dubois", "Eriksen", "Fujita", "García", "Haddad", "Ivanova",
    "Jensen", "Kowalski", "Larsen", "Moreau", "Nakamura", "Okafor", "Petrov", "Quinn", "Rossi",
    "Schmidt", "Tanaka", "Urban", "Varga", "Weber", "Xu", "Yilmaz", "Zhang",
)  # fmt: skip
_GIVEN = ("Ada", "Bo", "Carla", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas")
_WORDS = (
    "stable", "adaptive", "sparse", "stochastic", "implicit", "parallel", "robust", "spectral",
    "multigrid", "Krylov", "Markov", "Bayesian", "finite", "element", "volume", "solver",
    "methods", "bounds", "estimates", "convergence", "analysis", "schemes", "preconditioners",
)  # fmt: skip
_JOURNALS = ("SIAM Review", "Numerische Mathematik", "J. Comput. Phys.", "BIT", "Math. Comp.")


def bib_key(number: int) -> str:
    return f"Scale{number:05d}"


def bib_text(entries: int, seed: int = 7) -> str:
    """`entries` BibTeX articles with two to four authors, a title, journal, year and pages."""
    chooser = random.Random(seed)  # noqa: S311 - sample data, not a secret
    blocks = [f"% {entries:,} generated entries for the scale benchmark.\n"]
    for number in range(entries):
        authors = " and ".join(
            f"{chooser.choice(_SURNAMES)}, {chooser.choice(_GIVEN)}"
            for _ in range(chooser.randint(2, 4))
        )
        title = " ".join(chooser.choice(_WORDS) for _ in range(chooser.randint(4, 9)))
        first = chooser.randint(1, 900)
        blocks.append(
            f"@article{{{bib_key(number)},\n"
            f"  author  = {{{authors}}},\n"
            f"  title   = {{{title.capitalize()}}},\n"
            f"  journal = {{{chooser.choice(_JOURNALS)}}},\n"
            f"  year    = {{{chooser.randint(1950, 2025)}}},\n"
            f"  volume  = {{{chooser.randint(1, 80)}}},\n"
            f"  pages   = {{{first}--{first + chooser.randint(5, 40)}}},\n"
            f"  doi     = {{10.5555/scale.{number}}}\n"
            "}\n"
        )
    return "\n".join(blocks)


def citing_body(number: int, entries: int) -> str:
    """A note citing CITES_PER_NOTE entries of the generated file, with math and a list."""
    chooser = random.Random(number)  # noqa: S311
    keys = [bib_key(chooser.randrange(entries)) for _ in range(CITES_PER_NOTE)]
    paragraphs = [
        f"Survey {number} of the literature on the stability of time stepping: for "
        "$y' = \\lambda y$ the explicit Euler step is stable when "
        "$|1 + h\\lambda| \\le 1$.",
        *(
            f"Result {index} goes back to \\cite{{{key}}}, and "
            f"$$\\int_0^1 x^{{{index}}}\\,dx = \\frac{{1}}{{{index + 1}}}.$$"
            for index, key in enumerate(keys, start=1)
        ),
        "## References",
        f'{{{{< references bib="{BIB_NAME}" >}}}}',
    ]
    return "\n\n".join(paragraphs)


def seed(*, notes: int, tags: int, authors: int, bib_entries: int) -> dict:
    """Bring the site to `notes` notes; return what was made and how long each part took."""
    from django.db import connection, transaction
    from django.db.models.functions import Length

    from bibliography.services import bibfile_import
    from notes import search_index
    from notes.models import Author, Note, NoteAuthor, NoteBibliography, NoteCitation, Tag
    from notes.models.rendered import Status
    from notes.services.renders import note_render_store

    timings: dict[str, float] = {}
    began = time.perf_counter()
    bibfile_import(name=BIB_NAME, raw=bib_text(bib_entries))
    timings["bib"] = time.perf_counter() - began

    began = time.perf_counter()
    oldest = Note.objects.order_by("date").values_list("date", flat=True).first()
    citing = []
    for number in range(CITING_SOURCES):
        note = Note.objects.create(
            slug=f"scale-survey-{number}",
            title=f"Scale survey {number}",
            body=citing_body(number, bib_entries),
            status=Status.PUBLISHED,
            date=oldest - dt.timedelta(hours=number + 1),
        )
        note_render_store(note=note)
        citing.append(note)
    timings["render"] = time.perf_counter() - began

    began = time.perf_counter()
    tag_rows = Tag.objects.bulk_create(
        Tag(name=f"Topic {number:03d}", slug=f"topic-{number:03d}") for number in range(tags)
    )
    author_rows = Author.objects.bulk_create(
        Author(
            name=f"{_GIVEN[number % len(_GIVEN)]} {_SURNAMES[number % len(_SURNAMES)]} {number}",
            handle=f"scale-author-{number:02d}",
            institute="Scale Institute",
        )
        for number in range(authors)
    )
    sources = list(
        Note.objects.published()
        .regular()
        .annotate(size=Length("rendered_html"))
        .filter(size__lte=MAX_SOURCE_HTML)
        .order_by("slug")
    )
    clones = max(0, notes - Note.objects.count())
    templates = [note_columns(source, "tag_order") for source in sources]
    links = {
        source.pk: list(source.bibliography_links.values_list("bibfile_id", "position"))
        for source in sources
    }
    cited = {
        source.pk: list(
            source.citations.values_list("bibfile_id", "bib_name", "key", "list_index", "number")
        )
        for source in sources
    }
    chooser = random.Random(notes)  # noqa: S311 - sample data
    start = oldest - dt.timedelta(hours=CITING_SOURCES + 1)
    Tagging = Note.tags.through
    with transaction.atomic():
        rows = []
        picks = []
        for number in range(clones):
            index = number % len(sources)
            note_tags = chooser.sample(tag_rows, chooser.randint(1, 4))
            note_authors = chooser.sample(author_rows, chooser.randint(1, 3))
            picks.append((sources[index].pk, note_tags, note_authors))
            rows.append(
                Note(
                    **templates[index],
                    slug=f"scale-{number:05d}",
                    title=f"{sources[index].title} ({number})",
                    date=start - dt.timedelta(minutes=53 * number),
                    tag_order=[tag.name for tag in note_tags],
                )
            )
        rows = Note.objects.bulk_create(rows, batch_size=500)
        NoteAuthor.objects.bulk_create(
            (
                NoteAuthor(note_id=note.pk, author_id=author.pk, position=position)
                for note, (_, _, people) in zip(rows, picks, strict=True)
                for position, author in enumerate(people)
            ),
            batch_size=5_000,
        )
        Tagging.objects.bulk_create(
            (
                Tagging(note_id=note.pk, tag_id=tag.pk)
                for note, (_, labels, _) in zip(rows, picks, strict=True)
                for tag in labels
            ),
            batch_size=5_000,
        )
        NoteBibliography.objects.bulk_create(
            (
                NoteBibliography(note_id=note.pk, bibfile_id=bibfile, position=position)
                for note, (source, _, _) in zip(rows, picks, strict=True)
                for bibfile, position in links[source]
            ),
            batch_size=5_000,
        )
        NoteCitation.objects.bulk_create(
            (
                NoteCitation(
                    note_id=note.pk,
                    bibfile_id=bibfile,
                    bib_name=bib_name,
                    key=key,
                    list_index=list_index,
                    number=place,
                )
                for note, (source, _, _) in zip(rows, picks, strict=True)
                for bibfile, bib_name, key, list_index, place in cited[source]
            ),
            batch_size=5_000,
        )
    timings["clone"] = time.perf_counter() - began

    began = time.perf_counter()
    search_index.vectors_store(Note.objects.filter(slug__startswith="scale-"))
    with connection.cursor() as cursor:
        # What autovacuum does after a bulk load: planner statistics for the new rows.
        cursor.execute("ANALYZE")
    timings["index"] = time.perf_counter() - began
    return {
        "notes": Note.objects.count(),
        "published": Note.objects.published().count(),
        "tags": Tag.objects.count(),
        "authors": Author.objects.count(),
        "sources": len(sources),
        "citing_sources": [note.slug for note in citing],
        "timings": timings,
    }
