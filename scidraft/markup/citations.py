"""Citations and reference lists, with the theme's scoping rules
(docs/theme.md#citations-and-reference-lists).

Each list takes the citations that precede it and that no earlier list took. Keys are numbered
from 1 per list in order of first appearance; a repeated key reuses its number. Every marker
links to its entry, every entry links back to each place that cites it. A key missing from the
list's files renders "missing reference: KEY"; citations after the last list stay literal.
Both come with a warning. Formatting is the bibliography's (context.resolve_bibliography):
CSL styles through citation-js (bibliography.formatting). A numbered style keeps the theme's
`[n]` markers and citation order; an author–date style prints its own in-text citations
(`(Vaswani et al., 2017)`) and orders the list as the style sorts it.

Bounds: a note may hold thousands of lists, and name a style per list: past
context.max_citation_styles distinct styles a list takes the site's. Each file is looked up
once per render, lists past MAX_LISTS and lists reached once the render's budget is spent are
not formatted (their entries show the key), and each formatting call is bounded by what is
left of the budget (scidraft.markup.v8pool).
"""

from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass, field

from . import inline_math, limits
from .context import FormattedReferences, RenderContext, UnavailableBibliography
from .rendered import CitationList, RenderWarning
from .sanitise import clean_fragment
from .stash import Item

# Reference lists formatted in one note, a hard cap under the render's budget (which usually
# stops a hostile note first): a real note has one to three, the XSS corpus note 150.
MAX_LISTS = 1000
# The heading of the list a note that has none gets at its end (LaTeX's article class).
AUTOMATIC_TITLE = "References"
_MATH_TOKEN = re.compile("\ue010(\\d+)\ue011")

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
    numeric: bool = True
    order: list[str] = field(default_factory=list)  # the style's order (author–date styles)
    markers: dict[str, str] = field(default_factory=dict)  # key → in-text HTML (author–date)
    affixes: tuple[str, str, str] = ("(", ")", "; ")  # prefix, suffix, delimiter


def _unlisted(keys: str, lists: list[_List]) -> str:
    """What to do about a citation no list takes."""
    if lists:
        return (
            f"\\cite{{{keys}}} comes after the last reference list, so it stays as written: "
            "move it above that list, or add a {{< references >}} line after it"
        )
    return (
        f"\\cite{{{keys}}} has no reference list to go to, so it stays as written: add a "
        "{{< references >}} line where the list belongs (the site's setting for a list at "
        "the end is off)"
    )


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
    # A note that cites and has no list gets one at its end, as \bibliography gives in LaTeX
    # (theme: its \cite stays as written); its card gets one too. Lists of the author's own
    # keep the theme's rules.
    automatic = pending and not lists and context.auto_references
    if pending and card and (card_bibs is not None or automatic):
        # The card's own list reads the files of the body's first list
        # (docs/theme.md#citations-and-reference-lists).
        bibs = list(card_bibs or ()) or list(context.default_bibliographies)
        lists.append(_List(None, bibs, "", "", pending))
        pending = []
    elif automatic and not card:
        bibs = list(context.default_bibliographies)
        lists.append(_List(None, bibs, AUTOMATIC_TITLE, "", pending))
        pending = []
    for item in pending:
        keys = ", ".join((item.data or {}).get("keys", []))
        warnings.append(RenderWarning(item.line, "cite-unlisted", _unlisted(keys, lists)))
        item.html = html.escape((item.data or {})["source"])

    _cap_styles(lists, context, warnings)
    results: list[CitationList] = []
    # The theme's counter: the page's first marker is cite-back-0.
    back_counter = 0
    files: dict[str, object] = {}  # each file looked up once per render, however many lists
    limit_warned = False

    def bibliography_for(name: str):
        if name not in files:
            files[name] = context.resolve_bibliography(name)
        return files[name]

    for box, scope in enumerate(lists):
        numbers: dict[str, int] = {}
        backlinks: dict[str, list[int]] = {}
        first_line: dict[str, int] = {}
        marks: list[tuple[Item, int]] = []
        for cite in scope.cites:
            marks.append((cite, back_counter))
            for key in (cite.data or {})["keys"]:
                if key not in numbers:
                    numbers[key] = len(numbers) + 1
                    first_line[key] = cite.line
                backlinks.setdefault(key, []).append(back_counter)
            back_counter += 1
        formatted = box < MAX_LISTS and not limits.expired()
        if formatted:
            entries, missing, problem = _format(
                scope, list(numbers), context, warnings, bibliography_for
            )
        else:
            reason = "not formatted: too many reference lists, or the note's time ran out"
            entries, missing, problem = {}, [], reason
            _locate(scope, list(numbers), bibliography_for)
            if numbers and not limit_warned:
                limit_warned = True
                line = (scope.item.data or {}).get("line", 0) if scope.item else 0
                warnings.append(
                    RenderWarning(
                        line,
                        "references-limit",
                        f"reference lists after the first {MAX_LISTS}, or after the render's "
                        "time budget ran out, show their keys only",
                    )
                )
        for cite, counter in marks:
            cite.html = _marker(cite, counter, box, scope, numbers)
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


def _style_name(style: str) -> str:
    return style.strip().lower().removesuffix(".csl")


def _cap_styles(lists: list[_List], context: RenderContext, warnings: list[RenderWarning]) -> None:
    """Lists naming a style beyond the first context.max_citation_styles distinct ones (other
    than the site's) take the site's style, with a warning on their line: each style is built
    in V8 once per context (a second of CPU and tens of MB for the large ones)."""
    site = _style_name(context.citation_style or "")
    chosen: list[str] = []
    for scope in lists:
        name = _style_name(scope.style)
        if not name or name == site or name in chosen:
            continue
        if len(chosen) < context.max_citation_styles:
            chosen.append(name)
            continue
        line = (scope.item.data or {}).get("line", 0) if scope.item else 0
        warnings.append(
            RenderWarning(
                line,
                "citation-style-limit",
                f"a note may name at most {context.max_citation_styles} citation styles "
                f"besides the site's ({', '.join(chosen)}): this list is formatted in the "
                f"site's style, not {scope.style}",
            )
        )
        scope.style = ""


def _marker(cite: Item, counter: int, box: int, scope: _List, numbers: dict[str, int]) -> str:
    """`<sup class="citation">[1],[2]</sup>` as the theme writes it for numbered styles; the
    style's own in-text citation for the others, one link per key inside its affixes."""
    keys = (cite.data or {})["keys"]
    if scope.numeric or not scope.markers:
        links = ",".join(
            f'<a href="#ref-{box}-{_anchor_key(key)}">[{numbers[key]}]</a>' for key in keys
        )
        return f'<sup class="citation" id="cite-back-{counter}">{links}</sup>'
    prefix, suffix, delimiter = scope.affixes
    links = html.escape(delimiter, quote=False).join(
        f'<a href="#ref-{box}-{_anchor_key(key)}">{scope.markers.get(key) or html.escape(key)}</a>'
        for key in keys
    )
    return (
        f'<span class="citation citation-text" id="cite-back-{counter}">'
        f"{html.escape(prefix, quote=False)}{links}{html.escape(suffix, quote=False)}</span>"
    )


def _locate(scope: _List, keys: list[str], bibliography_for) -> None:
    """Record which file holds each key of a list that is not formatted, so the note's
    citations (references.bib, Scholar tags, "cited by") do not depend on formatting."""
    remaining = list(keys)
    for name in scope.bib:
        bibliography = bibliography_for(name)
        known = getattr(bibliography, "known", None)
        if known is None or not remaining:
            continue
        found = set(known(remaining))
        scope.sources.update({key: name for key in remaining if key in found})
        remaining = [key for key in remaining if key not in found]


def _typeset(markup: str, formulas: tuple[str, ...], line: int, warnings) -> str:
    """The entry's math placeholders as KaTeX HTML (the note's own math renderer)."""

    def formula(match: re.Match) -> str:
        index = int(match.group(1))
        if index >= len(formulas):
            return ""
        typeset, problem = inline_math.typeset(formulas[index], display=False)
        if problem:
            warnings.append(RenderWarning(line, "math-error", f"math in a reference: {problem}"))
        return typeset

    return _MATH_TOKEN.sub(formula, markup)


def _format(
    scope: _List,
    keys: list[str],
    context: RenderContext,
    warnings: list[RenderWarning],
    bibliography_for,
) -> tuple[dict[str, str], list[str], str]:
    """Formatted entries by key, the keys found nowhere, and a file problem to show (or "")."""
    if not keys:
        return {}, [], ""
    line = (scope.item.data or {}).get("line", 0) if scope.item else 0
    if not scope.bib:
        if scope.title == AUTOMATIC_TITLE and scope.item is None:
            message = (
                "the reference list at the end has no bibliography to read: choose the note's "
                "bibliographies in the editor's side panel"
            )
            line = scope.cites[0].line if scope.cites else 0
        else:
            message = (
                'this reference list names no bibliography (bib="bib/refs.bib") and the note '
                "has no default bibliography"
            )
        warnings.append(RenderWarning(line, "bib-missing", message))
        return {}, [], 'no bibliography named: add bib="bib/….bib"'
    style = scope.style or context.citation_style
    entries: dict[str, str] = {}
    problems = []
    remaining = list(keys)
    for name in scope.bib:
        bibliography = bibliography_for(name)
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
        found = bibliography.format(remaining, style, context.citation_locale)
        if not isinstance(found, FormattedReferences):  # a plain {key: html} bibliography
            found = FormattedReferences(dict(found))
        for key, value in found.entries.items():
            entries[key] = _typeset(_clean_entry(value), found.math.get(key, ()), line, warnings)
        for key, reason in found.problems.items():
            warnings.append(
                RenderWarning(line, "cite-unformatted", f"reference {key} in {name}: {reason}")
            )
        scope.sources.update({key: name for key in found.entries})
        scope.numeric = found.numeric
        scope.order += [key for key in found.order if key in found.entries]
        scope.markers.update(
            {key: _clean_entry(marker) for key, marker in found.markers.items() if marker}
        )
        scope.affixes = (found.prefix, found.suffix, found.delimiter)
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
    order = list(numbers)
    if not scope.numeric and scope.order:
        # The style's order (by author, year…), then keys it did not format.
        order = [key for key in scope.order if key in numbers]
        order += [key for key in numbers if key not in order]
    items = []
    for key in order:
        anchor = _anchor_key(key)
        if key in entries:
            body = (
                '<div class="csl-bib-body"><div class="csl-entry"><div class="csl-right-inline">'
                f"{entries[key]}</div></div></div>"
            )
        elif problem:
            body = f"<em>{html.escape(problem)}: {html.escape(key)}</em>"
        else:
            body = f"<em>missing reference: {html.escape(key)}</em>"
        # One ↩ per citing place, separated by a space (the theme's join(" ")).
        back = " ".join(
            f'<a href="#cite-back-{target}" title="Back to citation {index}">↩</a>'
            for index, target in enumerate(backlinks[key], start=1)
        )
        number = f'<span class="ref-num">[{numbers[key]}]</span> ' if scope.numeric else ""
        items.append(
            f'<li id="ref-{box}-{anchor}">{number}{body}<span class="ref-back">{back}</span></li>'
        )
    css_list = "ref-list" if scope.numeric else "ref-list ref-list-text"
    return f'<div class="{css}"{source}>{title}<ol class="{css_list}">{"".join(items)}</ol></div>'
