"""Rendering every stored note again (`manage.py rerender`), over all cores, in batches.

Worker processes render slices of note ids and write nothing; this process writes what they
return, ROWS_PER_WRITE notes a transaction with one UPDATE (bulk_update) and their citation
rows, so an interrupted run leaves every note with either its old render or its new one.
Bulk writes send no signals: the content generation is bumped once for the whole run
(deferred_bumps), instead of once a note, each followed by a lease's wait.

A render cut short by time is stored as a note's save stores it (notes.rendering.render_note:
the complete render kept and marked pending, or the incomplete one marked incomplete) and
completed in the background once its batch commits (notes.completion), never as final.

Workers are forked: they start with Django set up and the site's environment read, and each
has its own V8 (scidraft.markup.jsengine starts empty pools after fork) and its own database
connection (this process closes its connections before forking, unless it is inside a
transaction, where it renders alone instead; a test's in-memory SQLite database is the
exception, each worker reading its copy of it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator

from django.db import connections, transaction

from scidraft.markup import ENGINE_VERSION
from scidraft.site.generation import bump_generation, deferred_bumps

from .. import completion, search_index
from ..live_references import live_context
from ..models import Note, NoteCitation
from ..rendering import (
    PENDING,
    RENDERED_FIELDS,
    batch_context,
    context_for,
    render_note,
    source_hash,
)
from .renders import bibfile_pks, citation_rows

# Notes a worker renders per task: small enough to spread the work evenly and report
# progress often, large enough that handing tasks out costs nothing next to rendering them.
NOTES_PER_TASK = 20
# Notes written per transaction (one UPDATE and their citation rows).
ROWS_PER_WRITE = 200


@dataclasses.dataclass
class RenderedRow:
    """A note's new render, as a worker returns it: the rendered fields, the version of the
    note it rendered, its citations (list index, number, key, file name) unless the render
    was kept pending, and whether time cut it short."""

    pk: int
    version: int
    fields: dict
    citations: list[tuple[int, int, str, str]] | None
    complete: bool


def note_rerendered(note: Note, *, force: bool, base) -> RenderedRow | None:
    """`note` rendered as note_render_store renders it, nothing written; None when its stored
    render is current (and not `force`)."""
    context = live_context(note, context_for(note, base=base))
    stale = note.render_version != ENGINE_VERSION or not note.source_hash
    if not (force or stale) and note.source_hash == source_hash(note.body, context):
        return None
    rendered = render_note(note, context)
    citations = None
    if not note.render_flags.get(PENDING):
        citations = [
            (row.list_index, row.number, row.key, row.bib_name)
            for row in citation_rows(note, rendered, bibfile_pks=dict.fromkeys)
        ]
    return RenderedRow(
        pk=note.pk,
        version=note.version,
        fields={name: getattr(note, name) for name in RENDERED_FIELDS},
        citations=citations,
        complete=rendered.complete,
    )


def notes_rerendered(pks: list[int], *, force: bool, base=None) -> list[RenderedRow]:
    """The new renders of the notes `pks` that need one (all with `force`)."""
    base = base or batch_context()
    rows = []
    for note in Note.objects.filter(pk__in=pks).order_by("pk").iterator(chunk_size=100):
        row = note_rerendered(note, force=force, base=base)
        if row is not None:
            rows.append(row)
    return rows


def rendered_rows_store(rows: list[RenderedRow]) -> int:
    """Write `rows` in one transaction: their rendered fields, citation rows and search
    vectors. A note changed since it was read (another version) or deleted is left to the
    render of that change. Returns how many were written."""
    if not rows:
        return 0
    with transaction.atomic():
        versions = dict(
            Note.objects.select_for_update(no_key=True)
            .filter(pk__in=[row.pk for row in rows])
            .values_list("pk", "version")
        )
        rows = [row for row in rows if versions.get(row.pk) == row.version]
        notes = []
        for row in rows:
            note = Note(pk=row.pk)
            for name, value in row.fields.items():
                setattr(note, name, value)
            notes.append(note)
        Note.objects.bulk_update(notes, RENDERED_FIELDS)
        cited = [row for row in rows if row.citations is not None]
        names = {name for row in cited for *_, name in row.citations if name}
        files = bibfile_pks(names) if names else {}
        NoteCitation.objects.filter(note_id__in=[row.pk for row in cited]).delete()
        NoteCitation.objects.bulk_create(
            NoteCitation(
                note_id=row.pk,
                bibfile_id=files.get(name),
                bib_name=name,
                key=key,
                list_index=index,
                number=number,
            )
            for row in cited
            for index, number, key, name in row.citations
        )
        search_index.vectors_store(Note.objects.filter(pk__in=[row.pk for row in rows]))
        for row in rows:
            if not row.complete:
                completion.schedule(completion.NOTE, row.pk)
        if rows:
            bump_generation()  # deferred to the end of the run by notes_rerender
    return len(rows)


def _slices(pks: list[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(pks), size):
        yield pks[start : start + size]


# Each worker's context, made once after the fork: the site's kinds, style and files.
_worker_base = None


def _worker_start() -> None:
    global _worker_base
    # Ctrl-C reaches the whole process group: the parent stops the workers itself, and a
    # worker dying on it mid-task would only hang the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_base = batch_context()


def _worker_render(task: tuple[list[int], bool]) -> tuple[int, list[RenderedRow]]:
    pks, force = task
    return len(pks), notes_rerendered(pks, force=force, base=_worker_base)


def _may_fork() -> bool:
    """Whether workers can be forked, each to open its own database connection; closes this
    process's connections, so that no worker inherits one in use."""
    connection = connections["default"]
    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        return True  # each worker reads its copy; only this process writes
    if any(conn.in_atomic_block for conn in connections.all(initialized_only=True)):
        return False
    connections.close_all()
    return True


def _renders(
    pks: list[int], *, force: bool, workers: int
) -> Iterator[tuple[int, list[RenderedRow]]]:
    """(notes looked at, their new renders), slice by slice, from `workers` processes."""
    tasks = ((chunk, force) for chunk in _slices(pks, NOTES_PER_TASK))
    if workers <= 1 or len(pks) <= NOTES_PER_TASK or not _may_fork():
        base = batch_context()
        for chunk, _ in tasks:
            yield len(chunk), notes_rerendered(chunk, force=force, base=base)
        return
    with multiprocessing.get_context("fork").Pool(workers, initializer=_worker_start) as pool:
        # Leaving the block (done, or interrupted) terminates the workers.
        yield from pool.imap_unordered(_worker_render, tasks)


def notes_rerender(
    *,
    force: bool = False,
    workers: int | None = None,
    advance: Callable[[int], None] | None = None,
) -> int:
    """Render the notes whose stored render is stale (every note with `force`) over `workers`
    processes (os.cpu_count() by default) and store them; `advance(n)` is called as n more
    notes are done. Returns how many notes were stored. Interrupted, the notes written so far
    keep their new render, the others their old one, and readers see the new ones (the
    generation is bumped on the way out)."""
    workers = workers or os.cpu_count() or 1
    pks = list(Note.objects.order_by("pk").values_list("pk", flat=True))
    stored = 0
    pending: list[RenderedRow] = []
    renders = _renders(pks, force=force, workers=workers)
    # Closed however the loop ends, so that an interrupt stops the workers at once.
    with deferred_bumps(), contextlib.closing(renders):
        for looked_at, rows in renders:
            pending.extend(rows)
            if len(pending) >= ROWS_PER_WRITE:
                stored += rendered_rows_store(pending)
                pending = []
            if advance is not None:
                advance(looked_at)
        stored += rendered_rows_store(pending)
    return stored
