"""The project's citation styles, written as pybtex formatting styles.

`get_style(name)` gives a style instance (Vancouver, the theme's style, for unknown names);
`style_labels(name, entries)` gives the marker labels of label styles (alpha, author-year) and
None for numbered ones (vancouver, plain, unsrt).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from pybtex.database import Entry, Person
from pybtex.style.formatting import BaseStyle

from .author_year import AuthorYearStyle, author_year_label
from .base import HtmlBackend
from .bibtex import AlphaStyle, PlainStyle, UnsrtStyle
from .memo import remembered
from .persons import parse_person
from .vancouver import VancouverStyle


@functools.cache
def _register_pybtex_plugins() -> None:
    """Resolve pybtex's plugins once. pybtex looks a plugin up among every installed
    package's entry points on each call (each Text.render_as, each style's __init__), which
    made formatting ~20 ms an entry; registered runtime plugins are found by a dict lookup."""
    from importlib.metadata import entry_points

    from pybtex.plugin import register_plugin

    groups = {
        "pybtex.backends": ["html", "text", "latex", "markdown", "plaintext"],
        "pybtex.style.names": ["plain", "lastfirst"],
        "pybtex.style.labels": ["number", "alpha"],
        "pybtex.style.sorting": ["none", "author_year_title"],
        "pybtex.style.formatting": ["plain", "unsrt", "alpha", "unsrtalpha"],
    }
    for group, names in groups.items():
        for name in names:
            for search in (group, f"{group}.aliases"):
                found = list(entry_points(group=search, name=name))
                if found:
                    # Under the main group even for an alias ("text"): pybtex scans the main
                    # group's entry points before it looks at its aliases.
                    register_plugin(group, name, found[0].load(), force=True)
                    break


DEFAULT_STYLE = "vancouver"

STYLES: dict[str, type[BaseStyle]] = {
    "vancouver": VancouverStyle,
    "plain": PlainStyle,
    "unsrt": UnsrtStyle,
    "alpha": AlphaStyle,
    "author-year": AuthorYearStyle,
}

# Same keys as scidraft.site.models.CITATION_STYLES (a test keeps them in step).
STYLE_CHOICES = [
    ("vancouver", "Vancouver (numbered, as the theme)"),
    ("plain", "BibTeX plain"),
    ("unsrt", "BibTeX unsrt"),
    ("alpha", "BibTeX alpha"),
    ("author-year", "Author–year"),
]

LABEL_STYLES = frozenset({"alpha", "author-year"})


def style_name(name: str | None) -> str:
    """The registry name a requested style resolves to (vancouver when unknown)."""
    name = (name or "").strip().lower()
    return name if name in STYLES else DEFAULT_STYLE


@functools.cache
def get_style(name: str | None) -> BaseStyle:
    """One instance per style: styles hold no per-call state (only their templates, built
    once per entry type), and building one costs plugin lookups."""
    _register_pybtex_plugins()  # on first use, not at every worker's start-up
    return STYLES[style_name(name)]()


@remembered
def parsed_person(name: str) -> Person:
    """pybtex's Person for a name string, parsed once: authors recur across entries, and the
    labels and the list of a note build the same entries. Styles only read a Person."""
    return parse_person(name)


def make_entry(
    key: str, entry_type: str, fields: dict[str, str], persons: dict[str, list[str]]
) -> Entry:
    """A pybtex Entry (with its key) from stored fields and person strings."""
    entry = Entry(
        entry_type,
        fields=dict(fields),
        persons={role: [parsed_person(name) for name in names] for role, names in persons.items()},
    )
    entry.key = key
    return entry


def style_labels(name: str | None, entries: Iterable[Entry]) -> dict[str, str] | None:
    """Marker labels by key (`Knu84`, `Knuth 1984`), or None for numbered styles."""
    resolved = style_name(name)
    if resolved not in LABEL_STYLES:
        return None
    style = get_style(resolved)
    entries = list(entries)
    if isinstance(style, AuthorYearStyle):
        return style.labels(entries)
    ordered = style.sort(entries)
    return {
        entry.key: label for entry, label in zip(ordered, style.format_labels(ordered), strict=True)
    }


__all__ = [
    "DEFAULT_STYLE",
    "LABEL_STYLES",
    "STYLES",
    "STYLE_CHOICES",
    "AlphaStyle",
    "AuthorYearStyle",
    "HtmlBackend",
    "PlainStyle",
    "UnsrtStyle",
    "VancouverStyle",
    "author_year_label",
    "get_style",
    "make_entry",
    "parsed_person",
    "style_labels",
]
