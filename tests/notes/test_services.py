"""Write paths for notes, pages, authors and tags."""

from __future__ import annotations

import datetime as dt

import pytest

from hugosite.loading import note_import, page_import
from hugosite.reading import NoteSource, PageSource
from notes.models import Author, Note, NoteRevision, Page, Status, Tag
from notes.services import author_for_identity, tag_get_or_create
from tests.factories import bib_file, draft_note, publish, site_bib_file
from tests.people import user_in_group


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


# --- Default bibliographies: note_bibliographies_set --------------------------------------------

CITING = "As \\cite{knuth} and \\cite{lamport} show.\n\n{{< references >}}\n"


@pytest.fixture
def bib_setup(db):
    """ada's published note citing knuth and lamport, ada's file with knuth, bert's file with
    lamport and a site file with lamport too."""
    users = {
        name: user_in_group(name, group)
        for name, group in (("ada", "Author"), ("bert", "Author"), ("eve", "Editor"))
    }
    ada = users["ada"]
    files = {
        "ada": bib_file(ada, "bib/ada.bib", "@book{knuth, title={The Art}, author={Knuth, D}}"),
        "bert": bib_file(users["bert"], "bib/bert.bib", "@book{lamport, title={Bert's LaTeX}}"),
        "site": site_bib_file("bib/site.bib", "@book{lamport, title={Site LaTeX}}"),
    }
    note = publish(draft_note(ada, "Cites", body=CITING), ada)
    note.refresh_from_db()
    return users, files, note


def _problems(note) -> set[str]:
    """The citation warnings of what the authors edit (the published note's working copy)."""
    warnings = note.editor_copy.render_warnings
    return {w["code"] for w in warnings if w["code"].startswith(("bib-", "cite-"))}


def _attached(note) -> list[str]:
    """The default bibliographies of what the authors edit."""
    from notes.services import working_state

    return working_state(Note.objects.get(pk=note.pk))["bibliographies"]


def _live(note) -> list[str]:
    return list(
        note.bibliography_links.order_by("position").values_list("bibfile__name", flat=True)
    )


def test_note_bibliographies_set_attaches_in_order_and_resolves_citations(bib_setup):
    """The files are kept in the order given, and the render of what the authors edit resolves
    citations against them at once; publishing the changes makes them the note's."""
    from notes.services import note_bibliographies_set, note_publish

    users, files, note = bib_setup
    assert _problems(note) == {"bib-missing"}
    note_bibliographies_set(
        note_id=note.pk, user=users["ada"], bibfile_ids=[files["site"].pk, files["ada"].pk]
    )
    note = Note.objects.get(pk=note.pk)
    assert _attached(note) == ["bib/site.bib", "bib/ada.bib"]
    copy = note.editor_copy
    assert "The Art" in copy.rendered_html and "Site LaTeX" in copy.rendered_html
    assert _problems(note) == set()
    assert _live(note) == []  # readers: not yet
    assert not note.citations.exclude(bib_name="").exists()
    note_publish(note_id=note.pk, user=users["ada"], base_version=note.version)
    note = Note.objects.get(pk=note.pk)
    assert _live(note) == ["bib/site.bib", "bib/ada.bib"] and not note.has_unpublished_changes
    assert "The Art" in note.rendered_html
    assert set(note.citations.values_list("key", "bib_name")) == {
        ("knuth", "bib/ada.bib"),
        ("lamport", "bib/site.bib"),
    }
    note_bibliographies_set(note_id=note.pk, user=users["ada"], bibfile_ids=[files["ada"]])
    note = Note.objects.get(pk=note.pk)
    assert _attached(note) == ["bib/ada.bib"]
    assert "missing reference: lamport" in note.editor_copy.rendered_html
    assert _problems(note) == {"cite-missing"}


def test_note_bibliographies_set_leaves_readers_alone_until_published(bib_setup):
    """Attaching files to a published note changes its working copy only: the content
    generation (every cached page) moves when the change is published, not before."""
    from notes.services import note_bibliographies_set, note_publish
    from scidraft.site.models import ContentGeneration

    users, files, note = bib_setup
    before = ContentGeneration.objects.value()
    note_bibliographies_set(note_id=note.pk, user=users["ada"], bibfile_ids=[files["ada"].pk])
    assert ContentGeneration.objects.value() == before
    note = Note.objects.get(pk=note.pk)
    note_publish(note_id=note.pk, user=users["ada"], base_version=note.version)
    assert ContentGeneration.objects.value() > before
    unchanged = ContentGeneration.objects.value()
    note_bibliographies_set(note_id=note.pk, user=users["ada"], bibfile_ids=[files["ada"].pk])
    assert ContentGeneration.objects.value() == unchanged  # same list: nothing written
    assert not Note.objects.get(pk=note.pk).has_unpublished_changes


def test_note_bibliographies_set_refuses_files_the_user_may_not_use(bib_setup):
    """Another author's file is refused and the note keeps its files; an Editor may attach it."""
    from django.core.exceptions import PermissionDenied

    from notes.services import note_bibliographies_set

    users, files, note = bib_setup
    note_bibliographies_set(note_id=note.pk, user=users["ada"], bibfile_ids=[files["ada"].pk])
    with pytest.raises(PermissionDenied, match=str(files["bert"].pk)):
        note_bibliographies_set(
            note_id=note.pk, user=users["ada"], bibfile_ids=[files["bert"].pk, files["ada"].pk]
        )
    with pytest.raises(PermissionDenied):
        note_bibliographies_set(note_id=note.pk, user=users["ada"], bibfile_ids=[999_999])
    assert _attached(note) == ["bib/ada.bib"]
    note_bibliographies_set(
        note_id=note.pk, user=users["eve"], bibfile_ids=[files["ada"].pk, files["bert"].pk]
    )
    assert _attached(note) == ["bib/ada.bib", "bib/bert.bib"]
    # ada may keep (and reorder) bert's file now that it is attached, though not add it anew.
    note_bibliographies_set(
        note_id=note.pk, user=users["ada"], bibfile_ids=[files["bert"].pk, files["ada"].pk]
    )
    assert _attached(note) == ["bib/bert.bib", "bib/ada.bib"]


def test_note_bibliographies_set_needs_a_note_the_user_may_edit(bib_setup):
    from django.core.exceptions import PermissionDenied

    from notes.services import note_bibliographies_set

    users, files, note = bib_setup
    with pytest.raises(PermissionDenied):
        note_bibliographies_set(note_id=note.pk, user=users["bert"], bibfile_ids=[files["bert"].pk])
    assert _attached(note) == []
