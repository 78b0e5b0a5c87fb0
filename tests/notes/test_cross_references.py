"""`\\ref{slug:label}` to other notes: looked up in one query per render, and only among the
notes the page's reader may see.

A stored render is public, so it resolves against published notes only; the editor's and the
reviewer's previews also against the notes that user may edit. A stored render whose targets
have since been published, unpublished or come due is rendered again when it is next read.
"""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django.utils import timezone

from notes import services
from notes.models import Note, Status
from notes.rendering import context_for
from scidraft.markup import render
from tests.factories import note_row
from tests.people import user_in_group

pytestmark = pytest.mark.django_db

LEMMA = ":::lemma[Shift invariance]{#lem-shift}\nA statement.\n:::\n"
CITING = "See \\Cref{target:lem-shift} for the proof.\n"
MISSING = '<span class="ref-missing"'


def _link(html: str) -> bool:
    return 'href="/notes/target/#lem-shift">Lemma 1</a>' in html


# --- One query per render (item 4) -------------------------------------------------------------


def test_twenty_thousand_cross_note_references_take_one_query(django_assert_max_num_queries):
    """20,000 `\\ref{slug:label}` to 50 notes took a query each (15 s): now all of a render's
    references are looked up together, and resolve as before."""
    for n in range(50):
        note_row(f"note-{n}", f":::lemma{{#lem-{n}}}\nL.\n:::\n", rendered=True)
    body = "\n".join(f"Line \\Cref{{note-{n % 50}:lem-{n % 50}}}." for n in range(20_000))
    context = context_for(None)
    start = time.process_time()
    with django_assert_max_num_queries(1):
        rendered = render(body, context)
    assert time.process_time() - start < 5.0
    assert rendered.html.count('class="ref ref-external"') == 20_000
    assert 'href="/notes/note-7/#lem-7">Lemma 1</a>' in rendered.html
    assert not any(warning.code == "ref-unresolved" for warning in rendered.warnings)


# --- Only what the reader may see (item 10) ----------------------------------------------------


@pytest.mark.parametrize(
    ("status", "days"),
    [
        pytest.param(Status.DRAFT, -1, id="draft"),
        pytest.param(Status.REVIEW, -1, id="in review"),
        pytest.param(Status.PUBLISHED, +3, id="scheduled"),
    ],
)
def test_the_stored_render_does_not_resolve_notes_readers_cannot_see(client, status, days):
    """A published note citing a draft, a note in review or a scheduled note shows `??` and
    warns, on its public page: no label text of the hidden note, no link to it."""
    note_row(
        "target", LEMMA, status=status, date=timezone.now() + dt.timedelta(days=days), rendered=True
    )
    citing = note_row("citing", CITING, rendered=True)
    assert MISSING in citing.rendered_html and not _link(citing.rendered_html)
    assert [warning["code"] for warning in citing.render_warnings] == ["ref-unresolved"]
    page = client.get("/notes/citing/").content.decode()
    assert MISSING in page and "Lemma 1" not in page and "/notes/target/" not in page


def test_a_published_target_resolves_in_the_stored_render():
    """The published case is unchanged: a link with the label's text."""
    note_row("target", LEMMA, rendered=True)
    assert _link(note_row("citing", CITING, rendered=True).rendered_html)


def test_the_editor_preview_resolves_the_authors_own_drafts(client):
    """Ada's preview resolves her own draft; Bert's preview of his note does not see it."""
    ada, bert = user_in_group("ada", "Author"), user_in_group("bert", "Author")
    note_row("target", LEMMA, status=Status.DRAFT, author=ada, rendered=True)
    mine = note_row("mine", "", status=Status.DRAFT, author=ada, rendered=True)
    his = note_row("his", "", status=Status.DRAFT, author=bert, rendered=True)
    client.force_login(ada)
    assert _link(client.post(f"/write/{mine.pk}/preview/", {"content": CITING}).content.decode())
    client.force_login(bert)
    preview = client.post(f"/write/{his.pk}/preview/", {"content": CITING}).content.decode()
    assert MISSING in preview and "Lemma 1" not in preview


def test_an_editors_preview_resolves_any_draft():
    """Editors may read every note, so their previews (the review page) resolve drafts."""
    eve = user_in_group("eve", "Editor")
    note_row("target", LEMMA, status=Status.DRAFT, rendered=True)
    assert _link(render(CITING, context_for(None, reader=eve)).html)
    assert not _link(render(CITING, context_for(None)).html)


# --- Stored renders follow their targets -------------------------------------------------------


def test_a_note_is_rendered_again_when_a_target_is_published_or_unpublished(client):
    """Reading the citing note after its target was published shows the link; after it was
    unpublished, `??` again. Each change costs one render, not one per read."""
    eve = user_in_group("eve", "Editor")
    target = note_row("target", LEMMA, status=Status.DRAFT, rendered=True)
    note_row("citing", CITING, rendered=True)
    services.note_publish(note_id=target.pk, user=eve, base_version=target.version)
    assert _link(client.get("/notes/citing/").content.decode())
    assert _link(Note.objects.get(slug="citing").rendered_html)
    target.refresh_from_db()
    services.note_unpublish(note_id=target.pk, user=eve, base_version=target.version)
    page = client.get("/notes/citing/").content.decode()
    assert MISSING in page and "Lemma 1" not in page
    stored = Note.objects.get(slug="citing")
    assert stored.render_refs == {"target:lem-shift": None}


def test_a_note_is_rendered_again_once_a_scheduled_target_comes_due(client, monkeypatch):
    """No write happens when a scheduled note goes live: the citing note's page resolves it
    once its date has passed."""
    note_row("target", LEMMA, date=timezone.now() + dt.timedelta(hours=1), rendered=True)
    note_row("citing", CITING, rendered=True)
    assert MISSING in client.get("/notes/citing/").content.decode()
    later = timezone.now() + dt.timedelta(hours=2)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert _link(client.get("/notes/citing/").content.decode())


def test_reading_a_current_note_costs_no_render(client, monkeypatch):
    """A note whose references still resolve as stored is not rendered again on read."""
    note_row("target", LEMMA, rendered=True)
    note_row("citing", CITING, rendered=True)
    calls = []
    monkeypatch.setattr(
        "notes.views.note_render_store", lambda **kwargs: calls.append(kwargs["note"].slug)
    )
    client.get("/notes/citing/")
    client.get("/")
    assert calls == []
