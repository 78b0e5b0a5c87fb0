"""Another copy of a note's text kept in step with the editor's HTTP writes: the live document
of writing together (the collaboration app), which registers itself here when it is installed.

A registry of plain functions rather than Django signals: a write must get an answer back (the
versions a flush made, which decide its optimistic lock), the hooks run inside the write's own
transaction and row lock in a known order, and an exception in one must fail the write rather
than be swallowed. notes never imports collaboration; the app calls `register` from its
AppConfig.ready.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..models import Note


@dataclass(frozen=True)
class MergedSaves:
    """The note went from `first_version` to `version` through merged saves only (typing
    in the live document, written on the autosave rules), and now holds `title` and `body`."""

    first_version: int
    version: int
    title: str
    body: str

    def covers(self, *, note: Note, base_version: int) -> bool:
        """Whether `base_version` is one of the run's versions: between it and now only typing
        in the live document changed the note, which every live editor sees as it happens."""
        return note.version == self.version and self.first_version <= base_version <= self.version

    def vouches_for(self, *, note: Note, base_version: int, fields: dict) -> bool:
        """Whether a save posted on `base_version` with `fields` only repeats the merged text:
        a live editor's form whose base_version was taken before the merged save its own
        typing caused. Its text is the merged text, so accepting it overwrites nothing. (The
        form strips the title; typing may have left a space at its end.)"""
        return (
            self.covers(note=note, base_version=base_version)
            and fields.get("body", self.body) == self.body
            and fields.get("title", self.title).strip() == self.title.strip()
        )


class TextSync(Protocol):
    def before_write(self, *, note: Note) -> MergedSaves | None:
        """The note is row-locked and about to be written over HTTP: save any text the other
        copy holds that the note lacks (a merged save), and say what merged saves made."""

    def after_write(self, *, note: Note, user) -> None:
        """The write changed what the authors edit: put its title and body into the copy."""


_registered: list[TextSync] = []


def register(sync: TextSync) -> None:
    if sync not in _registered:
        _registered.append(sync)


def before_write(*, note: Note) -> MergedSaves | None:
    merged = None
    for sync in _registered:
        merged = sync.before_write(note=note) or merged
    return merged


def after_write(*, note: Note, user) -> None:
    for sync in _registered:
        sync.after_write(note=note, user=user)
