"""Notes and standalone pages as SciDraft fields, from their front matter
(docs/theme.md#front-matter): each known key to its column, every other key kept in params."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from .front_matter import FrontMatter, _as_bool, _as_int, _as_list, jsonable, parse_date


@dataclass
class _Source:
    """What notes and standalone pages both have: the fields first in each."""

    path: str
    slug: str
    body: str
    title: str = ""
    date: dt.datetime | None = None
    date_offset_minutes: int | None = None
    draft: bool = False
    authors: list[str] = field(default_factory=list)


@dataclass
class NoteSource(_Source):
    """A note as SciDraft fields; `params` keeps every key without a column of its own."""

    institute: str = ""
    tags: list[str] = field(default_factory=list)
    show_title: bool | None = None
    promotion: bool = False
    weight: int = 0
    summary: str = ""
    description: str = ""
    math: bool | None = None
    math_macros: str = ""
    keywords: list[str] = field(default_factory=list)
    canonical_url: str = ""
    share_buttons: list[str] | None = None
    disable_share: bool = False
    search_hidden: bool = False
    hidden_in_rss: bool = False
    robots_noindex: bool = False
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class PageSource(_Source):
    description: str = ""
    summary: str = ""
    layout: str = ""
    placeholder: str = ""
    weight: int = 0
    keywords: list[str] = field(default_factory=list)
    canonical_url: str = ""
    flags: dict[str, bool | None] = field(default_factory=dict)
    headless: bool = False
    params: dict[str, Any] = field(default_factory=dict)


# Hugo lower-cases front-matter keys, so matching is case-insensitive (docs/theme.md#front-matter).
_NOTE_BOOLEANS = {
    "showtitle": "show_title",
    "promotion": "promotion",
    "math": "math",
    "draft": "draft",
    "disableshare": "disable_share",
    "searchhidden": "search_hidden",
    "hiddeninrss": "hidden_in_rss",
    "robotsnoindex": "robots_noindex",
}
_NOTE_STRINGS = {
    "title": "title",
    "institute": "institute",
    "summary": "summary",
    "description": "description",
    "canonicalurl": "canonical_url",
}

_PAGE_TOGGLES = {
    "showtoc": "show_toc",
    "showreadingtime": "show_reading_time",
    "showwordcount": "show_word_count",
    "showbreadcrumbs": "show_breadcrumbs",
    "showpostnavlinks": "show_post_nav_links",
    "showcodecopybuttons": "show_code_copy_buttons",
    "showrelatedposts": "show_related_posts",
    "hidemeta": "hide_meta",
    "hideauthor": "hide_author",
    "hidedescription": "hide_description",
    "hidesummary": "hide_summary",
    "hidefooter": "hide_footer",
    "comments": "comments",
    "disableanchoredheadings": "disable_anchored_headings",
    "searchhidden": "search_hidden",
    "hiddeninrss": "hidden_in_rss",
    "robotsnoindex": "robots_noindex",
    "disableshare": "disable_share",
}
_PAGE_STRINGS = {
    "title": "title",
    "description": "description",
    "summary": "summary",
    "layout": "layout",
    "placeholder": "placeholder",
    "canonicalurl": "canonical_url",
}


def math_macros(value: Any) -> str:
    """Macro definitions as LaTeX, from any of the shapes a Hugo site writes them in: LaTeX
    (`\\newcommand{\\R}{\\mathbb{R}}`), a list of such lines, or MathJax's `tex.macros`
    table (`R = "\\mathbb{R}"`, `norm = ["\\lVert #1 \\rVert", 1]`, with a default third)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list | tuple):
        return "\n".join(math_macros(item) for item in value if item is not None)
    if isinstance(value, dict):
        lines = []
        for name, body in value.items():
            arguments = ""
            if isinstance(body, list | tuple) and body:
                if len(body) > 1:
                    arguments = f"[{_as_int(body[1], str(name))}]"
                if len(body) > 2:
                    arguments += f"[{body[2]}]"
                body = body[0]
            lines.append(f"\\newcommand{{\\{str(name).lstrip(chr(92))}}}{arguments}{{{body}}}")
        return "\n".join(lines)
    return str(value)


def _read_shared(source: NoteSource | PageSource, key: str, lowered: str, value: Any) -> bool:
    """The keys notes and pages read alike, set on `source`: False for any other key."""
    if lowered == "slug":
        source.slug = str(value)
    elif lowered == "date":
        source.date, source.date_offset_minutes = parse_date(value)
    elif lowered == "draft":
        source.draft = _as_bool(value, key)
    elif lowered == "author":
        source.authors = _as_list(value)
    elif lowered == "keywords":
        source.keywords = _as_list(value)
    elif lowered == "weight":
        source.weight = _as_int(value, key)
    else:
        return False
    return True


def note_from_front_matter(path: str, slug: str, matter: FrontMatter) -> NoteSource:
    note = NoteSource(path=path, slug=slug, body=matter.body)
    for key, value in matter.data.items():
        lowered = key.lower()
        if lowered in _NOTE_BOOLEANS:
            setattr(note, _NOTE_BOOLEANS[lowered], _as_bool(value, key))
        elif lowered in _NOTE_STRINGS:
            setattr(note, _NOTE_STRINGS[lowered], "" if value is None else str(value))
        elif lowered == "tags":
            note.tags = _as_list(value)
        elif lowered == "sharebuttons":
            note.share_buttons = [item.lower() for item in _as_list(value)]
        elif lowered in {"mathmacros", "math_macros"}:
            note.math_macros = math_macros(value)
        elif not _read_shared(note, key, lowered, value):
            note.params[key] = jsonable(value)
    return note


def page_from_front_matter(path: str, slug: str, matter: FrontMatter) -> PageSource:
    page = PageSource(path=path, slug=slug, body=matter.body)
    for key, value in matter.data.items():
        lowered = key.lower()
        if lowered in _PAGE_TOGGLES:
            page.flags[_PAGE_TOGGLES[lowered]] = _as_bool(value, key)
        elif lowered in _PAGE_STRINGS:
            setattr(page, _PAGE_STRINGS[lowered], "" if value is None else str(value))
        elif lowered == "headless":
            page.headless = _as_bool(value, key)
        elif not _read_shared(page, key, lowered, value):
            page.params[key] = jsonable(value)
    return page
