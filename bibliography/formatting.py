"""Format bibliography entries as HTML for reference lists.

The rendering engine asks a `Bibliography` (scidraft.markup.Bibliography) for the keys a list
cites; only those are formatted. Styles are the project's pybtex styles (`bibliography.styles`),
looked up by name; unknown names give Vancouver, the theme's style.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from dataclasses import dataclass

from pybtex.exceptions import PybtexError

from .display import display_cache_clear
from .models import BibEntry, BibFile
from .parsing import ParsedEntry
from .styles import (
    DEFAULT_STYLE,
    LABEL_STYLES,
    HtmlBackend,
    get_style,
    make_entry,
    style_labels,
    style_name,
)
from .styles.memo import memo_clear

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_STYLE",
    "EntryData",
    "ParsedBibliography",
    "StoredBibliography",
    "format_entries",
    "labels_for",
]


@dataclass(frozen=True)
class EntryData:
    key: str
    entry_type: str
    fields: dict[str, str]
    persons: dict[str, list[str]]


def _entry(data: EntryData):
    return make_entry(data.key, data.entry_type, data.fields, data.persons)


def format_entries(entries: Iterable[EntryData], style: str | None = None) -> dict[str, str]:
    """HTML of each entry (key → HTML); an entry that cannot be formatted shows its key and why."""
    name = style_name(style)
    formatted = {}
    for data in entries:
        try:
            fields, persons = _frozen(data.fields), _frozen(data.persons)
            hash((fields, persons))
        except TypeError:  # a value that is neither text nor a list of names
            formatted[data.key] = _format(data, name)
            continue
        formatted[data.key] = _format_cached(data.key, data.entry_type, fields, persons, name)
    return formatted


def _frozen(mapping: dict) -> tuple:
    """A dict of strings (or of lists of names) as a hashable cache key, in key order."""
    return tuple(
        sorted(
            (name, tuple(value) if type(value) is list else value)
            for name, value in mapping.items()
        )
    )


@functools.lru_cache(maxsize=20_000)
def _format_cached(key: str, entry_type: str, fields: tuple, persons: tuple, style: str) -> str:
    # Keyed by the entry's content and the style, like the formula cache: an edited entry is a
    # new key, and re-renders and previews of a note cost nothing for entries already seen.
    # Fields and persons in key order, as the entry was always formatted.
    data = EntryData(key, entry_type, dict(fields), {role: list(names) for role, names in persons})
    return _format(data, style)


def _format(data: EntryData, style: str) -> str:
    try:
        formatted = get_style(style).format_entry("", _entry(data))
        return formatted.text.render(HtmlBackend())
    except (PybtexError, KeyError, ValueError, IndexError, TypeError) as error:
        # A required field is missing, for example: show the entry, not a blank line.
        logger.info("cannot format %s: %s", data.key, error)
        title = data.fields.get("title", "")
        return f"{data.key}. {title} (incomplete entry: {error})"


def format_cache_clear() -> None:
    """Forget every formatted entry, every remembered step (decoded LaTeX, parsed and formatted
    names) and the styles with their templates: benchmarks measure formatting cold."""
    _format_cached.cache_clear()
    memo_clear()
    display_cache_clear()
    get_style.cache_clear()


def labels_for(entries: Iterable[EntryData], style: str | None) -> dict[str, str]:
    """Marker labels by key for label styles (alpha, author-year); {} for numbered styles."""
    if style_name(style) not in LABEL_STYLES:
        return {}  # without building entries that only a label style would read
    built = []
    for data in entries:
        try:
            built.append(_entry(data))
        except (PybtexError, ValueError) as error:
            logger.info("cannot label %s: %s", data.key, error)
    return style_labels(style, built) or {}


class StoredBibliography:
    """A BibFile from the database, as the engine's Bibliography."""

    def __init__(self, bibfile: BibFile):
        self.bibfile = bibfile
        self.url = f"/{bibfile.name}"
        # Entries already read (None: not in the file); an object lives for one render or,
        # in a batch (an import), for all of it.
        self._seen: dict[str, EntryData | None] = {}

    def _data(self, keys: list[str]) -> list[EntryData]:
        unknown = [key for key in keys if key not in self._seen]
        if unknown:
            rows = BibEntry.objects.filter(bibfile=self.bibfile, key__in=unknown).values_list(
                "key", "entry_type", "fields", "persons"
            )
            self._seen.update(dict.fromkeys(unknown))
            for key, entry_type, fields, persons in rows:
                self._seen[key] = EntryData(key, entry_type, fields, persons)
        return [self._seen[key] for key in keys if self._seen.get(key) is not None]

    def format(self, keys: list[str], style: str | None) -> dict[str, str]:
        return format_entries(self._data(keys), style)

    def labels(self, keys: list[str], style: str | None) -> dict[str, str]:
        """Marker labels (`Knu84`, `Knuth 1984`) of the keys found; {} for numbered styles."""
        return labels_for(self._data(keys), style)


class ParsedBibliography:
    """A .bib file parsed in memory (the `render --bib` command, previews of uploads)."""

    def __init__(self, name: str, entries: list[ParsedEntry]):
        self.url = f"/{name}"
        self.entries = {entry.key: entry for entry in entries}

    def _data(self, keys: list[str]) -> list[EntryData]:
        found = [self.entries[key] for key in keys if key in self.entries]
        return [EntryData(e.key, e.entry_type, e.fields, e.persons) for e in found]

    def format(self, keys: list[str], style: str | None) -> dict[str, str]:
        return format_entries(self._data(keys), style)

    def labels(self, keys: list[str], style: str | None) -> dict[str, str]:
        """Marker labels (`Knu84`, `Knuth 1984`) of the keys found; {} for numbered styles."""
        return labels_for(self._data(keys), style)
