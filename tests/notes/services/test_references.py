"""Publishing a published note's changed reference lists (notes.services.references): an
Editor's publish makes them live at once, an Author's asks for review, and nothing is published
while no cited file changed."""

from __future__ import annotations

from notes import services
from notes.models import LiveBibliography, Note, NoteRevision
from tests.cited_files import (
    bibfile,
    public_text,
    published,
    replace_title,
    require_review,
)

__all__ = ["bibfile", "published"]  # fixtures

NEW = "Literate Programming Revisited"


def test_an_editors_publish_makes_the_changed_list_live(
    client, author, editor_user, published, bibfile
):
    """An Editor's "Publish changes" on a note whose cited file changed publishes the new list
    (no review request), records it, and keeps the new entries."""
    require_review()
    replace_title(author, bibfile, NEW)
    note = Note.objects.get(pk=published.pk)
    result = services.note_publish(note_id=note.pk, user=editor_user, base_version=note.version)
    assert result.revision.kind == NoteRevision.Kind.PUBLISH
    assert result.revision.message == "Published the changed reference lists"
    assert result.note.version == note.version + 1
    assert not services.awaiting_review(result.note)
    assert NEW in public_text(client, f"/notes/{published.slug}/")
    live = LiveBibliography.objects.get(note=published)
    assert not live.changed and live.entries.get(key="knuth84").fields["title"] == NEW


def test_an_authors_publish_asks_for_review(client, author, published, bibfile):
    """An Author's publish submits a working copy equal to the live version, rendered with
    the new entries; readers keep the published list."""
    require_review()
    replace_title(author, bibfile, NEW)
    note = Note.objects.get(pk=published.pk)
    result = services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    copy = result.note.working
    assert copy is not None and copy.in_review and copy.body == note.body
    assert NEW in copy.rendered_html
    assert NEW not in public_text(client, f"/notes/{published.slug}/")


def test_nothing_is_published_while_no_cited_file_changed(author, published):
    """A published note without changes and with its files as published has nothing to
    publish, review required or not."""
    require_review()
    note = Note.objects.get(pk=published.pk)
    result = services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    assert result.revision is None and result.note.working is None


def test_saving_the_unchanged_text_keeps_the_review_request(author, published, bibfile):
    """A save of the live text does not withdraw a request to publish changed references."""
    require_review()
    replace_title(author, bibfile, NEW)
    note = Note.objects.get(pk=published.pk)
    result = services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    result = services.note_save(
        note_id=note.pk, user=author, base_version=result.note.version,
        fields={"body": note.body},
    )  # fmt: skip
    assert services.awaiting_review(Note.objects.get(pk=note.pk))


def test_unpublishing_drops_the_kept_entries(author, published):
    """A note back to draft has no live version, so nothing is kept for it."""
    note = Note.objects.get(pk=published.pk)
    assert LiveBibliography.objects.filter(note=note).exists()
    services.note_unpublish(note_id=note.pk, user=author, base_version=note.version)
    assert not LiveBibliography.objects.filter(note=note).exists()
