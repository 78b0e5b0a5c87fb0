"""The editor's Save or Publish click as one service write (note_save_and_publish)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test.utils import CaptureQueriesContext

from notes import services
from notes.models import Note, Status
from notes.rendering import context_for
from notes.services import renders
from scidraft.markup import render
from tests.factories import published_note, site_bib_file
from tests.people import user_in_group

BLOCKED = "See \\ref{nowhere}.\n"


def _kinds(note: Note) -> list[str]:
    return list(note.revisions.order_by("number").values_list("kind", flat=True))


def _click(note: Note, user, **kwargs):
    note = Note.objects.get(pk=note.pk)
    return services.note_save_and_publish(
        note_id=note.pk, user=user, base_version=note.version, **kwargs
    )


def test_a_publish_click_saves_and_publishes_as_one_revision(author, note):
    """The form's text is saved and published; the publish takes the save's revision."""
    write = _click(note, author, fields={"body": "First."}, publish=True)
    saved = Note.objects.get(pk=note.pk)
    assert write.result.note.pk == note.pk and write.problems is None
    assert saved.status == Status.PUBLISHED and saved.body == "First."
    assert _kinds(saved) == ["save", "publish"]


def test_a_save_click_saves_without_publishing(author, note):
    """Without `publish`, the text is saved and the note stays a draft."""
    write = _click(note, author, fields={"body": "Draft."})
    saved = Note.objects.get(pk=note.pk)
    assert saved.status == Status.DRAFT and saved.body == "Draft." and write.problems is None


def test_blocking_warnings_save_and_wait_for_confirmation(author, note):
    """A render with blocking warnings is saved, not published, and its warnings returned;
    confirmed, the same click publishes."""
    write = _click(note, author, fields={"body": BLOCKED}, publish=True)
    saved = Note.objects.get(pk=note.pk)
    assert [problem["code"] for problem in write.problems] == ["ref-unresolved"]
    assert saved.status == Status.DRAFT and saved.body == BLOCKED
    write = _click(note, author, fields={"body": BLOCKED}, publish=True, confirmed=True)
    assert write.problems is None
    assert Note.objects.get(pk=note.pk).status == Status.PUBLISHED


def test_a_coauthor_waiting_for_consent_keeps_the_save_and_says_why(author, note):
    """Naming a co-author who has not confirmed saves the byline; the publish is refused with
    the reason, and nothing goes public."""
    alice = user_in_group("alice", "Author", first_name="Alice", last_name="Author")
    handles = [services.author_for_user(user).handle for user in (author, alice)]
    write = _click(note, author, fields={"body": "Text.", "authors": handles}, publish=True)
    saved = Note.objects.get(pk=note.pk)
    assert "Alice Author" in write.not_published
    assert saved.status == Status.DRAFT and saved.body == "Text."
    assert write.result.note.status == Status.DRAFT


def test_a_user_who_may_not_publish_is_refused_after_the_save(author, note):
    """Without the publish permission the click's save stands and PermissionDenied follows."""
    author.groups.clear()
    author.user_permissions.add(Permission.objects.get(codename="edit_any_note"))
    author = type(author).objects.get(pk=author.pk)
    with pytest.raises(PermissionDenied):
        _click(note, author, fields={"body": "Kept."}, publish=True)
    saved = Note.objects.get(pk=note.pk)
    assert saved.body == "Kept." and saved.status == Status.DRAFT


def test_a_conflict_writes_nothing_and_does_not_publish(author, note):
    """A stale base version is a conflict: no publish, the note as it was."""
    _click(note, author, fields={"body": "Theirs."})
    write = services.note_save_and_publish(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Mine."},
        publish=True,
    )  # fmt: skip
    saved = Note.objects.get(pk=note.pk)
    assert write.result.conflict and saved.body == "Theirs." and saved.status == Status.DRAFT


REFS = """@article{knuth84, author = {Knuth, Donald E.}, title = {Literate Programming},
  journal = {The Computer Journal}, year = {1984}}
@book{lamport94, author = {Lamport, Leslie}, title = {{\\LaTeX}: A Document Preparation System},
  publisher = {Addison-Wesley}, year = {1994}}
"""
CITING = 'As \\cite{knuth84} and \\cite{lamport94} show.\n\n{{< references bib="refs.bib" >}}\n'


def _stored(note: Note) -> tuple:
    note = Note.objects.get(pk=note.pk)
    rows = list(note.citations.order_by("list_index", "number").values_list("bib_name", "key"))
    return note.rendered_html, note.render_citations, note.source_hash, rows


def _counting_renders(monkeypatch) -> list[str]:
    """The bodies the note renders of this process render from here on."""
    bodies = []
    render_note = renders.render_note

    def counting(note, context=None):
        bodies.append(note.body)
        return render_note(note, context)

    monkeypatch.setattr(renders, "render_note", counting)
    return bodies


def test_publishing_a_clicks_changes_stores_the_render_its_save_made(author, monkeypatch):
    """A published note's changes were rendered by the click's save (its working copy); the
    publish stores that render, reference list and citation rows as a render of the note
    gives them, instead of rendering the same text again."""
    site_bib_file("refs.bib", REFS)
    note = published_note(author, body="Text.")
    bodies = _counting_renders(monkeypatch)
    _click(note, author, fields={"body": CITING}, publish=True)
    assert bodies == []
    published = _stored(note)
    assert "Literate Programming" in published[0] and published[3] == [
        ("refs.bib", "knuth84"),
        ("refs.bib", "lamport94"),
    ]
    renders.note_render_store(note=Note.objects.get(pk=note.pk), force=True)
    assert bodies == [CITING] and _stored(note) == published


def test_a_publish_renders_again_what_changed_since_the_save(author, monkeypatch):
    """The save's render is the note's only for the same text in the same context: a click
    that also changes the note's default bibliographies (set after the save) renders the
    published text anew, and its list reads the newly chosen file."""
    site_bib_file("refs.bib", REFS)
    other = site_bib_file("other.bib", REFS.replace("Literate Programming", "Literate Proofs"))
    note = published_note(author, body="Text.")
    bodies = _counting_renders(monkeypatch)
    body = "As \\cite{knuth84} shows.\n\n{{< references >}}\n"
    _click(note, author, fields={"body": body}, bibliographies=[other.pk], publish=True)
    html = _stored(note)[0]
    assert bodies == [body] and "Literate Proofs" in html and "Literate Programming" not in html


def test_a_render_from_another_text_is_never_stored_as_the_notes(author):
    """note_render_store stores a FreshRender only when its hash is the note's own."""
    published = published_note(author, body="The live text.")
    stale = renders.FreshRender(render("Another text.", context_for(published)), "0" * 64)
    renders.note_render_store(note=published, force=True, fresh=stale)
    assert "The live text." in _stored(published)[0]


def test_a_publish_click_sends_the_rendered_html_once_and_reads_the_row_state_once(author):
    """The fields' UPDATE leaves the render's columns to the render's own, and the save reads
    the live note's state once to compare its working copy with (no copy: the row is it)."""
    note = published_note(author, body="Text $x$.")
    with CaptureQueriesContext(connection) as queries:
        _click(note, author, fields={"body": "Changed $y$."}, publish=True)
    sql = [query["sql"] for query in queries.captured_queries]
    updates = [query for query in sql if query.startswith('UPDATE "notes_note"')]
    assert sum('"rendered_html" =' in query for query in updates) == 1
    tag_reads = [query for query in sql if query.startswith("SELECT") and '"notes_tag"' in query]
    # The save's state, the publish's state and the revision's: three.
    assert len(tag_reads) == 3, tag_reads
    published = Note.objects.get(pk=note.pk)
    assert published.body == "Changed $y$." and "Changed" in published.rendered_html
    assert published.has_body and published.version > note.version
