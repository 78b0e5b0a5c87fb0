"""Which writes bump the content generation (scidraft.site.receivers): everything a reader could
see, and nothing about a note that is and was a draft (an author's autosaves must not empty
everyone's page cache)."""

from __future__ import annotations

import pytest

from notes.models import Note, Status, Tag
from scidraft.site.models import ContentGeneration
from tests.factories import note_row


def generation() -> int:
    return ContentGeneration.objects.filter(pk=1).values_list("value", flat=True).first() or 0


@pytest.fixture
def draft(db):
    return note_row("draft-note", "Text.", title="Draft", status=Status.DRAFT)


@pytest.mark.django_db
def test_creating_and_editing_a_draft_does_not_bump(draft):
    tag = Tag.objects.create(name="Unseen", slug="unseen")
    before = generation()
    draft.title = "Still a draft"
    draft.save()
    reloaded = Note.objects.get(pk=draft.pk)
    reloaded.body = "Edited text."
    reloaded.save()
    reloaded.tags.add(tag)
    Note.objects.create(slug="another-draft", title="Another", body="Text.", status=Status.DRAFT)
    assert generation() == before


@pytest.mark.django_db
def test_submitting_a_draft_for_review_does_not_bump(draft):
    before = generation()
    draft.status = Status.REVIEW
    draft.save()
    assert generation() == before


@pytest.mark.django_db
def test_publishing_a_draft_bumps(draft):
    before = generation()
    note = Note.objects.get(pk=draft.pk)
    note.status = Status.PUBLISHED
    note.save()
    assert generation() == before + 1


@pytest.mark.django_db
def test_unpublishing_bumps_and_the_next_draft_save_does_not(draft):
    note = Note.objects.get(pk=draft.pk)
    note.status = Status.PUBLISHED
    note.save()
    before = generation()
    note.status = Status.DRAFT
    note.save()  # the same instance: it knows the row was published
    assert generation() == before + 1
    note.title = "Back to work"
    note.save()
    assert generation() == before + 1


@pytest.mark.django_db
def test_a_note_read_without_its_status_is_assumed_visible(draft):
    """Deferred status: the receiver cannot tell, so it bumps rather than risk a stale page."""
    note = Note.objects.only("pk", "title").get(pk=draft.pk)
    before = generation()
    note.title = "Unknown status"
    note.save(update_fields=["title"])
    assert generation() == before + 1


@pytest.mark.django_db
def test_editing_or_deleting_a_published_note_bumps(draft):
    Note.objects.filter(pk=draft.pk).update(status=Status.PUBLISHED)
    note = Note.objects.get(pk=draft.pk)
    tag = Tag.objects.create(name="Seen", slug="seen")
    before = generation()
    note.title = "Edited in public"
    note.save()
    assert generation() == before + 1
    note.tags.add(tag)
    assert generation() == before + 2
    Note.objects.get(pk=draft.pk).delete()
    assert generation() == before + 3


@pytest.mark.django_db
def test_attaching_authors_and_bibliographies_to_a_draft_does_not_bump(draft):
    from bibliography.models import BibFile
    from notes.models import Author, NoteAuthor, NoteBibliography

    author = Author.objects.create(name="Ada Lovelace", handle="ada")
    bibfile = BibFile.objects.create(name="bib/draft.bib", raw="")
    note = Note.objects.get(pk=draft.pk)
    before = generation()
    NoteAuthor.objects.create(note=note, author=author, position=0)
    NoteBibliography.objects.create(note=note, bibfile=bibfile, position=0)
    assert generation() == before
    Note.objects.filter(pk=draft.pk).update(status=Status.PUBLISHED)
    NoteAuthor.objects.filter(note=note).delete()
    assert generation() == before + 1


@pytest.fixture(autouse=True)
def _nothing_named_yet():
    from django.db import connection

    connection._page_tags_pending = set()  # what earlier tests' transactions left


def _named() -> set[str]:
    """The dependency tags the writes of this (never committed) test transaction named."""
    from django.db import connection

    return set(getattr(connection, "_page_tags_pending", set()))


@pytest.fixture
def published(draft):
    from django.db import connection

    Note.objects.filter(pk=draft.pk).update(status=Status.PUBLISHED)
    connection._page_tags_pending = set()  # the draft's own creation
    return Note.objects.get(pk=draft.pk)


@pytest.mark.django_db
def test_a_new_title_names_the_note_only(published):
    published.title = "Retitled"
    published.save()
    assert _named() == {"note:draft-note"}


@pytest.mark.django_db
def test_unpublishing_names_the_lists_and_the_neighbours(published):
    tag = Tag.objects.create(name="Heat", slug="heat")
    published.tags.add(tag)
    published.status = Status.DRAFT
    published.save()
    assert {"note:draft-note", "listing:all", "listing:tag:heat"} <= _named()
    assert any(name.startswith("near:") for name in _named()) and "site" not in _named()


@pytest.mark.django_db
def test_a_new_tag_names_its_own_list_and_a_renamed_one_every_page(db):
    tag = Tag.objects.create(name="Fresh", slug="fresh")
    assert _named() == {"listing:tag:fresh"}
    tag.name = "Renamed"
    tag.save()
    assert "site" in _named()


@pytest.mark.django_db
def test_kept_entries_replaced_name_their_note_only(published):
    from notes.models import LiveBibEntry, LiveBibliography

    live = LiveBibliography.objects.create(note=published, keys=["a"], macros="")
    LiveBibEntry.objects.create(live=live, bib_name="refs.bib", key="a", entry_type="article")
    LiveBibliography.objects.filter(note=published).delete()  # the entries go with it
    assert _named() == {"note:draft-note"}


@pytest.mark.django_db
def test_a_setting_names_every_page(db):
    from scidraft.site.models import SiteSettings

    site = SiteSettings.objects.current()
    site.title = "Renamed"
    site.save()
    assert "site" in _named()
