"""Published copies of a demo note, written with bulk_create, for the benchmarks that grow a
site to thousands of notes (a helper module: the benchmark runner skips `_` files). Called in an
interpreter where Django is set up."""

from __future__ import annotations

from collections.abc import Iterable

# Columns a copy never takes from its source: its own row, address, title and date.
OWN_COLUMNS = frozenset({"id", "slug", "title", "date", "created_at", "updated_at", "version"})


def note_columns(source, *also: str) -> dict:
    """The source note's column values, but for OWN_COLUMNS and `also`."""
    from notes.models import Note

    skip = OWN_COLUMNS.union(also)
    return {
        field.attname: getattr(source, field.attname)
        for field in Note._meta.concrete_fields
        if field.attname not in skip
    }


def bulk_copies(source, copies: Iterable[dict], authors: list[tuple] | None = None) -> None:
    """One copy of `source` for each dict of columns of its own (slug, title, date...), with
    the source's tags and its authors (or `authors`, (author id, position) pairs), in one
    transaction."""
    from django.db import transaction

    from notes.models import Note, NoteAuthor

    template = note_columns(source)
    if authors is None:
        authors = list(source.authorships.values_list("author_id", "position"))
    tags = list(source.tags.values_list("pk", flat=True))
    Tagging = Note.tags.through
    with transaction.atomic():
        notes = Note.objects.bulk_create(
            (Note(**{**template, **columns}) for columns in copies), batch_size=500
        )
        NoteAuthor.objects.bulk_create(
            (
                NoteAuthor(note_id=note.pk, author_id=author, position=position)
                for note in notes
                for author, position in authors
            ),
            batch_size=2_000,
        )
        Tagging.objects.bulk_create(
            (Tagging(note_id=note.pk, tag_id=tag) for note in notes for tag in tags),
            batch_size=2_000,
        )
