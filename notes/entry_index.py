"""Entry indexes: the A–Z and category views of an entry set (docs/theme.md#entry-maps).

The rendering engine calls `render_entry_index` for `{{< entry-a-to-z set="…" >}}` and
`{{< entry-categories set="…" >}}`. A note belongs to a set when its front matter carries the
set's title field; field names match case-insensitively, as Hugo lower-cases keys.

A page holding an entry index is rendered when read, so the index is bounded: only notes whose
front matter names the field are read (the JSON text searched in SQL, case-insensitively), and
past SCIDRAFT_ENTRY_INDEX_MAX_ENTRIES entries the view lists the first ones and says how many
there are.
"""

from __future__ import annotations

import html
import string
from collections import defaultdict

from django.conf import settings as django_settings
from django.utils.text import slugify

from scidraft.markup.inline_math import marked
from scidraft.site.models import EntrySet

from .models import Note

_DEFAULTS = {
    "titleField": "entryTitle",
    "categoryField": "entryCategory",
    "aliasesField": "entryAliases",
    "summaryField": "entrySummary",
    "tag": "",
    "countLabel": "Entries",
}
_MODEL_FIELDS = {
    "titleField": "title_field",
    "categoryField": "category_field",
    "aliasesField": "aliases_field",
    "summaryField": "summary_field",
    "tag": "tag",
    "countLabel": "count_label",
}


def _settings(params: dict[str, str]) -> dict[str, str]:
    """Per-call parameter → the site's entry set → the theme's generic defaults."""
    settings = dict(_DEFAULTS)
    entry_set = EntrySet.objects.filter(key=params.get("set", "")).first()
    if entry_set is not None:
        settings.update({name: getattr(entry_set, field) for name, field in _MODEL_FIELDS.items()})
    lowered = {key.lower(): value for key, value in params.items()}
    for name in _DEFAULTS:
        if name.lower() in lowered:
            settings[name] = lowered[name.lower()]
    return settings


def _value(params: dict, field: str):
    field = field.lower()
    for key, value in params.items():
        if key.lower() == field:
            return value
    return None


def _entries(settings: dict[str, str]) -> list[dict]:
    notes = Note.objects.published().only("slug", "params")
    field = settings["titleField"]
    if field.isascii():
        # The stored JSON names the key in quotes; rows without it are never read. (Non-ASCII
        # keys may be stored escaped, so those are matched in Python only.)
        notes = notes.filter(params__icontains=f'"{field}"')
    if settings["tag"]:
        notes = notes.filter(tags__name__iexact=settings["tag"])
    entries = []
    for note in notes:
        title = _value(note.params, settings["titleField"])
        if title in (None, ""):
            continue
        aliases = _value(note.params, settings["aliasesField"]) or []
        if isinstance(aliases, str):
            aliases = [aliases]
        entries.append(
            {
                "title": str(title),
                "url": f"/notes/{note.slug}/",
                "category": str(_value(note.params, settings["categoryField"]) or "").strip(),
                "aliases": [str(alias) for alias in aliases],
                "summary": str(_value(note.params, settings["summaryField"]) or ""),
            }
        )
    return sorted(entries, key=lambda entry: entry["title"].lower())


def _item(entry: dict) -> str:
    # The theme prints these fields as written and MathJax typesets their math on the page;
    # here the engine typesets the marked formulas with KaTeX once this HTML is sanitised.
    parts = [
        '<div class="entry-item">',
        f'<a class="entry-title" href="{html.escape(entry["url"])}">{marked(entry["title"])}</a>',
    ]
    if entry["aliases"]:
        aliases = ", ".join(marked(alias) for alias in entry["aliases"])
        parts.append(f'<p class="entry-alt"><em>Also known as:</em> {aliases}</p>')
    if entry["summary"]:
        parts.append(f'<p class="entry-desc">{marked(entry["summary"])}</p>')
    parts.append("</div>")
    return "".join(parts)


def _a_to_z(entries: list[dict], label: str, total: int) -> str:
    groups: dict[str, list[dict]] = defaultdict(list)
    for entry in entries:
        groups[entry["title"][:1].upper()].append(entry)
    lines = []
    for letters in (string.ascii_uppercase[:13], string.ascii_uppercase[13:]):
        cells = "".join(
            f'<a class="entry-alphabet-letter active" href="#{letter}">{letter}</a>'
            if letter in groups
            else f'<span class="entry-alphabet-letter inactive">{letter}</span>'
            for letter in letters
        )
        lines.append(f'<div class="entry-alphabet-line">{cells}</div>')
    body = "".join(
        f'<h2 class="entry-letter" id="{html.escape(letter)}">{html.escape(letter)}</h2>'
        + "".join(_item(entry) for entry in groups[letter])
        for letter in groups
    )
    return (
        f'<div class="entry-count"><strong>{total} {html.escape(label)} Covered'
        "</strong></div>"
        f'<div class="entry-alphabet">{"".join(lines)}</div><div class="entry-map">{body}</div>'
    )


def _categories(entries: list[dict], label: str, total: int, categories: int) -> str:
    groups: dict[str, list[dict]] = defaultdict(list)
    for entry in entries:
        groups[entry["category"]].append(entry)
    named = sorted((name for name in groups if name), key=str.lower)
    order = named + ([""] if "" in groups else [])
    jump, body = [], []
    for name in order:
        shown = name or "Uncategorised"
        anchor = slugify(shown, allow_unicode=True) or "uncategorised"
        jump.append(
            f'<div class="entry-alphabet-line"><a class="entry-alphabet-letter active" '
            f'href="#{anchor}">{html.escape(shown)}</a></div>'
        )
        body.append(f'<h2 class="entry-letter" id="{anchor}">{html.escape(shown)}</h2>')
        body.extend(_item(entry) for entry in groups[name])
    count = f"{total} {html.escape(label)} Covered in {categories} Categories"
    return (
        f'<div class="entry-count"><strong>{count}</strong></div>'
        f'<div class="entry-alphabet">{"".join(jump)}</div>'
        f'<div class="entry-map">{"".join(body)}</div>'
    )


def _cut(entries: list[dict], total: int, label: str) -> str:
    if len(entries) == total:
        return ""
    return (
        f'<p class="entry-cut">The first {len(entries)} of {total} {html.escape(label)} '
        "are listed here.</p>"
    )


def render_entry_index(name: str, params: dict[str, str]) -> str | None:
    settings = _settings(params)
    entries = _entries(settings)
    if not entries:
        return '<p class="entry-empty">No entries published yet.</p>'
    total = len(entries)
    label = settings["countLabel"]
    if name == "entry-categories":
        # Categories in their order, then entries by title: the cut keeps whole categories first.
        named = sorted({entry["category"] for entry in entries if entry["category"]}, key=str.lower)
        rank = {category: number for number, category in enumerate(named)}
        entries.sort(key=lambda entry: rank.get(entry["category"], len(rank)))
    shown = entries[: django_settings.SCIDRAFT_ENTRY_INDEX_MAX_ENTRIES]
    if name == "entry-categories":
        html_out = _categories(shown, label, total, len(named))
    else:
        html_out = _a_to_z(shown, label, total)
    return html_out + _cut(shown, total, label)
