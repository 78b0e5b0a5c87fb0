"""Citations and reference lists, with the theme's scoping rules (theme-spec §2.4).

Each list takes the citations that precede it and that no earlier list took. Keys are numbered
from 1 per list in order of first appearance; a repeated key reuses its number. Every marker
links to its entry, every entry links back to each place that cites it. A key missing from the
list's files renders "missing reference: KEY"; citations after the last list stay literal.
Both come with a warning. Formatting is the bibliography's (context.resolve_bibliography).
"""

from __future__ import annotations

import functools
import html
from dataclasses import dataclass, field

from .context import RenderContext, UnavailableBibliography
from .rendered import CitationList, RenderWarning
from .sanitise import clean_fragment
from .stash import Item

# A formatted entry is the same string wherever it is cited (entries are formatted per content
# and style, bibliography.formatting): sanitised once per process, not once per citing note.
_clean_entry = functools.lru_cache(maxsize=20_000)(clean_fragment)


@dataclass
class _List:
    item: Item | None  # None for the card's own list (references-in-card)
    bib: list[str]
    title: str
    style: str
    cites: list[Item] = field(default_factory=list)
    url: str = ""  # where the first file that exists is served (data-bib-src)
    sources: dict[str, str] = field(default_factory=dict)  # key → file it was found in
    labels: dict[str, str] = field(default_factory=dict)  # key → label, for label styles


def _anchor_key(key: str) -> str:
    return html.escape(key, quote=True)


def resolve(
    ordered: list[Item],
    context: RenderContext,
    warnings: list[RenderWarning],
    *,
    card: bool = False,
    card_bibs: tuple[str, ...] | None = None,
) -> tuple[list[CitationList], str]:
    """Set the HTML of every cite and references item; returns the lists and, for a card whose
    citations have no list of their own, the HTML of the card's list."""
    lists: list[_List] = []
    pending: list[Item] = []
    for item in ordered:
        if item.kind == "cite":
            pending.append(item)
        elif item.kind == "references":
            data = item.data or {}
            bib = data.get("bib") or list(context.default_bibliographies)
            lists.append(_List(item, bib, data.get("title", ""), data.get("style", ""), pending))
            pending = []

    trailing = ""
    if pending and card and card_bibs is not None:
        # The card's own list reads the files of the body's first list (theme-spec §2.4).
        bibs = list(card_bibs) or list(context.default_bibliographies)
        lists.append(_List(None, bibs, "", "", pending))
        pending = []
    for item in pending:
        keys = ", ".join((item.data or {}).get("keys", []))
        warnings.append(
            RenderWarning(
                item.line,
                "cite-unlisted",
                f"\\cite{{{keys}}} comes after the last reference list, so it stays as written",
            )
        )
        item.html = html.escape((item.data or {})["source"])

    results: list[CitationList] = []
    back_counter = 0
    for box, scope in enumerate(lists):
        numbers: dict[str, int] = {}
        backlinks: dict[str, list[int]] = {}
        first_line: dict[str, int] = {}
        marks: list[tuple[Item, int]] = []
        for cite in scope.cites:
            back_counter += 1
            marks.append((cite, back_counter))
            for key in (cite.data or {})["keys"]:
                if key not in numbers:
                    numbers[key] = len(numbers) + 1
                    first_line[key] = cite.line
                backlinks.setdefault(key, []).append(back_counter)
        entries, missing, problem = _format(scope, list(numbers), context, warnings)
        for cite, counter in marks:
            # Numbered styles show [n]; label styles (alpha, author–year) show their label.
            links = ",".join(
                f'<a href="#ref-{box}-{_anchor_key(key)}">'
                f"[{html.escape(scope.labels.get(key) or str(numbers[key]))}]</a>"
                for key in (cite.data or {})["keys"]
            )
            cite.html = f'<sup class="citation" id="cite-back-{counter}">{links}</sup>'
        for key in missing:
            warnings.append(
                RenderWarning(
                    first_line[key],
                    "cite-missing",
                    f"missing reference: {key} is not in "
                    f"{', '.join(scope.bib) or 'any bibliography'}",
                )
            )
        rendered = _list_html(box, scope, numbers, backlinks, entries, problem, card)
        if scope.item is not None:
            scope.item.html = rendered
        else:
            trailing = rendered
        results.append(
            CitationList(scope.bib, scope.title, list(numbers), missing, dict(scope.sources))
        )
    return results, trailing


def _format(
    scope: _List, keys: list[str], context: RenderContext, warnings: list[RenderWarning]
) -> tuple[dict[str, str], list[str], str]:
    """Formatted entries by key, the keys found nowhere, and a file problem to show (or "")."""
    if not keys:
        return {}, [], ""
    line = (scope.item.data or {}).get("line", 0) if scope.item else 0
    if not scope.bib:
        warnings.append(
            RenderWarning(
                line,
                "bib-missing",
                'this reference list names no bibliography (bib="bib/refs.bib") and the note '
                "has no default bibliography",
            )
        )
        return {}, [], 'no bibliography named: add bib="bib/….bib"'
    style = scope.style or context.citation_style
    entries: dict[str, str] = {}
    problems = []
    remaining = list(keys)
    for name in scope.bib:
        bibliography = context.resolve_bibliography(name)
        if bibliography is None:
            warnings.append(
                RenderWarning(line, "bib-missing", f"bibliography file {name} does not exist")
            )
            problems.append(f"bibliography not found: {name}")
            continue
        if isinstance(bibliography, UnavailableBibliography):
            warnings.append(
                RenderWarning(
                    line, "bib-private", f"bibliography file {name} {bibliography.reason}"
                )
            )
            problems.append(f"bibliography not available to this note: {name}")
            continue
        scope.url = scope.url or getattr(bibliography, "url", "") or f"/{name}"
        found = bibliography.format(remaining, style)
        entries.update({key: _clean_entry(value) for key, value in found.items()})
        scope.sources.update({key: name for key in found})
        labeller = getattr(bibliography, "labels", None)
        if labeller is not None and found:
            scope.labels.update(labeller(list(found), style) or {})
        remaining = [key for key in remaining if key not in entries]
        if not remaining:
            break
    # When no file could be found at all, the one file-level warning says enough.
    missing = remaining if len(problems) < len(scope.bib) else []
    return entries, missing, "; ".join(problems)


def _list_html(
    box: int,
    scope: _List,
    numbers: dict[str, int],
    backlinks: dict[str, list[int]],
    entries: dict[str, str],
    problem: str,
    card: bool,
) -> str:
    url = scope.url or (f"/{scope.bib[0]}" if scope.bib else "")
    source = f' data-bib-src="{html.escape(url)}"' if url else ""
    css = "references references-in-card" if card and scope.item is None else "references"
    title = f'<h2 class="references-title">{html.escape(scope.title)}</h2>' if scope.title else ""
    if not numbers:
        # A list whose scope cites nothing stays hidden, heading included (theme behaviour).
        return f'<div class="{css}" hidden{source}>{title}</div>'
    items = []
    for key, number in numbers.items():
        anchor = _anchor_key(key)
        if key in entries:
            body = (
                '<div class="csl-bib-body"><div class="csl-entry"><div class="csl-right-inline">'
                f"{entries[key]}</div></div></div>"
            )
        elif problem:
            body = f"<em>{html.escape(problem)}</em>"
        else:
            body = f"<em>missing reference: {html.escape(key)}</em>"
        back = "".join(
            f'<a href="#cite-back-{target}" title="Back to citation {index}">↩</a>'
            for index, target in enumerate(backlinks[key], start=1)
        )
        items.append(
            f'<li id="ref-{box}-{anchor}"><span class="ref-num">'
            f"[{html.escape(scope.labels.get(key) or str(number))}]</span> {body}"
            f'<span class="ref-back">{back}</span></li>'
        )
    return f'<div class="{css}"{source}>{title}<ol class="ref-list">{"".join(items)}</ol></div>'
