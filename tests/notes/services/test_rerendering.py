"""Rendering every note again (notes.services.rerendering): over worker processes, written in
batches, one content generation for the run, never half a note, never a cut-short render as
final."""

from __future__ import annotations

import threading
import time

import pytest

from notes.models import Note, NoteCitation, Status
from notes.rendering import INCOMPLETE, PENDING, RENDERED_FIELDS
from notes.services import rerendering
from notes.services.rerendering import notes_rerender
from scidraft.markup import ENGINE_VERSION
from scidraft.site.generation import publish_generation
from scidraft.site.models import ContentGeneration
from tests.factories import site_bib_file

BIB = "".join(
    f"@article{{key{n},\n  author = {{Author, A{n}}},\n  title = {{Paper {n}}},\n"
    f"  journal = {{J}},\n  year = {{{2000 + n}}}\n}}\n"
    for n in range(5)
)
# More notes than one worker task, so that two workers share them.
COUNT = 2 * rerendering.NOTES_PER_TASK + 5
OLD_HTML = "<p>rendered by engine 3</p>"


def _body(index: int) -> str:
    return (
        f"Note {index}: $x^{{{index}}}$ and \\cite{{key{index % 5}}}.\n\n"
        f"$$\\sum_{{k=0}}^{{{index}}} k$$\n\n"
        '{{< references bib="bib/refs.bib" >}}\n'
    )


def _notes(count: int = COUNT) -> list[Note]:
    """`count` published notes citing the shared file, stored as an older engine left them."""
    site_bib_file("bib/refs.bib", BIB)
    return Note.objects.bulk_create(
        Note(
            slug=f"n-{index:03d}",
            title=f"Note {index}",
            body=_body(index),
            has_body=True,
            status=Status.PUBLISHED,
            rendered_html=OLD_HTML,
            render_version="3",
        )
        for index in range(count)
    )


def _stored() -> dict[str, dict]:
    return {
        row["slug"]: row
        for row in Note.objects.order_by("slug").values("slug", "version", *RENDERED_FIELDS)
    }


@pytest.mark.slow
@pytest.mark.django_db
def test_two_workers_store_what_one_stores():
    """Every note rendered by two worker processes is stored field for field as one process
    renders it, with the same citation rows."""
    _notes()
    assert notes_rerender(force=True, workers=1) == COUNT
    alone = _stored()
    citations = sorted(NoteCitation.objects.values_list("note__slug", "key", "bibfile_id"))
    Note.objects.update(rendered_html=OLD_HTML, render_version="3", source_hash="")
    NoteCitation.objects.all().delete()
    assert notes_rerender(force=True, workers=2) == COUNT
    assert _stored() == alone
    assert sorted(NoteCitation.objects.values_list("note__slug", "key", "bibfile_id")) == citations
    assert all("katex" in row["rendered_html"] for row in alone.values())
    assert len(citations) == COUNT


@pytest.mark.django_db
def test_a_run_bumps_the_content_generation_once(monkeypatch):
    """Rendering every note, several batches of them, moves the content generation by one,
    not one per note or per batch."""
    _notes()
    monkeypatch.setattr(rerendering, "ROWS_PER_WRITE", 10)
    before = ContentGeneration.objects.value()
    assert notes_rerender(force=True, workers=1) == COUNT
    assert ContentGeneration.objects.value() == before + 1


@pytest.mark.django_db(transaction=True)
def test_committed_batches_sleep_one_lease_for_the_whole_run(settings, monkeypatch):
    """With every batch committed on its own, the writer still waits out one generation
    lease for the run, not one per note or per batch."""
    settings.SCIDRAFT_GENERATION_LEASE_MS = 1
    monkeypatch.setattr(rerendering, "ROWS_PER_WRITE", 10)
    slept = []
    real_sleep = time.sleep
    writer = threading.get_ident()

    # The module's `time` is the interpreter's: other threads (the V8 pool's idle sweeper)
    # sleep through the same function while the test runs.
    def recorded(seconds):
        if threading.get_ident() == writer:
            slept.append(seconds)
        real_sleep(seconds)

    _notes()
    monkeypatch.setattr("scidraft.site.generation.time.sleep", recorded)
    before = ContentGeneration.objects.value()
    assert notes_rerender(force=True, workers=1) == COUNT
    assert ContentGeneration.objects.value() == before + 1
    assert slept == [0.001]


@pytest.mark.django_db
def test_a_render_cut_short_by_time_is_not_stored_as_final(
    settings, django_capture_on_commit_callbacks
):
    """Out of time, a note with a complete render keeps it, marked pending; a note without
    one stores the incomplete render marked incomplete; both are queued for completion."""
    notes = _notes(2)
    notes_rerender(force=True, workers=1)
    complete = Note.objects.get(pk=notes[0].pk)
    Note.objects.filter(pk=notes[1].pk).update(rendered_html="", render_version="")
    settings.RENDER_TIME_PERCENT = 1e-7
    with django_capture_on_commit_callbacks() as callbacks:
        notes_rerender(force=True, workers=1)
    kept = Note.objects.get(pk=notes[0].pk)
    assert kept.render_flags.get(PENDING) is True
    assert kept.rendered_html == complete.rendered_html
    assert kept.source_hash == complete.source_hash
    cut = Note.objects.get(pk=notes[1].pk)
    assert cut.render_flags.get(INCOMPLETE) is True
    assert "render-incomplete" in {warning["code"] for warning in cut.render_warnings}
    assert len([c for c in callbacks if c is not publish_generation]) == 2


@pytest.mark.django_db
def test_an_interrupted_run_leaves_each_note_old_or_new(monkeypatch):
    """Interrupted between batches, the notes written keep their whole new render, the
    others their whole old one, and the generation moves once for what was written."""
    _notes()
    monkeypatch.setattr(rerendering, "ROWS_PER_WRITE", rerendering.NOTES_PER_TASK + 1)
    before = ContentGeneration.objects.value()
    calls = []

    def interrupt(count):
        calls.append(count)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        notes_rerender(force=True, workers=1, advance=interrupt)
    rows = _stored().values()
    new = [row for row in rows if row["render_version"] == ENGINE_VERSION]
    old = [row for row in rows if row["render_version"] == "3"]
    assert len(new) == 2 * rerendering.NOTES_PER_TASK and len(old) == COUNT - len(new)
    assert all("katex" in row["rendered_html"] and row["source_hash"] for row in new)
    assert all(row["rendered_html"] == OLD_HTML and not row["source_hash"] for row in old)
    assert ContentGeneration.objects.value() == before + 1


@pytest.mark.django_db
def test_a_note_changed_while_it_rendered_is_not_overwritten():
    """A note saved by someone else between its render and the batch's write (its version
    moved on) keeps what that save stored."""
    notes = _notes(1)
    rows = rerendering.notes_rerendered([notes[0].pk], force=True)
    Note.objects.filter(pk=notes[0].pk).update(version=2, rendered_html="<p>saved meanwhile</p>")
    assert rerendering.rendered_rows_store(rows) == 0
    assert Note.objects.get(pk=notes[0].pk).rendered_html == "<p>saved meanwhile</p>"


@pytest.mark.django_db
def test_current_notes_are_passed_over_unless_forced():
    """Without force only stale notes render: a second run stores none."""
    _notes(3)
    assert notes_rerender(workers=1) == 3
    assert notes_rerender(workers=1) == 0
    assert notes_rerender(force=True, workers=1) == 3
