"""Format bibliography entries as HTML for reference lists.

The rendering engine asks a `Bibliography` (scidraft.markup.Bibliography) for the keys a list
cites; only those are formatted. Styles are pybtex formatting styles, looked up by name.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from pybtex.database import BibliographyData, Entry, Person
from pybtex.exceptions import PybtexError
from pybtex.plugin import find_plugin

from .models import BibEntry, BibFile
from .parsing import ParsedEntry

logger = logging.getLogger(__name__)

DEFAULT_STYLE = "unsrt"
# Site style names pybtex ships under another name (the project's own styles come later).
_STYLE_ALIASES = {"vancouver": "unsrt", "author-year": "plain"}


@dataclass(frozen=True)
class EntryData:
    key: str
    entry_type: str
    fields: dict[str, str]
    persons: dict[str, list[str]]


def _style(name: str | None):
    name = _STYLE_ALIASES.get(name or "", name) or DEFAULT_STYLE
    try:
        return find_plugin("pybtex.style.formatting", name)()
    except PybtexError:
        return find_plugin("pybtex.style.formatting", DEFAULT_STYLE)()


def format_entries(entries: Iterable[EntryData], style: str | None = None) -> dict[str, str]:
    """HTML of each entry (key → HTML); an entry pybtex cannot format shows its key and why."""
    formatter = _style(style)
    backend = find_plugin("pybtex.backends", "html")()
    result = {}
    for data in entries:
        entry = Entry(
            data.entry_type,
            fields=dict(data.fields),
            persons={
                role: [Person(name) for name in names] for role, names in data.persons.items()
            },
        )
        bibliography = BibliographyData({data.key: entry})
        try:
            (formatted,) = list(formatter.format_entries(bibliography.entries.values()))
            result[data.key] = formatted.text.render(backend)
        except (PybtexError, KeyError, ValueError, IndexError) as error:
            # A required field is missing, for example: show the entry, not a blank line.
            logger.info("cannot format %s: %s", data.key, error)
            title = data.fields.get("title", "")
            result[data.key] = f"{data.key}. {title} (incomplete entry: {error})"
    return result


class StoredBibliography:
    """A BibFile from the database, as the engine's Bibliography."""

    def __init__(self, bibfile: BibFile):
        self.bibfile = bibfile
        self.url = f"/{bibfile.name}"

    def format(self, keys: list[str], style: str | None) -> dict[str, str]:
        rows = BibEntry.objects.filter(bibfile=self.bibfile, key__in=keys).only(
            "key", "entry_type", "fields", "persons"
        )
        return format_entries(
            (EntryData(row.key, row.entry_type, row.fields, row.persons) for row in rows), style
        )


class ParsedBibliography:
    """A .bib file parsed in memory (the `render --bib` command, previews of uploads)."""

    def __init__(self, name: str, entries: list[ParsedEntry]):
        self.url = f"/{name}"
        self.entries = {entry.key: entry for entry in entries}

    def format(self, keys: list[str], style: str | None) -> dict[str, str]:
        found = [self.entries[key] for key in keys if key in self.entries]
        return format_entries(
            (EntryData(e.key, e.entry_type, e.fields, e.persons) for e in found), style
        )
