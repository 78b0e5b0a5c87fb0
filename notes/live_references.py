"""The reference lists readers see where the site requires review, and what a file change
would do to them.

A published note's live version keeps the entries it cited when it went live
(LiveBibliography); under "require review" its render, its references.bib/.ris/.json and its
Scholar tags read those, so a changed .bib file reaches readers only through review. What its
authors edit and preview (notes.services.working_context) reads the files as they are now:
`reference_changes` compares the two, entry by entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from bibliography.display import authors_text, display_fields, display_persons, latex_to_text
from bibliography.entries import EntryData
from bibliography.formatting import StoredBibliography, format_references
from scidraft.markup import RenderContext
from scidraft.site.models import SiteSettings

from .models import LiveBibEntry, LiveBibliography, Note, NoteCitation, Status
from .rendering import context_for

# What one changed field shows of each side, in characters: an abstract is not printed whole.
CHANGE_TEXT_MAX_CHARS = 300
# Entries compared for one note's listing: a real note cites a few dozen.
CHANGES_MAX = 500


def bib_name(name: str) -> str:
    return name.strip().lstrip("/")


def kept_for(note: Note, *, review: bool | None = None) -> LiveBibliography | None:
    """The kept entries that a render of `note` as readers see it reads: those of a published
    note, where the site requires review (`review`, when the caller has read the setting).
    None: the render reads the files as they are."""
    if note.pk is None or note.status != Status.PUBLISHED:
        return None
    if review is None:
        review = SiteSettings.objects.current().require_review
    if not review:
        return None
    return LiveBibliography.objects.filter(note=note).first()


def _entry_data(row: LiveBibEntry) -> EntryData:
    return EntryData(row.key, row.entry_type, row.fields, row.persons)


class KeptBibliography:
    """A bibliography file as the live version reads it: for a key the live version cited, the
    entry kept when it went live (or none, if it had none); for any other key (a body changed
    outside the editor, by an import or the admin), the file's current rows."""

    def __init__(self, name: str, current, kept: dict[str, EntryData], cited: frozenset[str]):
        self.url = getattr(current, "url", "") or f"/{bib_name(name)}"
        self._current = current
        self._kept = kept
        self._cited = cited

    def entries(self, keys: list[str]) -> list[EntryData]:
        rest = [key for key in keys if key not in self._cited]
        now = {}
        if rest and self._current is not None:
            now = {data.key: data for data in self._current.entries(rest)}
        found = (self._kept.get(key) if key in self._cited else now.get(key) for key in keys)
        return [data for data in found if data is not None]

    def format(self, keys: list[str], style: str | None, locale: str | None = None):
        return format_references(self.entries(keys), style, locale)

    def known(self, keys: list[str]) -> list[str]:
        return [data.key for data in self.entries(keys)]


@dataclasses.dataclass(frozen=True)
class KeptResolver:
    """A resolve_bibliography over `resolve` (the note's) that reads kept entries first."""

    resolve: Callable[[str], Any]
    kept: dict[str, dict[str, EntryData]]
    cited: frozenset[str]

    def __call__(self, name: str):
        found = self.resolve(name)
        entries = self.kept.get(bib_name(name), {})
        if isinstance(found, StoredBibliography) or entries:
            current = found if isinstance(found, StoredBibliography) else None
            return KeptBibliography(name, current, entries, self.cited)
        return found


def live_context(
    note: Note, context: RenderContext, *, review: bool | None = None
) -> RenderContext:
    """`context` (the note's) for rendering its live version as readers see it; `review`
    as for kept_for."""
    live = kept_for(note, review=review)
    if live is None:
        return context
    kept: dict[str, dict[str, EntryData]] = {}
    for row in live.entries.all():
        kept.setdefault(bib_name(row.bib_name), {})[row.key] = _entry_data(row)
    resolver = KeptResolver(context.resolve_bibliography, kept, frozenset(live.keys))
    return dataclasses.replace(context, resolve_bibliography=resolver)


@dataclasses.dataclass(frozen=True)
class KeptEntries:
    """The kept entries readers see, by (file name, key); the keys the live version cited; the
    @string definitions their sources use, by file."""

    entries: dict[tuple[str, str], LiveBibEntry]
    cited: frozenset[str]
    macros: dict[str, list[str]]


def kept_entries(note: Note) -> KeptEntries | None:
    """None where the live version reads the files as they are."""
    live = kept_for(note)
    if live is None:
        return None
    entries = {(bib_name(row.bib_name), row.key): row for row in live.entries.all()}
    return KeptEntries(entries, frozenset(live.keys), live.macros or {})


@dataclasses.dataclass(frozen=True)
class FieldChange:
    name: str
    before: str
    after: str


@dataclasses.dataclass(frozen=True)
class EntryChange:
    """How one cited entry would change: "added" (cited, found nowhere then), "removed" (no
    longer in its files) or "changed"; the file each side comes from, the entry as a line
    (authors, year, title) each side, and the fields that differ."""

    key: str
    kind: str
    before_file: str
    after_file: str
    before: str
    after: str
    fields: tuple[FieldChange, ...]


def _line(data: EntryData | None) -> str:
    if data is None:
        return ""
    parts = [
        authors_text(data.persons),
        latex_to_text(data.fields.get("year", "")),
        latex_to_text(data.fields.get("title", "")),
    ]
    return _clip(". ".join(part for part in parts if part))


def _clip(text: str) -> str:
    if len(text) <= CHANGE_TEXT_MAX_CHARS:
        return text
    return text[: CHANGE_TEXT_MAX_CHARS - 1] + "…"


def _field_changes(before: EntryData, after: EntryData) -> tuple[FieldChange, ...]:
    changes = []
    if before.entry_type != after.entry_type:
        changes.append(FieldChange("type", before.entry_type, after.entry_type))
    old, new = display_persons(before.persons), display_persons(after.persons)
    for role in sorted({*old, *new}):
        if old.get(role) != new.get(role):
            changes.append(
                FieldChange(
                    role,
                    _clip("; ".join(old.get(role, []))),
                    _clip("; ".join(new.get(role, []))),
                )
            )
    old, new = display_fields(before.fields), display_fields(after.fields)
    for name in sorted({*old, *new}):
        if old.get(name) != new.get(name):
            changes.append(FieldChange(name, _clip(old.get(name, "")), _clip(new.get(name, ""))))
    return tuple(changes)


def _same(a: EntryData, b: EntryData) -> bool:
    return (a.entry_type, a.fields, a.persons) == (b.entry_type, b.fields, b.persons)


def reference_changes(note: Note, live: LiveBibliography | None = None) -> list[EntryChange]:
    """What the live version's reference lists would show differently if it were rendered from
    the files as they are now (the preview's), entry by entry, in citation order. Each list
    finds a key in the first of its files that has it, as the render does; files the note may
    not name count as empty, as in its render."""
    live = live or LiveBibliography.objects.filter(note=note).first()
    if live is None:
        return []
    kept: dict[str, dict[str, EntryData]] = {}
    for row in live.entries.all():
        kept.setdefault(bib_name(row.bib_name), {})[row.key] = _entry_data(row)
    cited = set(live.keys)
    resolve = context_for(note).resolve_bibliography
    lists = [
        ([bib_name(name) for name in item.get("bib") or []], item.get("keys") or [])
        for item in note.render_citations or []
    ]
    files = list(dict.fromkeys(name for names, _ in lists for name in names))
    wanted = [key for _, keys in lists for key in keys if key in cited]
    current: dict[str, dict[str, EntryData]] = {}
    for name in files:
        found = resolve(name)
        if isinstance(found, StoredBibliography):
            current[name] = {data.key: data for data in found.entries(wanted)}
    changes: list[EntryChange] = []
    seen: set[str] = set()
    for names, keys in lists:
        for key in keys:
            if key not in cited or key in seen or len(changes) >= CHANGES_MAX:
                continue
            seen.add(key)
            old_file = next((name for name in names if key in kept.get(name, {})), "")
            new_file = next((name for name in names if key in current.get(name, {})), "")
            old = kept[old_file][key] if old_file else None
            new = current[new_file][key] if new_file else None
            if old is None and new is None:
                continue
            if old is not None and new is not None:
                if _same(old, new) and old_file == new_file:
                    continue
                kind, fields = "changed", _field_changes(old, new)
            else:
                kind, fields = ("added" if old is None else "removed"), ()
            changes.append(
                EntryChange(key, kind, old_file, new_file, _line(old), _line(new), fields)
            )
    return changes


def cited_pairs(note: Note) -> list[tuple[str, int | None, str]]:
    """(file name, file id, key) of each entry the stored render found, once, in order."""
    rows = (
        NoteCitation.objects.filter(note=note)
        .exclude(bib_name="")
        .values_list("bib_name", "bibfile_id", "key")
    )
    return list(dict.fromkeys(rows))
