"""Importing a site's notes in one batch (NoteImportBatch): the same rows as one by one, in a
number of queries that does not grow with what each note links to."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from hugosite import loading
from hugosite.content import NoteSource
from hugosite.exporting import export_site
from hugosite.loading import LoadReport, hugo_site_load
from hugosite.reading import HugoSite, read_site
from notes.models import Note, NoteCitation, NoteRevision, Tag
from notes.services import note_metadata, note_render_store
from scidraft.site.models import SiteSettings
from tests.cited_files import (
    BODY,
    bibfile,
    public_text,
    published,
    replace_title,
    require_review,
)

__all__ = ["bibfile", "published"]  # fixtures

pytestmark = pytest.mark.django_db

BIB = "".join(
    f"@article{{key{n}, author = {{Author, A{n}}}, title = {{Paper {n}}}, year = {{2020}}}}\n"
    for n in range(8)
)


def write_site(root: Path, count: int) -> Path:
    """`count` notes with tags, two authors, a citation and a references list."""
    (root / "content/notes").mkdir(parents=True)
    (root / "assets/bib").mkdir(parents=True)
    (root / "hugo.toml").write_text('title = "Batch"\n[params]\nauthor = "lab"\n')
    (root / "assets/bib/refs.bib").write_text(BIB)
    for n in range(count):
        (root / f"content/notes/note-{n:03d}.md").write_text(
            f'+++\ntitle = "Note {n}"\ndate = 2025-03-01T09:00:00+02:00\n'
            f'tags = ["Math", "Tag {n % 3}"]\nauthor = ["Ada Novak", "bob"]\n+++\n'
            f"Text $x_{{{n}}}$ \\cite{{key{n % 8}}}.\n\n"
            '{{< references bib="bib/refs.bib" >}}\n'
        )
    return root


def load(root: Path) -> LoadReport:
    return hugo_site_load(site=read_site(root))


def note_queries(root: Path) -> int:
    with CaptureQueriesContext(connection) as queries:
        load(root)
    return len(queries)


def citation_rows(note: Note) -> list[tuple]:
    return list(
        NoteCitation.objects.filter(note=note)
        .order_by("list_index", "number")
        .values_list("bibfile_id", "bib_name", "key", "list_index", "number")
    )


def same_metadata(recorded: dict, read_back: dict) -> bool:
    """Equal, the date as a moment: a revision writes the offset the source gave, a note read
    back from the database is in UTC."""
    moment = dt.datetime.fromisoformat
    return {**recorded, "date": moment(recorded["date"])} == {
        **read_back,
        "date": moment(read_back["date"]),
    }


def test_the_queries_of_an_import_grow_by_a_few_per_note(tmp_path):
    """Ten more notes (each with tags, authors and a citation) cost at most five queries a
    note: the note's row, its authors, its search vector (PostgreSQL), the slugs of its tags
    (the page cache's listing tags, scidraft.site.receivers) and a share of the batch's
    savepoints; a second, unchanged import at most two."""
    small, large = write_site(tmp_path / "small", 5), write_site(tmp_path / "large", 15)
    first_small = note_queries(small)
    Note.objects.all().delete()
    first_large = note_queries(large)
    assert first_large - first_small <= 5 * 10
    again_small, again_large = note_queries(small), note_queries(large)
    assert again_large - again_small <= 2 * 10


def test_revisions_record_the_metadata_the_database_holds(tmp_path):
    """Each batched import revision holds what note_metadata reads back from the database,
    numbered after the note's earlier revisions, at the note's version."""
    root = write_site(tmp_path / "site", 4)
    load(root)
    path = root / "content/notes/note-001.md"
    text = path.read_text().replace('author = ["Ada Novak", "bob"]', 'author = ["bob", "Zed"]')
    path.write_text(text.replace('tags = ["Math"', 'tags = ["New", "Math"'))
    report = load(root)
    assert dict(report.counts["notes"]) == {"updated": 1, "unchanged": 3}
    for note in Note.objects.all():
        revisions = list(note.revisions.order_by("number"))
        assert [revision.number for revision in revisions] == list(range(1, len(revisions) + 1))
        last = revisions[-1]
        assert same_metadata(last.metadata, note_metadata(note))
        assert (last.kind, last.base_version, last.body) == ("import", note.version, note.body)
    assert Note.objects.get(slug="note-001").revisions.count() == 2


def test_citation_rows_are_those_a_render_of_the_note_stores(tmp_path):
    """The rows written in bulk at the end equal those note_render_store writes for the note."""
    load(write_site(tmp_path / "site", 4))
    batched = {note.slug: citation_rows(note) for note in Note.objects.all()}
    assert all(batched.values())
    for note in Note.objects.all():
        note_render_store(note=note, force=True)
        assert citation_rows(note) == batched[note.slug]


def test_one_site_note_after_another_with_the_same_slug_updates_it(tmp_path):
    """Two files giving one slug: the second updates the note the first created, as one by
    one, with revisions 1 and 2."""
    root = write_site(tmp_path / "site", 1)
    (root / "content/notes/zz-again.md").write_text(
        '+++\ntitle = "Again"\nslug = "note-000"\ndate = 2025-03-02\ntags = ["Other"]\n+++\nNew.\n'
    )
    report = load(root)
    assert dict(report.counts["notes"]) == {"created": 1, "updated": 1}
    note = Note.objects.get(slug="note-000")
    assert (note.title, note.version) == ("Again", 2)
    assert list(note.tags.values_list("name", flat=True)) == ["Other"]
    assert list(note.revisions.values_list("number", flat=True)) == [2, 1]
    assert not NoteCitation.objects.filter(note=note).exists()


def test_a_note_that_fails_leaves_nothing_and_later_notes_still_get_its_tag(tmp_path, monkeypatch):
    """A note failing after its tags were written rolls back to its savepoint (its new tag
    too); the next note with that tag creates it again instead of linking a row now gone."""
    root = tmp_path / "site"
    (root / "content/notes").mkdir(parents=True)
    (root / "hugo.toml").write_text('title = "X"\n')
    for slug in ("a-fails", "b-works"):
        (root / f"content/notes/{slug}.md").write_text(
            f'+++\ntitle = "{slug}"\ndate = 2025-03-01\ntags = ["Fresh"]\n+++\nBody.\n'
        )
    real = loading.notes._import_revision

    def failing(note, batch, **kwargs):
        if note.slug == "a-fails":
            raise ValueError("boom")
        return real(note, batch, **kwargs)

    monkeypatch.setattr(loading.notes, "_import_revision", failing)
    report = load(root)
    assert [problem.message for problem in report.problems] == ["boom"]
    assert list(Note.objects.values_list("slug", flat=True)) == ["b-works"]
    tag = Tag.objects.get(name="Fresh")
    assert list(tag.notes.values_list("slug", flat=True)) == ["b-works"]
    assert NoteRevision.objects.count() == 1


def _entry_set_site(tmp_path, set_options: str, notes: dict[str, str]):
    """A Hugo site with the entry set `results` (titles from `resultTitle`, then
    `set_options`) and the given notes, by slug."""
    root = tmp_path / "site"
    (root / "content/notes").mkdir(parents=True)
    (root / "hugo.toml").write_text(
        f'title = "X"\n[params.entrySets.results]\ntitleField = "resultTitle"\n{set_options}'
    )
    for slug, text in notes.items():
        (root / f"content/notes/{slug}.md").write_text(text)
    return root


def test_a_note_with_an_entry_index_lists_itself(tmp_path):
    """A note rendered before its row is saved would miss itself in its own entry index: such
    a note still renders after the save."""
    root = _entry_set_site(
        tmp_path,
        "",
        {
            "listing": '+++\ntitle = "Index"\ndate = 2025-03-01\nresultTitle = "Zorn lemma"\n'
            '+++\n{{< entry-a-to-z set="results" >}}\n'
        },
    )
    load(root)
    assert "Zorn lemma" in Note.objects.get(slug="listing").rendered_html


def test_note_import_alone_still_writes_its_revision_and_citations(tmp_path):
    """note_import (one note, its own batch) writes at once what a site import writes."""
    site = read_site(write_site(tmp_path / "site", 1))
    hugo_site_load(site=HugoSite(**{**site.__dict__, "notes": []}))  # the bibliography only
    source = NoteSource(
        path="n.md",
        slug="n",
        body='\\cite{key1}\n\n{{< references bib="bib/refs.bib" >}}\n',
        title="N",
        date=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        tags=["A"],
    )
    note, outcome = loading.note_import(source=source)
    assert outcome == "created"
    assert same_metadata(note.revisions.get().metadata, note_metadata(note))
    assert [row[2] for row in citation_rows(note)] == ["key1"]


def test_an_entry_index_by_tag_lists_notes_imported_before_it_in_the_batch(tmp_path):
    """Tags of new notes are written in bulk, but before any render that may list notes by
    tag: an index of a tagged entry set sees the notes imported before it."""
    root = _entry_set_site(
        tmp_path,
        'tag = "Results"\n',
        {
            "a-entry": '+++\ntitle = "Entry"\ndate = 2025-03-01\nresultTitle = "Zorn lemma"\n'
            'tags = ["Results"]\n+++\nText.\n',
            "b-index": '+++\ntitle = "Index"\ndate = 2025-03-01\n+++\n'
            '{{< entry-a-to-z set="results" >}}\n',
        },
    )
    load(root)
    assert "Zorn lemma" in Note.objects.get(slug="b-index").rendered_html


def test_an_imported_site_and_note_keep_their_math_macros(tmp_path):
    """import_hugo puts a MathJax tex.macros table of hugo.toml in the site's macros and a
    note's mathMacros in its own; the note's formulas use both without a warning."""
    root = tmp_path / "site"
    (root / "content/notes").mkdir(parents=True)
    (root / "hugo.toml").write_text(
        'title = "X"\n[params.mathjax.tex.macros]\nR = "\\\\mathbb{R}"\n'
        'norm = ["\\\\lVert #1 \\\\rVert", 1]\n'
    )
    (root / "content/notes/m.md").write_text(
        "+++\ntitle = \"M\"\nmathMacros = '\\DeclareMathOperator{\\tr}{tr}'\n+++\n"
        "$\\tr A \\in \\R$, $\\norm{x}$\n"
    )
    load(root)
    site = SiteSettings.objects.current()
    assert site.math_macros == (
        "\\newcommand{\\R}{\\mathbb{R}}\n\\newcommand{\\norm}[1]{\\lVert #1 \\rVert}"
    )
    note = Note.objects.get(slug="m")
    assert note.math_macros == "\\DeclareMathOperator{\\tr}{tr}"
    assert note.render_warnings == []
    assert 'mathvariant="double-struck">R</mi>' in note.rendered_html


def test_math_macros_survive_an_export_and_a_new_import(tmp_path):
    """export_hugo writes the site's macros as params.mathMacros and a note's as front matter
    mathMacros; reading the export gives them back unchanged."""
    site = SiteSettings.objects.current()
    site.math_macros = "\\newcommand{\\R}{\\mathbb{R}}"
    site.save()
    Note.objects.create(slug="m", title="M", body="$\\R$", math_macros="\\def\\x{y}")
    export_site(tmp_path / "out")
    again = read_site(tmp_path / "out")
    assert again.config.settings["math_macros"] == "\\newcommand{\\R}{\\mathbb{R}}"
    (note,) = [note for note in again.notes if note.slug == "m"]
    assert note.math_macros == "\\def\\x{y}"


def test_an_import_over_a_live_version_keeps_its_published_entries(
    client, author, published, bibfile
):
    """Under require review, importing new text for a published note renders the entries it
    cited as they were published, not the changed file's: an import changes the text."""
    require_review()
    replace_title(author, bibfile, "Literate Programming Revisited")
    loading.note_import(
        source=NoteSource(
            path=f"{published.slug}.md", slug=published.slug, title="Heat equation, imported",
            date=published.date - dt.timedelta(days=1), body="Imported. " + BODY,
        )
    )  # fmt: skip
    page = public_text(client, f"/notes/{published.slug}/")
    assert "Imported." in page and "Revisited" not in page


def test_an_export_leaves_out_the_notes_in_the_trash(tmp_path):
    """A trashed note is on its way out: exported, a re-import would bring it back as a draft."""
    from django.utils import timezone

    Note.objects.create(slug="kept", title="Kept", body="Here.")
    Note.objects.create(slug="binned", title="Binned", body="Gone.", deleted_at=timezone.now())
    export_site(tmp_path / "out")
    notes = tmp_path / "out" / "content" / "notes"
    assert (notes / "kept.md").exists()
    assert not (notes / "binned.md").exists()
    assert [note.slug for note in read_site(tmp_path / "out").notes] == ["kept"]


def test_a_site_of_several_batches_loads_as_one(tmp_path, monkeypatch):
    """Notes are read and written NOTES_PER_BATCH at a time: a site of three batches (a
    slug repeated across two of them, a note referring to a label of a later batch) stores
    every note, revision and citation row as one batch does, and advance() counts them."""
    root = write_site(tmp_path / "site", 7)
    (root / "content/notes/note-000.md").write_text(
        (root / "content/notes/note-000.md").read_text() + "\nSee \\ref{note-006:eq}.\n"
    )
    (root / "content/notes/note-006.md").write_text(
        (root / "content/notes/note-006.md").read_text() + "\n$$x = 1 \\label{eq}$$\n"
    )
    (root / "content/notes/zz-again.md").write_text(
        '+++\ntitle = "Again"\nslug = "note-001"\ndate = 2025-03-02\n+++\nNew.\n'
    )
    monkeypatch.setattr(loading.site, "NOTES_PER_BATCH", 3)
    counted = []
    report = hugo_site_load(site=read_site(root), advance=counted.append)
    assert counted == [3, 3, 2]
    assert dict(report.counts["notes"]) == {"created": 7, "updated": 1}
    assert Note.objects.count() == 7
    assert list(Note.objects.get(slug="note-001").revisions.values_list("number", flat=True)) == [
        2,
        1,
    ]
    assert NoteRevision.objects.count() == 8
    cited = {note.slug: citation_rows(note) for note in Note.objects.exclude(slug="note-001")}
    assert all(cited.values()) and len(cited) == 6
    first = Note.objects.get(slug="note-000")
    assert "ref-unresolved" not in {warning["code"] for warning in first.render_warnings}
    # Again: the two files of note-001 each change it back, as in one batch.
    assert dict(load(root).counts["notes"]) == {"unchanged": 6, "updated": 2}
