"""Excerpts: a note's opening words as readers see them, for every place that quotes a note
(RSS descriptions, tag and author pages, search results, index.json, meta descriptions).

An excerpt is read from rendered HTML, never from the source: references keep their visible
labels (`Lemma 2`, `[3]`, `(Vaswani et al., 2017)`), formulas stay whole (KaTeX's own output in
HTML, the TeX between `\\(…\\)` or `\\[…\\]` in plain text), and what is not prose is left out:
diagrams, code blocks, pseudo-algorithms, reference lists, footnotes and anything hidden.
Reading stops once it has the words it needs, so a long note costs no more than a short one;
skipped blocks are jumped over by searching for their end tag.

The HTML form is escaped text and KaTeX spans copied whole from the stored render (a cut never
falls inside one), with `<mark>` around search matches, and it is cleaned once more by an
allowlist of exactly that (sanitise.clean_excerpt_html).
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Iterable
from dataclasses import dataclass

from . import jsengine, sanitise
from .bounded_cache import BoundedCache

SUMMARY_WORDS = 70  # Hugo's summaryLength


@dataclass(frozen=True)
class Segment:
    """A run of text, or one formula: its TeX, and KaTeX's HTML when read from a render."""

    text: str
    math: bool = False
    display: bool = False
    html: str = ""
    more: bool = False  # Hugo's `<!--more-->`: the author's summary ends here


DIVIDER = "<!--more-->"
_MORE = Segment("", more=True)


# --- Reading rendered HTML ----------------------------------------------------------------------


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TOKEN = re.compile(
    r"<!--.*?-->|<(/?)([a-zA-Z][a-zA-Z0-9:-]*)((?:\"[^\"]*\"|'[^']*'|[^'\">])*)>", re.S
)
_CLASS = re.compile(r"""\bclass\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.I)
_HIDDEN = re.compile(r"(?:^|\s)hidden(?:\s|=|$)", re.I)
_ANNOTATION = re.compile(r'<annotation encoding="application/x-tex">(.*?)</annotation>', re.S)
_KATEX_OPEN = re.compile(r'<span class="katex">')
_VOID = _names("area base br col embed hr img input link meta source track wbr")
_BLOCK = _names(
    "p div li ul ol dl dt dd h1 h2 h3 h4 h5 h6 pre table thead tbody tfoot tr td th caption "
    "blockquote figure figcaption section article aside details summary nav header footer "
    "br hr"
)
# Not prose: left out with everything in them. Classes are the engine's own (code.py,
# citations.py, convert.py's footnotes, shortcodes.py's glossary panel, which repeats the
# definitions of the terms in the text).
_SKIPPED_TAGS = frozenset({"pre", "script", "style", "template", "svg", "math", "nav"})
_SKIPPED_CLASSES = frozenset(
    {
        "highlight",  # code blocks (Pygments)
        "mermaid",
        "pseudo-algorithm",
        "references",
        "footnotes",
        "footnote-ref",
        "glossary-panel",
        "toc",
    }
)
_SPACES = re.compile(r"\s+")


def _classes(attributes: str) -> set[str]:
    match = _CLASS.search(attributes)
    if not match:
        return set()
    return set(next(group for group in match.groups() if group is not None).split())


def _element_end(markup: str, name: str, start: int) -> int:
    """Index just past the end tag closing the element whose start tag ends at `start`."""
    pattern = _same_name(name)
    depth = 1
    for match in pattern.finditer(markup, start):
        depth += -1 if match.group(1) else 1
        if depth == 0:
            return match.end()
    return len(markup)


@functools.lru_cache(maxsize=64)
def _same_name(name: str) -> re.Pattern:
    return re.compile(rf"<(/?){re.escape(name)}\b[^>]*>", re.I)


def _formula(markup: str, start: int, end: int, display: bool) -> Segment | None:
    """The formula whose KaTeX output lies in markup[start:end], or None if it has no TeX (a
    span an author wrote with KaTeX's class name is read as text)."""
    annotation = _ANNOTATION.search(markup, start, end)
    katex = _KATEX_OPEN.search(markup, start, end)
    if not annotation or not katex:
        return None
    inner_end = _span_end(markup, katex.start())
    tex = html.unescape(annotation.group(1)).strip()
    return Segment(tex, math=True, display=display, html=markup[katex.start() : inner_end])


def _span_end(markup: str, start: int) -> int:
    """Index just past the </span> closing the <span> that opens at `start`. KaTeX nests
    dozens of spans in a formula: each step jumps to the next `</span>` and counts the spans
    opened before it, both in C."""
    depth, position = 0, start
    while True:
        close = markup.find("</span>", position)
        if close < 0:
            return len(markup)
        depth += markup.count("<span", position, close) - 1
        position = close + len("</span>")
        if depth <= 0:
            return position


def _words(text: str) -> int:
    return len(text.split())


def segments_from_html(markup: str, max_words: int | None = None) -> tuple[Segment, ...]:
    """The readable text of rendered HTML, in order: runs of text (entities decoded, blocks
    separated by a space, inline markup joining its neighbours) and formulas. Diagrams, code
    blocks, algorithms, reference lists and hidden elements are left out. With `max_words`,
    reading stops once more than that many words were read (a formula counts as one). The
    summary divider is a `more` segment."""
    segments: list[Segment] = []
    pieces: list[str] = []
    count = 0

    def flush() -> None:
        if pieces:
            text = _SPACES.sub(" ", html.unescape("".join(pieces)))
            if text.strip():
                segments.append(Segment(text))
            pieces.clear()

    position = 0
    length = len(markup)
    while position < length:
        if max_words is not None and count > max_words:
            break
        match = _TOKEN.search(markup, position)
        stop = match.start() if match else length
        if stop > position:
            text = markup[position:stop]
            pieces.append(text)
            count += _words(text)
        if not match:
            break
        position = match.end()
        closing, name, attributes = match.group(1), (match.group(2) or "").lower(), match.group(3)
        if not name:
            if match.group() == DIVIDER:
                flush()
                segments.append(_MORE)
            continue
        if closing:
            if name in _BLOCK:
                pieces.append(" ")
            continue
        if name in _VOID or attributes.rstrip().endswith("/"):
            if name in _BLOCK:
                pieces.append(" ")
            continue
        classes = _classes(attributes) if attributes else set()
        if "katex" in classes or "katex-display" in classes:
            end = _span_end(markup, match.start())
            formula = _formula(markup, match.start(), end, display="katex-display" in classes)
            if formula is None and end == length:
                break  # a formula cut off by the end of a prefix (notes.excerpts)
            if formula is not None:
                if formula.display:
                    pieces.append(" ")
                flush()
                segments.append(formula)
                count += 1
                if formula.display:
                    pieces.append(" ")
                position = end
                continue
        if name in _SKIPPED_TAGS or classes & _SKIPPED_CLASSES or _HIDDEN.search(attributes):
            position = _element_end(markup, name, position)
            pieces.append(" ")
            continue
        if name in _BLOCK:
            pieces.append(" ")
    flush()
    return _trimmed(segments)


def _trimmed(segments: list[Segment]) -> tuple[Segment, ...]:
    text = [index for index, segment in enumerate(segments) if not segment.more]
    if text and not segments[text[0]].math:
        segments[text[0]] = Segment(segments[text[0]].text.lstrip())
    if text and not segments[text[-1]].math:
        segments[text[-1]] = Segment(segments[text[-1]].text.rstrip())
    return tuple(segment for segment in segments if segment.math or segment.text or segment.more)


# --- Reading text an author wrote (a summary, a description) ------------------------------------

_DELIMITED = re.compile(
    r"\$\$(?P<d1>.+?)\$\$|\\\[(?P<d2>.+?)\\\]|\\\((?P<i1>.+?)\\\)"
    r"|(?<![\\$])\$(?P<i2>[^$\s](?:[^$]*?[^$\s])?)\$(?!\d)",
    re.S,
)


def segments_from_text(text: str) -> tuple[Segment, ...]:
    """Text as written: `\\(..\\)`, `$..$`, `$$..$$`, `\\[..\\]` are formulas (typeset when
    shown as HTML), the rest is text."""
    segments: list[Segment] = []
    position = 0
    for match in _DELIMITED.finditer(text):
        if match.start() > position:
            segments.append(Segment(text[position : match.start()]))
        display = match.group("d1") is not None or match.group("d2") is not None
        tex = next(group for group in match.group("d1", "d2", "i1", "i2") if group is not None)
        segments.append(Segment(tex.strip(), math=True, display=display))
        position = match.end()
    if position < len(text):
        segments.append(Segment(text[position:]))
    return tuple(segments)


# --- Cutting ------------------------------------------------------------------------------------

_WORDY = re.compile(r"\w")
_UNIT = re.compile(r"\s*\S+\s*$|\s*\S+|\s+$")


@dataclass(frozen=True)
class _Unit:
    text: str
    math: Segment | None = None


def _units(segments: Iterable[Segment]) -> list[_Unit]:
    """Words (with the space before them) and formulas: an excerpt starts and ends between
    two of them, so it never cuts a word or a formula."""
    units: list[_Unit] = []
    for segment in segments:
        if segment.math:
            units.append(_Unit(segment.text, segment))
        else:
            units.extend(_Unit(match.group()) for match in _UNIT.finditer(segment.text))
    return units


def _first_match(units: list[_Unit], pattern: re.Pattern) -> int | None:
    """Index of the unit where the first match outside formulas starts."""
    run: list[int] = []  # indices of a run of text units, matched as one string

    def search() -> int | None:
        if not run:
            return None
        text = "".join(units[index].text for index in run)
        match = pattern.search(text)
        if not match:
            return None
        offset = 0
        for index in run:
            offset += len(units[index].text)
            if offset > match.start():
                return index
        return run[-1]

    for index, unit in enumerate(units):
        if unit.math is None:
            run.append(index)
            continue
        if (found := search()) is not None:
            return found
        run = []
    return search()


@dataclass(frozen=True)
class Excerpt:
    """Whole words and formulas from a text, and whether text was left out before or after."""

    segments: tuple[Segment, ...]
    cut_before: bool = False
    cut_after: bool = False
    matched: bool = False  # `around` matched the text, outside its formulas

    @property
    def has_math(self) -> bool:
        return any(segment.math for segment in self.segments)

    @property
    def weight(self) -> int:
        """About what it holds in memory, in characters (for the caches)."""
        return sum(len(segment.text) + len(segment.html) for segment in self.segments) + 100

    def text(self, ellipsis: str = "…") -> str:
        """Plain text: formulas as TeX between `\\(…\\)` (inline) or `\\[…\\]` (display)."""
        parts = []
        for segment in self.segments:
            if segment.math:
                opener, closer = ("\\[", "\\]") if segment.display else ("\\(", "\\)")
                parts.append(f"{opener}{segment.text}{closer}")
            else:
                parts.append(segment.text)
        return self._marked("".join(parts).strip(), ellipsis)

    def html(self, highlight: re.Pattern | None = None, ellipsis: str = "…") -> str:
        """Escaped text and typeset formulas in one paragraph's flow, matches of `highlight`
        marked (never inside a formula), cleaned by the excerpt allowlist. Without `highlight`
        it is kept (_html_made): a list quotes the same cards each time it is rendered."""
        if highlight is not None:
            return self._html(highlight, ellipsis)
        found = _html_made.get((self, ellipsis))
        if found is None:
            found = self._html(None, ellipsis)
            _html_made.put((self, ellipsis), found)
        return found

    def _html(self, highlight: re.Pattern | None, ellipsis: str) -> str:
        parts = []
        for segment in self.segments:
            parts.append(typeset(segment) if segment.math else mark(segment.text, highlight))
        body = "".join(parts).strip()
        if not body:
            return ""
        return sanitise.clean_excerpt_html(self._marked(body, html.escape(ellipsis)))

    def _marked(self, body: str, ellipsis: str) -> str:
        if not body or not ellipsis:
            return body
        if self.cut_before:
            body = f"{ellipsis} {body}"
        if self.cut_after:
            body = f"{body} {ellipsis}"
        return body


# Excerpts' HTML by excerpt: typesetting and cleaning cost a list page a third of its render,
# and a list rendered again (a write to one of its notes) quotes mostly the same cards.
_html_made = BoundedCache(4_096, 4 * 2**20, lambda key, value: len(value) + key[0].weight)


def excerpt(
    segments: tuple[Segment, ...],
    *,
    words: int | None = None,
    chars: int | None = None,
    around: re.Pattern | None = None,
) -> Excerpt:
    """The first `words` words (or about `chars` characters) of `segments`, whole words and
    whole formulas; with `around`, a window that starts about a third of its length before the
    first match outside a formula (from the start when nothing matches). Without `around`, the
    text before a summary divider is the excerpt, marked as cut."""
    divided = False
    if any(segment.more for segment in segments):
        divider = next(index for index, segment in enumerate(segments) if segment.more)
        divided = around is None
        segments = segments[:divider] + (() if divided else segments[divider + 1 :])
    units = _units(segments)
    if not units:
        return Excerpt(())
    start = 0
    hit = _first_match(units, around) if around is not None else None
    if hit is not None:
        back = (chars or 6 * (words or SUMMARY_WORDS)) // 3
        start = hit
        while start > 0 and back > 0:
            start -= 1
            back -= len(units[start].text)
    end, used = start, 0
    while end < len(units):
        unit = units[end]
        cost = len(unit.text) if chars is not None else 1
        # A formula that starts inside the budget is shown whole if it ends not far past it.
        slack = chars // 3 if chars is not None and unit.math is not None else 0
        if end > start and (
            (chars is not None and used + cost > chars + slack)
            or (words is not None and used >= words)
        ):
            break
        used += cost
        end += 1
    if chars is not None and end == len(units) and start > 0:
        # Near the end of the text: start earlier rather than show less.
        while start > 0 and used + len(units[start - 1].text) <= chars:
            start -= 1
            used += len(units[start].text)
    # Not from the punctuation that ends the sentence before.
    while (
        0 < start < end - 1 and units[start].math is None and not _WORDY.search(units[start].text)
    ):
        start += 1
    chosen: list[Segment] = []
    for unit in units[start:end]:
        if unit.math is not None:
            chosen.append(unit.math)
        elif chosen and not chosen[-1].math:
            chosen[-1] = Segment(chosen[-1].text + unit.text)
        else:
            chosen.append(Segment(unit.text))
    return Excerpt(
        _trimmed(chosen),
        cut_before=start > 0,
        cut_after=end < len(units) or divided,
        matched=hit is not None,
    )


# --- HTML pieces --------------------------------------------------------------------------------


def mark(text: str, pattern: re.Pattern | None) -> str:
    """Escaped text with <mark class="search-highlight"> around every match."""
    if pattern is None:
        return html.escape(text)
    out: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        if match.end() == match.start():
            continue
        out.append(html.escape(text[position : match.start()]))
        out.append(f'<mark class="search-highlight">{html.escape(match.group())}</mark>')
        position = match.end()
    out.append(html.escape(text[position:]))
    return "".join(out)


def typeset(segment: Segment) -> str:
    """A formula for an excerpt: KaTeX's output from the render it was read from, else typeset
    now (text an author wrote), inline either way since an excerpt is one paragraph. TeX KaTeX
    cannot read is shown as escaped source."""
    if segment.html:
        return segment.html
    try:
        return jsengine.render_tex(segment.text, display=False)
    except jsengine.JSError:
        opener, closer = ("$$", "$$") if segment.display else ("\\(", "\\)")
        return f'<code class="math-source">{html.escape(opener + segment.text + closer)}</code>'
