"""Stored search vectors (PostgreSQL): kept on every write, read by queries, bounded."""

from __future__ import annotations

import datetime as dt
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from notes import search, search_index, services
from notes.models import Note, Page, Status
from scidraft.site.models import SiteSettings
from tests.factories import published_note

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="full-text search runs on PostgreSQL"
    ),
]


def found(query: str) -> set[str]:
    slugs = {
        "note": dict(Note.objects.values_list("pk", "slug")),
        "page": dict(Page.objects.values_list("pk", "slug")),
    }
    return {slugs[hit.kind][hit.pk] for hit in search.search_notes(query)}


def stored_vector(note: Note) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT search_vector::text FROM notes_note WHERE id = %s", [note.pk])
        return cursor.fetchone()[0] or ""


def test_vector_follows_publish_changes_and_unpublish(author):
    """Publishing indexes the live text; saved changes wait for "Publish changes"; unpublishing
    takes the note out of results."""
    note = published_note(author, "Heat equation", "Fourier wrote on xylophones.")
    assert "xylophon" in stored_vector(note)
    assert found("xylophones") == {note.slug}
    note = services.note_save(
        note_id=note.pk,
        user=author,
        base_version=note.version,
        fields={"title": "Heat kernels", "body": "Fourier wrote on zeppelins."},
    ).note
    assert found("zeppelins") == set() and found("xylophones") == {note.slug}
    note = services.note_publish(note_id=note.pk, user=author, base_version=note.version).note
    assert found("zeppelins") == {note.slug} and found("xylophones") == set()
    assert found("kernels") == {note.slug}
    assert "'kernel':2A" in stored_vector(note)
    services.note_unpublish(note_id=note.pk, user=author, base_version=note.version)
    assert found("zeppelins") == set()


def test_the_editors_publish_click_indexes_what_it_publishes(author):
    """The click saves and publishes in one write, storing the search vector once, after the
    render: the new title and text are found, the old ones are not."""
    note = published_note(author, "Heat equation", "Fourier wrote on xylophones.")
    services.note_save_and_publish(
        note_id=note.pk,
        user=author,
        base_version=Note.objects.get(pk=note.pk).version,
        fields={"title": "Heat kernels", "body": "Fourier wrote on zeppelins."},
        publish=True,
    )
    assert found("zeppelins") == found("kernels") == {note.slug}
    assert found("xylophones") == set()
    draft = services.note_create(user=author, title="Wave equation")
    services.note_save_and_publish(
        note_id=draft.pk,
        user=author,
        base_version=draft.version,
        fields={"body": "D'Alembert wrote on violins."},
    )
    assert "'violin':" in stored_vector(draft)


def test_imported_notes_and_pages_are_indexed(tmp_path):
    """import_hugo stores the vectors of the notes and pages it writes."""
    (tmp_path / "content/notes").mkdir(parents=True)
    (tmp_path / "hugo.toml").write_text('title = "Small"\n')
    (tmp_path / "content/notes/one.md").write_text(
        '+++\ntitle = "Imported"\ndate = 2026-01-02\n+++\nA note about quokkas.\n'
    )
    (tmp_path / "content/about.md").write_text('+++\ntitle = "About"\n+++\nWe study wombats.\n')
    call_command("import_hugo", str(tmp_path), stdout=StringIO())
    assert Note.objects.filter(search_vector__isnull=True).count() == 0
    assert found("quokkas") == {"one"}
    assert found("wombats") == {"about"}


def test_query_reads_the_stored_column(demo_loaded):
    """A search matches and ranks the stored vectors: no to_tsvector in its SQL."""
    with CaptureQueriesContext(connection) as queries:
        assert search.search_notes("Gershgorin discs")
    sql = "\n".join(query["sql"] for query in queries.captured_queries)
    assert "to_tsvector" not in sql
    assert '"search_vector" @@' in sql


@pytest.mark.slow
def test_plan_uses_the_gin_index(db):
    """With thousands of notes the planner answers the match from the GIN index (a vector
    computed in the query could not use it)."""
    now = timezone.now() - dt.timedelta(days=1)
    Note.objects.bulk_create(
        Note(
            slug=f"bulk-{index}",
            title=f"Bulk note {index}",
            body="Text.",
            rendered_text=f"Filler words about matrices number {index}.",
            has_body=True,
            status=Status.PUBLISHED,
            date=now,
        )
        for index in range(3000)
    )
    search_index.vectors_store(Note.objects.all())
    with connection.cursor() as cursor:
        # The rows just written wait in the index's pending list, which the planner costs
        # high; merged, as autovacuum would, the index is read as it is in service.
        cursor.execute("SELECT gin_clean_pending_list('note_search_vector_gin'::regclass)")
        cursor.execute("ANALYZE notes_note")
    queryset = search.searchable_notes().filter(
        search_vector=search._pg_query("quasicrystal", "english")
    )
    plan = queryset.explain()
    assert "note_search_vector_gin" in plan, plan


def test_indexed_text_is_bounded(settings, author):
    """Only the first SEARCH_INDEX_MAX_CHARS characters of the text are indexed and
    highlighted; a word past them is not found."""
    settings.SEARCH_INDEX_MAX_CHARS = 2000
    filler = "lorem ipsum dolor " * 200  # 3,600 characters
    note = published_note(author, "Bounded", f"Opening aardvarks. {filler} Closing pangolins.")
    assert found("aardvarks") == {note.slug}
    assert found("pangolins") == set()
    assert "pangolin" not in stored_vector(note)
    hits = search.search_notes("aardvarks")
    (result,) = search.load_results(hits, "aardvarks")
    assert '<mark class="search-highlight">aardvarks</mark>' in result.excerpt_html


def test_rerender_search_rebuilds_vectors(settings, author):
    """`rerender --search` rebuilds every vector, e.g. after the bound changes."""
    settings.SEARCH_INDEX_MAX_CHARS = 2000
    filler = "lorem ipsum dolor " * 200
    note = published_note(author, "Bounded", f"Opening. {filler} Closing pangolins.")
    assert found("pangolins") == set()
    settings.SEARCH_INDEX_MAX_CHARS = 10_000
    out = StringIO()
    call_command("rerender", "--search", stdout=out)
    assert "search vectors rebuilt" in out.getvalue()
    assert found("pangolins") == {note.slug}


def test_language_change_restems_vectors(author):
    """Changing the site's language rebuilds the vectors in its configuration, as queries
    are parsed in it."""
    note = published_note(author, "Städte", "Alte Häuser am Fluss.")
    assert found("Haus") == set()
    site = SiteSettings.objects.current()
    site.language_code = "de"
    site.save()
    (hit,) = search.search_notes("Haus", language_code="de")
    assert hit.pk == note.pk


@pytest.mark.django_db(transaction=True)
def test_migration_backfills_existing_rows():
    """Rows written before the column existed get their vectors, and the GIN indexes, when
    the migration runs."""
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("notes", "0013_live_bibliography")], [("notes", "0014_search_vector")]
    executor = MigrationExecutor(connection)
    try:
        executor.migrate(before)
        old_apps = executor.loader.project_state(before).apps
        OldNote = old_apps.get_model("notes", "Note")
        OldNote.objects.create(
            slug="older",
            title="Older note",
            body="Text.",
            rendered_text="Written before the vectors about narwhals.",
            has_body=True,
            status=Status.PUBLISHED,
            date=timezone.now() - dt.timedelta(days=1),
        )
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(after)
    finally:
        # The vectors are the migration's; the current models (and every later test on this
        # database) need every later migration too, whatever happened above.
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert found("narwhals") == {"older"}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE indexname LIKE '%%search_vector_gin'"
        )
        assert {row[0] for row in cursor.fetchall()} == {
            "note_search_vector_gin",
            "page_search_vector_gin",
        }
