"""Write paths for notes, pages, authors and tags."""

from __future__ import annotations

import datetime as dt

import pytest

from notes.models import Author, Note, NoteRevision, Page, Status, Tag
from notes.services import author_for_identity, note_import, page_import, tag_get_or_create
from scidraft.hugo import NoteSource, PageSource


def source(**fields) -> NoteSource:
    fields.setdefault("slug", "n")
    fields.setdefault("path", "content/notes/n.md")
    fields.setdefault("body", "Text with \\(x\\).")
    fields.setdefault("title", "A note")
    fields.setdefault("date", dt.datetime(2026, 9, 22, 7, 20, tzinfo=dt.UTC))
    return NoteSource(**fields)


@pytest.mark.django_db
def test_note_import_creates_a_note_with_an_import_revision():
    """A new note is stored with its fields, ordered authors and tags, and revision 1."""
    note, outcome = note_import(
        source=source(
            authors=["Ada Novak", "halden-lab"],
            tags=["Lemma", "Probability"],
            params={"mathTitle": "X"},
            show_title=True,
        )
    )
    assert outcome == "created"
    assert note.status == Status.PUBLISHED and note.show_title is True
    assert note.params == {"mathTitle": "X"}
    assert [link.author.handle for link in note.authorships.all()] == ["ada-novak", "halden-lab"]
    assert set(note.tags.values_list("name", flat=True)) == {"Lemma", "Probability"}
    revision = note.revisions.get()
    assert (revision.number, revision.kind, revision.body) == (1, "import", note.body)
    assert revision.metadata["tags"] == ["Lemma", "Probability"]


@pytest.mark.django_db
def test_note_import_is_idempotent():
    """Importing the same source twice changes nothing and records no second revision."""
    note_import(source=source(tags=["A"], authors=["x"]))
    note, outcome = note_import(source=source(tags=["A"], authors=["x"]))
    assert outcome == "unchanged"
    assert note.version == 1
    assert NoteRevision.objects.count() == 1


@pytest.mark.django_db
def test_a_changed_source_updates_in_place_and_bumps_the_version():
    """An edit keeps the row, increases `version` and adds a revision."""
    first, _ = note_import(source=source())
    note, outcome = note_import(source=source(body="New text."))
    assert outcome == "updated" and note.pk == first.pk
    assert note.version == 2
    assert list(note.revisions.values_list("number", flat=True)) == [2, 1]


@pytest.mark.django_db
def test_author_order_change_counts_as_an_update():
    """Swapping the first author changes the card's @handle, so it is an update."""
    note_import(source=source(authors=["a", "b"]))
    note, outcome = note_import(source=source(authors=["b", "a"]))
    assert outcome == "updated"
    assert [link.author.handle for link in note.authorships.all()] == ["b", "a"]


@pytest.mark.django_db
def test_draft_flag_maps_to_draft_status():
    """`draft = true` in front matter stores a draft, which readers never see."""
    note, _ = note_import(source=source(draft=True))
    assert note.status == Status.DRAFT
    assert not Note.objects.published().exists()


@pytest.mark.django_db
def test_author_identity_reuses_existing_authors_and_keeps_their_names():
    """A handle or display name maps to one Author; an admin's name edit survives."""
    author = author_for_identity("Ada Novak")
    author.name = "Dr. Ada Novak"
    author.save()
    assert author_for_identity("Ada Novak") == author
    assert Author.objects.get(handle="ada-novak").name == "Dr. Ada Novak"


@pytest.mark.django_db
def test_tags_whose_urls_collide_get_distinct_slugs():
    """ "C" and "C++" urlize alike; both are kept, with different slugs."""
    first, second = tag_get_or_create("C"), tag_get_or_create("C++")
    assert first.slug == "c" and second.slug == "c-2"
    assert tag_get_or_create("C++") == second
    assert Tag.objects.count() == 2


@pytest.mark.django_db
def test_page_import_maps_layout_and_toggles():
    """Standalone pages keep their layout and PaperMod toggles; unset toggles stay null."""
    page, outcome = page_import(
        source=PageSource(
            path="content/search.md",
            slug="search",
            body="",
            title="Search",
            layout="search",
            placeholder="Find…",
            flags={"search_hidden": True, "show_toc": False},
        )
    )
    assert outcome == "created"
    assert (page.layout, page.placeholder, page.search_hidden) == ("search", "Find…", True)
    assert page.show_toc is False and page.show_reading_time is None
    assert (
        page_import(
            source=PageSource(
                path="content/search.md",
                slug="search",
                body="",
                title="Search",
                layout="search",
                placeholder="Find…",
                flags={"search_hidden": True, "show_toc": False},
            )
        )[1]
        == "unchanged"
    )
    assert Page.objects.count() == 1
