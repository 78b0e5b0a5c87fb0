"""HTML nesting, bounded before nh3 sees the author's HTML (sanitise.py).

html5ever, under nh3, looks through the open elements for most block-level tags, so nesting
costs time quadratic in depth (`<div>` × 100,000, 0.5 MB: 29 s). And a formatting element
(<b>, <a>…) left open when its block ends is re-opened by the parser in every later block
("reconstruct the active formatting elements"): 2,000 distinct `<b class=…>x<p>` (40 KB)
came out as 40 MB, and 16,000 exhausted the memory. So the author's HTML is read once, with a
model of the parser's open elements, before nh3 sees it: a start tag past MAX_DEPTH open
elements is left out (with its end tag), formatting elements that would be re-opened past
MAX_REOPEN_* get an end tag where their block ends, and a table is closed once more than
MAX_FOSTERED pieces of text or tags have been written in it outside a cell (the parser moves
each in front of the table, in time that grows with the table's siblings: `<table>` and
`x<br>` × 80,000 took 4.4 s). Normal HTML, Markdown's included, never comes near these bounds
and is passed on unchanged.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# Open elements one start tag may sit in. Markdown nests at most limits.MAX_NESTING containers.
MAX_DEPTH = 100
# Formatting elements left open across block ends at one time, and re-opened in all.
MAX_REOPEN_AT_ONCE = 16
MAX_REOPENED = 5_000
# Text and tags written in one table outside its cells.
MAX_FOSTERED = 500


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_VOID = _names(
    "area base basefont bgsound br col embed frame hr image img input keygen link meta param "
    "source track wbr"
)
_FORMATTING = _names("a b big code em font i nobr s small strike strong tt u")
_RAW_TEXT = _names("script style xmp iframe noembed noframes noscript textarea title")
# Start tags that close an open <p> (the spec's "close a p element" in button scope).
_CLOSES_P = _names(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption "
    "figure footer header hgroup main menu nav ol p search section summary ul h1 h2 h3 h4 h5 "
    "h6 pre listing form table hr xmp plaintext li dd dt"
)
# Elements that end the search for an open element to close (html5ever counts <select> too).
_SCOPE = _names("applet caption html table td th marquee object template select")
_BUTTON_SCOPE = _SCOPE | {"button"}
_SPECIAL = (
    _CLOSES_P
    | _SCOPE
    | _VOID
    | _names(
        "base body button caption col colgroup frameset head html iframe noembed noframes noscript "
        "script select style tbody td template textarea tfoot th thead title tr"
    )
)
_TABLE = _names("table caption colgroup col tbody thead tfoot tr td th")
_TABLE_ROWS = _names("table tbody thead tfoot tr")
_FOREIGN = frozenset({"svg", "math"})
# HTML start tags that end SVG or MathML content (and <font> with one of these attributes).
_BREAKOUT = _names(
    "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img "
    "li listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var"
)
_FONT_BREAKOUT = re.compile(r"\b(?:color|face|size)\s*=", re.I)
# A comment, or a tag: `<` and a letter, up to the first `>` (what nh3 writes back quotes `>`
# in attribute values; an author's `>` inside one only cuts the tag short, which is safe).
_MARKUP = re.compile(r"<!--.*?(?:-->|\Z)|<(/?)([A-Za-z][^\s/>]*)([^>]*)>", re.S)


@dataclass
class NestingLimit:
    """What limit_nesting changed: tags it left out, end tags it added."""

    dropped: int = 0
    closed: int = 0
    tables_closed: int = 0
    first_offset: int = 0  # of the first change, in the text it read

    def message(self) -> str:
        parts = []
        if self.dropped:
            parts.append(
                f"{self.dropped:,} HTML tags nested more than {MAX_DEPTH} elements deep were "
                "left out (the text inside them is kept)"
            )
        if self.closed:
            parts.append(
                f"{self.closed:,} formatting tags (<b>, <i>, <a>…) left open across many "
                "blocks were closed where their block ends"
            )
        if self.tables_closed:
            parts.append(
                f"{self.tables_closed:,} tables with more than {MAX_FOSTERED:,} pieces of text "
                "or tags outside their cells were closed there"
            )
        return "; ".join(parts)


class _Nesting:
    """The parser's open elements and active formatting elements, as far as depth goes.

    It follows the HTML parser's rules for what opens and closes elements in a body, and in
    SVG or MathML (no re-opening; some HTML tags end it),
    closely enough to bound what html5ever builds: it may count more than the parser does,
    which only makes a bound apply earlier, never later.
    """

    def __init__(self, html: str):
        self.html = html
        self.stack: list[str] = []
        self.dangling: list[str] = []  # formatting elements the parser will re-open
        self.reopened = 0
        self.foreign_at = -1  # index in `stack` of the outermost open <svg> or <math>
        self.select_at = -1  # index in `stack` of an open <select>
        self.dropped_open: dict[str, int] = {}
        self.edits: list[tuple[int, int, str]] = []
        self.limit = NestingLimit()
        self.fostered = 0

    def run(self) -> str:
        html, position = self.html, 0
        while True:
            match = _MARKUP.search(html, position)
            if match is None:
                break
            if match.start() > position and self.foreign_at < 0:
                if (
                    self.stack
                    and self.stack[-1] in _TABLE_ROWS
                    and html[position : match.start()].strip()
                ):
                    self.foster(position)
                self.reconstruct()  # text in a body re-opens the formatting elements
            position = match.end()
            if match.group(2) is None:
                continue  # a comment
            name = match.group(2).lower()
            if match.group(1):
                self.end_tag(name, match)
                continue
            position = self.start_tag(name, match)
            if position < 0:
                break  # <plaintext>: the rest is text
        if not self.edits:
            return html
        out, last = [], 0
        for start, end, replacement in self.edits:
            out.append(html[last:start])
            out.append(replacement)
            last = end
        out.append(html[last:])
        return "".join(out)

    def change(self, start: int, end: int, replacement: str) -> None:
        if not self.edits:
            self.limit.first_offset = start
        self.edits.append((start, end, replacement))

    def drop(self, match: re.Match) -> None:
        # Left out, not shown as text: html5ever is quadratic in text foster-parented out of
        # a table too, and these tags may sit in one.
        self.change(match.start(), match.end(), "")

    def reconstruct(self) -> None:
        if self.dangling:
            self.reopened += len(self.dangling)
            self.stack.extend(self.dangling)
            self.dangling.clear()

    def find(self, names, stop=frozenset(), floor: int = 0) -> int:
        for index in range(len(self.stack) - 1, floor - 1, -1):
            name = self.stack[index]
            if name in names:
                return index
            if name in stop:
                return -1
        return -1

    def push(self, name: str, match: re.Match) -> int:
        if len(self.stack) >= MAX_DEPTH:
            self.dropped_open[name] = self.dropped_open.get(name, 0) + 1
            self.drop(match)
            self.limit.dropped += 1
            return match.end()
        if name in _FOREIGN and self.foreign_at < 0:
            self.foreign_at = len(self.stack)
        elif name == "select" and self.foreign_at < 0:
            self.select_at = len(self.stack)
        self.stack.append(name)
        return match.end()

    def remove(self, index: int) -> None:
        del self.stack[index]
        if self.foreign_at >= index:
            self.foreign_at = -1 if self.foreign_at == index else self.foreign_at - 1
        if self.select_at >= index:
            self.select_at = -1 if self.select_at == index else self.select_at - 1

    def pop_to(self, index: int, at: int) -> None:
        """Close stack[index] and the elements above it, as the parser does when a tag at
        `at` ends them without their own end tags."""
        above = self.stack[index + 1 :]
        del self.stack[index:]
        if self.foreign_at >= index:
            self.foreign_at = -1
        if self.select_at >= index:
            self.select_at = -1
        formatting = [name for name in above if name in _FORMATTING]
        if not formatting:
            return
        if (
            len(self.dangling) + len(formatting) <= MAX_REOPEN_AT_ONCE
            and self.reopened + len(self.dangling) + len(formatting) <= MAX_REOPENED
        ):
            self.dangling.extend(formatting)
            return
        # Closed here instead, innermost first: at this point they are the current nodes.
        self.change(at, at, "".join(f"</{name}>" for name in reversed(formatting)))
        self.limit.closed += len(formatting)

    def start_tag(self, name: str, match: re.Match) -> int:
        at = match.start()
        if self.foreign_at >= 0:
            if not (name in _BREAKOUT or (name == "font" and _FONT_BREAKOUT.search(match[3]))):
                if match.group(3).rstrip().endswith("/"):
                    return match.end()  # self-closing in SVG and MathML
                return self.push(name, match)
            self.pop_to(self.foreign_at, at)  # an HTML tag ends the SVG or MathML
        # A <select>'s content is read as a body's (html5ever follows the 2025 relaxation);
        # another <select> or an <input> ends it.
        if name in {"select", "input", "keygen"} and self.select_at >= 0:
            self.pop_to(self.select_at, at)
            if name == "select":
                return match.end()
        if name in {"option", "optgroup"} and self.stack and self.stack[-1] == "option":
            self.stack.pop()
        if name in _RAW_TEXT:
            # Text up to its end tag: tags written inside are not elements.
            end = _raw_text_end(name).search(self.html, match.end())
            return end.start() if end else len(self.html)
        if name == "plaintext":
            return -1
        if name in _TABLE - {"table"} and self.find({"table"}) < 0:
            return match.end()  # ignored outside a table
        if name not in _TABLE and self.stack and self.stack[-1] in _TABLE_ROWS:
            self.foster(at)
        if name in _CLOSES_P or name in _TABLE:
            self.implied_ends(name, at)
        else:
            self.reconstruct()
            if name in {"a", "nobr"}:
                self.adopt(name, at)  # a second <a> ends the first, wherever it is
        if name in _VOID:
            return match.end()
        return self.push(name, match)

    def foster(self, at: int) -> None:
        """Text or a tag at `at` that the parser moves out of the table it is written in."""
        self.fostered += 1
        if self.fostered > MAX_FOSTERED:
            self.change(at, at, "</table>")
            self.limit.tables_closed += 1
            self.pop_to(self.find({"table"}), at)
            self.fostered = 0

    def implied_ends(self, name: str, at: int) -> None:
        """What a block-level start tag `name` closes first."""
        if name not in _TABLE:
            index = self.find({"p"}, _BUTTON_SCOPE)
            if index >= 0:
                self.pop_to(index, at)
        if name in {"li", "dd", "dt"}:
            same = {"li"} if name == "li" else {"dd", "dt"}
            index = self.find(same, _SPECIAL - {"address", "div", "p"} - same)
        elif name in {"td", "th"}:
            index = self.find({"td", "th"}, {"tr", "table"})
        elif name == "tr":
            index = self.find({"tr"}, {"table", "tbody", "thead", "tfoot"})
        elif name in {"tbody", "thead", "tfoot"}:
            index = self.find({"tbody", "thead", "tfoot"}, {"table"})
        else:
            return
        if index >= 0:
            self.pop_to(index, at)

    def adopt(self, name: str, at: int) -> None:
        """The end of the formatting element `name` (its end tag, or a second <a>): the
        parser's adoption agency, as far as depth goes."""
        index = self.find({name}, _SCOPE)
        if index < 0:
            if self.find({name}) < 0:
                _remove_last(self.dangling, name)
            return  # out of scope: the parser ignores the end tag
        if any(other in _SPECIAL for other in self.stack[index + 1 :]):
            self.remove(index)  # the block inside stays open, moved into a copy of it
        else:
            self.pop_to(index, at)

    def end_tag(self, name: str, match: re.Match) -> None:
        if self.dropped_open.get(name):
            self.dropped_open[name] -= 1
            self.drop(match)
            return
        at = match.start()
        if self.foreign_at >= 0:
            index = self.find({name}, floor=self.foreign_at)
            if index >= 0:
                self.pop_to(index, at)
                return
        if name in _FORMATTING:
            self.adopt(name, at)
            return
        if name in _CLOSES_P or name in _TABLE:
            index = self.find({name}, _BUTTON_SCOPE if name == "p" else _SCOPE - {name})
        else:
            index = self.find({name}, _SPECIAL)
        if index >= 0:
            self.pop_to(index, at)


def _remove_last(names: list[str], name: str) -> None:
    for index in range(len(names) - 1, -1, -1):
        if names[index] == name:
            del names[index]
            return


@functools.cache
def _raw_text_end(name: str) -> re.Pattern:
    return re.compile(rf"</{re.escape(name)}[\s/>]", re.I)


# Markup the quick check leaves to the model: a `<` that starts no tag, comments, doctypes.
_ODD_MARKUP = re.compile(r"<(?![A-Za-z]|/[A-Za-z])|<!")
_TEXT_AND_TAG = re.compile(r"([^<]*)<(/?)([A-Za-z][^\s/>]*)[^>]*>")
# Start tags whose effect on the tree the quick check does not follow.
_UNUSUAL = _RAW_TEXT | _FOREIGN | _names("plaintext select html head body frameset frame image")
_LISTS = _names("ul ol menu dl")
_HEADINGS = _names("h1 h2 h3 h4 h5 h6")


def _plainly_nested(html: str) -> bool:
    """True when the parser builds exactly the tree the tags spell, within MAX_DEPTH: every end
    tag closes the element open last, and no start tag closes one (a block in a <p>, a list
    item outside a list…) or lands outside a table's cells. Markdown's output, and an author's
    tidy HTML, pass this in a fraction of the model's time."""
    if _ODD_MARKUP.search(html):
        return False
    stack: list[str] = []
    paragraphs = 0
    for text, slash, name in _TEXT_AND_TAG.findall(html):
        name = name.lower()
        top = stack[-1] if stack else ""
        if text and top in _TABLE_ROWS and not text.isspace():
            return False
        if slash:
            if top != name:
                return False
            stack.pop()
            paragraphs -= name == "p"
            continue
        if name in _UNUSUAL or (top in _TABLE_ROWS and name not in _TABLE):
            return False
        if name in _TABLE_PARENTS:
            if top not in _TABLE_PARENTS[name]:
                return False  # a <tr> straight in a <table> gets a <tbody>: the model's case
        elif name in _CLOSES_P and paragraphs:
            return False
        if name in {"li", "dd", "dt"} and top not in _LISTS:
            return False
        if (name in _HEADINGS and top in _HEADINGS) or (name in {"a", "nobr"} and name in stack):
            return False
        if name in _VOID:
            continue
        if len(stack) >= MAX_DEPTH:
            return False
        stack.append(name)
        paragraphs += name == "p"
    return True


_TABLE_PARENTS = {
    "caption": {"table"},
    "colgroup": {"table"},
    "col": {"colgroup"},
    "thead": {"table"},
    "tbody": {"table"},
    "tfoot": {"table"},
    "tr": {"thead", "tbody", "tfoot"},
    "td": {"tr"},
    "th": {"tr"},
}


def limit_nesting(html: str) -> tuple[str, NestingLimit | None]:
    """`html` with its nesting bounded (see above), and what changed (None: nothing)."""
    if html.count("<") <= MAX_DEPTH or _plainly_nested(html):
        return html, None  # too few tags to nest deeply or re-open much, or tidy
    nesting = _Nesting(html)
    limited = nesting.run()
    return limited, (nesting.limit if limited is not html else None)
