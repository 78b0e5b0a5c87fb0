"""Renders cut short by time: never stored as final, completed in the background."""

from __future__ import annotations

import pytest

from notes import completion
from notes.models import Note, NoteCitation
from notes.rendering import INCOMPLETE, PENDING
from notes.services import note_publish, note_render_store, note_save
from notes.services.renders import note_render_complete

# A tiny fraction of the usual time: every render runs out of it at its first construct.
NO_TIME = 1e-9
BODY = "**Bold** and $x^2$.\n\n$$\\int_0^1 f(x)\\,dx$$\n\nThe second version."


def _save(note_obj, body: str, user) -> Note:
    return note_save(
        note_id=note_obj.pk, user=user, base_version=note_obj.version, fields={"body": body}
    ).note


def _fresh(note_obj) -> Note:
    return Note.objects.get(pk=note_obj.pk)


@pytest.mark.django_db
def test_a_render_cut_short_keeps_the_previous_complete_render(
    note, author, settings, django_capture_on_commit_callbacks
):
    """Saved while time runs out, the note keeps the render readers had (marked pending),
    and a completion is queued for after the write commits."""
    note = _save(note, "The first version.", author)
    before = _fresh(note)
    settings.RENDER_TIME_PERCENT = 100 * NO_TIME
    with django_capture_on_commit_callbacks() as callbacks:
        _save(before, BODY, author)
    stored = _fresh(note)
    assert stored.body == BODY
    assert stored.rendered_html == before.rendered_html
    assert "The first version." in stored.rendered_html
    assert stored.source_hash == before.source_hash
    assert stored.render_flags[PENDING] is True and INCOMPLETE not in stored.render_flags
    assert len(callbacks) == 1


@pytest.mark.django_db
def test_without_a_previous_render_the_incomplete_one_is_stored_flagged(
    note, author, settings, django_capture_on_commit_callbacks
):
    """A note with nothing complete to show stores the render cut short, flagged as such."""
    settings.RENDER_TIME_PERCENT = 100 * NO_TIME
    with django_capture_on_commit_callbacks():
        _save(note, BODY, author)
    stored = _fresh(note)
    assert stored.render_flags[INCOMPLETE] is True
    assert "render-incomplete" in {warning["code"] for warning in stored.render_warnings}
    assert "katex" not in stored.rendered_html


@pytest.mark.django_db
def test_the_completion_stores_the_complete_render(
    note, author, settings, django_capture_on_commit_callbacks
):
    """The completion renders again with more time and stores a complete render, its
    citation rows included; nothing is owed afterwards."""
    note = _save(note, "The first version.", author)
    settings.RENDER_TIME_PERCENT = 100 * NO_TIME
    settings.RENDER_COMPLETION_TIME_SCALE = int(1 / NO_TIME)
    with django_capture_on_commit_callbacks():
        _save(note, BODY, author)
    assert note_render_complete(note_id=note.pk) is True
    stored = _fresh(note)
    assert "The second version." in stored.rendered_html and "katex" in stored.rendered_html
    assert PENDING not in stored.render_flags and INCOMPLETE not in stored.render_flags
    assert stored.render_warnings == []
    assert note_render_complete(note_id=note.pk) is True  # nothing owed: nothing rendered


@pytest.mark.django_db
def test_a_render_that_never_fits_is_stored_final_with_a_warning_on_the_last_try(
    note, author, settings, django_capture_on_commit_callbacks
):
    """Before the last try a completion still cut short stores nothing; the last try stores
    what it reached as final, with a warning saying so."""
    settings.RENDER_TIME_PERCENT = 100 * NO_TIME
    settings.RENDER_COMPLETION_TIME_SCALE = 2
    with django_capture_on_commit_callbacks():
        _save(note, BODY, author)
    assert note_render_complete(note_id=note.pk) is False
    assert _fresh(note).render_flags[INCOMPLETE] is True
    assert note_render_complete(note_id=note.pk, final=True) is True
    stored = _fresh(note)
    assert INCOMPLETE not in stored.render_flags and PENDING not in stored.render_flags
    codes = [warning["code"] for warning in stored.render_warnings]
    assert "render-cut-short" in codes and "render-incomplete" not in codes


@pytest.mark.django_db
def test_the_completion_renders_the_body_as_it_is_when_it_runs(
    note, author, settings, django_capture_on_commit_callbacks
):
    """A body changed after the render that was cut short is what the completion stores."""
    settings.RENDER_TIME_PERCENT = 100 * NO_TIME
    with django_capture_on_commit_callbacks():
        _save(note, BODY, author)
    settings.RENDER_TIME_PERCENT = 100
    Note.objects.filter(pk=note.pk).update(body="Changed meanwhile.")
    assert note_render_complete(note_id=note.pk) is True
    assert _fresh(note).rendered_html == "<p>Changed meanwhile.</p>\n"


@pytest.mark.django_db
def test_a_page_from_an_incomplete_render_is_not_cached(
    client, note, author, settings, django_capture_on_commit_callbacks
):
    """Readers of a note whose stored render was cut short get it uncached (no-store), every
    time; once the complete render is stored the page is cached as usual."""
    settings.RENDER_TIME_PERCENT = 100 * NO_TIME
    settings.RENDER_COMPLETION_TIME_SCALE = int(1 / NO_TIME)
    with django_capture_on_commit_callbacks():
        saved = _save(note, BODY, author)
        note_publish(note_id=note.pk, user=author, base_version=saved.version)
    assert _fresh(note).render_flags[INCOMPLETE] is True
    url = f"/notes/{note.slug}/"
    for _ in range(2):
        response = client.get(url)
        assert response.status_code == 200
        assert "no-store" in response["Cache-Control"] and "X-Cache" not in response
    note_render_complete(note_id=note.pk)
    assert client.get(url)["X-Cache"] == "miss"
    assert client.get(url)["X-Cache"] == "hit"


@pytest.mark.django_db(transaction=True)
def test_the_completion_runs_in_the_background_after_the_save(author, settings):
    """Saved with too little time, the note is completed by the process's completion thread
    once the save commits, without anyone asking again."""
    from notes.services import note_create

    note_obj = note_create(user=author, title="Background")
    settings.RENDER_TIME_PERCENT = 100 * NO_TIME
    settings.RENDER_COMPLETION_TIME_SCALE = int(1 / NO_TIME)
    _save(note_obj, BODY + "\n\n\\cite{knuth}\n\n{{< references >}}", author)
    assert completion.wait(120)
    stored = _fresh(note_obj)
    assert "katex" in stored.rendered_html and "The second version." in stored.rendered_html
    assert PENDING not in stored.render_flags and INCOMPLETE not in stored.render_flags
    assert NoteCitation.objects.filter(note=stored, key="knuth").exists()


@pytest.mark.django_db
def test_a_stored_render_cut_short_elsewhere_is_owed_and_rendered_on_store(note, settings):
    """note_render_store with time to spare replaces a flagged render (a rerun, a read)."""
    settings.RENDER_TIME_PERCENT = 100 * NO_TIME
    note.body = BODY
    note.save()
    note_render_store(note=note, force=True)
    assert _fresh(note).render_flags[INCOMPLETE] is True
    settings.RENDER_TIME_PERCENT = 100
    note_render_store(note=note, force=True)
    assert INCOMPLETE not in _fresh(note).render_flags


@pytest.mark.django_db
def test_a_page_cut_short_keeps_its_render_and_is_completed(
    client, settings, django_capture_on_commit_callbacks
):
    """Pages follow the same rule: a render cut short keeps the complete one (pending) and a
    completion queued after the write; one with nothing before is shown uncached, and the
    completion stores the complete render."""
    from notes.models import Page
    from notes.services.renders import page_render_complete, page_render_store

    page = Page.objects.create(slug="about", title="About", body="The first version.")
    page_render_store(page=page)
    before = Page.objects.get(pk=page.pk)
    settings.RENDER_TIME_PERCENT = 100 * NO_TIME
    page.body = BODY
    page.save()
    with django_capture_on_commit_callbacks() as callbacks:
        page_render_store(page=page)
    kept = Page.objects.get(pk=page.pk)
    assert kept.rendered_html == before.rendered_html and kept.render_flags[PENDING] is True
    assert len(callbacks) == 1

    fresh = Page.objects.create(slug="fresh", title="Fresh", body=BODY)
    with django_capture_on_commit_callbacks():
        page_render_store(page=fresh)
    assert Page.objects.get(pk=fresh.pk).render_flags[INCOMPLETE] is True
    response = client.get("/fresh/")
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]

    settings.RENDER_COMPLETION_TIME_SCALE = int(1 / NO_TIME)
    assert page_render_complete(page_id=fresh.pk) is True
    assert "katex" in Page.objects.get(pk=fresh.pk).rendered_html
    assert client.get("/fresh/")["X-Cache"] == "miss"
    assert client.get("/fresh/")["X-Cache"] == "hit"
