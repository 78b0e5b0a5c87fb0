"""HTML nesting, bounded before nh3 (see below): what sanitise.clean_author_html and
clean_fragment give nh3."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

# html5ever, under nh3, looks through the open elements for most block-level tags, so its time
# grows with the square of the depth (`<div>` × 100,000, 0.5 MB: 29 s); a formatting element
# (<b>, <a>…) left open when its block ends is re-opened by the parser in every later block, so
# 2,000 distinct `<b class=…>x<p>` (40 KB) came out as 40 MB; and text or tags written in a
# table outside its cells are moved in front of the table one at a time, in time that grows
# with the table's siblings (`<table>` and `x<br>` × 80,000: 4.4 s).
#
# So the author's HTML is read once before nh3, with HTML's own tokenizer rules (comments,
# quoted attribute values, raw text), and the depth is counted conservatively: every start tag
# opens an element (void elements outside SVG and MathML excepted), and an element is closed
# only where the parser certainly closes it too: by its own end tag when it is the innermost
# open one, and by the few implied ends that tidy-but-sloppy HTML relies on (`<p>` before a
# block, `<li>` after `<li>`, a table's cells and rows; and `</ul>` over an open `<li>`, but
# only while the count still holds exactly the parser's open elements, since an end tag for an
# element the parser has already closed would close the ones above it in the count alone).
# Anything else (misnested formatting, end tags the parser ignores, formatting elements it
# will re-open) is counted as still open, so the count is never below the depth the parser
# builds; it is only above it for HTML far from what an author writes. A start tag past
# MAX_DEPTH is left out with its end tag, the text kept (a space stands for it after a `<`, so
# no new tag is spliced together). Over-counting is safe: the bound only has to be at least
# the real depth, and a note never comes near 100 levels (Markdown nests at most
# limits.MAX_NESTING containers), so what over-counting costs is, at worst, tags left out of
# HTML that was nested absurdly anyway.
#
# The formatting elements the parser may re-open at a time are among those still counted as
# open. Each time an element around them may have closed, they are counted again as
# re-opened; past MAX_REOPENED they get end tags where the next block starts.
#
# Text and tags that may land outside a table's cells are counted the same way (a cell counts
# as left by any table tag that could end it) over the whole body; past MAX_FOSTERED the table
# is closed before the next one, which loses no text.
#
# Where the tokenizer's reading depends on what the parser has open (<![CDATA[, <noscript>,
# <template>, raw-text tags while an <svg> or <math> may be open), the rest is counted without
# closing anything: every `<` and letter is a start tag that stays open.

# Open elements one start tag may sit in. Markdown nests at most limits.MAX_NESTING containers.
MAX_DEPTH = 100
# Formatting elements the parser may re-open, in the whole body.
MAX_REOPENED = 5_000
# Text and tags written outside a table's cells, in the whole body.
MAX_FOSTERED = 500


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_VOID = _names(
    "area base basefont bgsound br col embed frame hr image img input keygen link meta param "
    "source track wbr"
)
_FORMATTING = _names("a b big code em font i nobr s small strike strong tt u")
# Elements that stop an end tag's search for a formatting element (besides SVG and MathML).
_SCOPE = _names("applet caption html table td th marquee object template")
_RAW_TEXT = _names("script style xmp iframe noembed noframes textarea title")
_FOREIGN = _names("svg math")
# Tags whose content the tokenizer reads in a way this reading does not follow for certain.
_UNCERTAIN = _names("noscript template")
# Start tags that close an open <p> (the spec's "close a p element", <table> left out: quirks).
_CLOSES_P = _names(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption "
    "figure footer header hgroup main menu nav ol p search section summary ul h1 h2 h3 h4 h5 "
    "h6 pre listing form hr xmp plaintext li dd dt"
)
_HEADINGS = _names("h1 h2 h3 h4 h5 h6")
# Start tags and the open elements they end when one of them is innermost, in order.
_ENDS_BEFORE = {
    "li": ("li",),
    "dd": ("dd dt",),
    "dt": ("dd dt",),
    "td": ("td th",),
    "th": ("td th",),
    "tr": ("td th", "tr"),
    "tbody": ("td th", "tr", "tbody thead tfoot"),
    "thead": ("td th", "tr", "tbody thead tfoot"),
    "tfoot": ("td th", "tr", "tbody thead tfoot"),
    "option": ("option",),
    "optgroup": ("option", "optgroup"),
}
_ENDS_BEFORE = {name: tuple(_names(inner) for inner in ends) for name, ends in _ENDS_BEFORE.items()}
# Elements an end tag of an enclosing block closes on the way (the spec's implied end tags).
_IMPLIED = _names("li p dd dt option optgroup rb rp rt rtc")
_BLOCK_ENDS = (_CLOSES_P - _HEADINGS - {"hr", "xmp"}) | _names("li dd dt")
_TABLE = _names("table caption colgroup col tbody thead tfoot tr td th")
# A table counts three deep: the parser adds a <tbody> and a <tr> around cells written without.
_TABLE_IMPLIED = _IMPLIED | (_TABLE - {"table"}) | {""}
_CELLS = _names("td th caption")
# Start tags after which the count may hold elements the parser does not (see _Nesting.exact).
_INEXACT = _names("svg math select frameset body html head form frame rb rp rt rtc")
# Elements where the parser's search for an open <p> or list item stops (its scopes).
_BUTTON_SCOPE = _SCOPE | {"button", "svg", "math"}
_SPECIAL = _names(
    "address applet area article aside base basefont bgsound blockquote body br button caption "
    "center col colgroup dd details dir div dl dt embed fieldset figcaption figure footer form "
    "frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html iframe img input keygen li "
    "link listing main marquee menu meta nav noembed noframes noscript object ol p param "
    "plaintext pre script search section select source style summary table tbody td template "
    "textarea tfoot th thead title tr track ul wbr xmp svg math"
)
_ITEM_STOP = _SPECIAL - {"address", "div", "p"}
# Start tags that end an open element of the same kind below the innermost, as far as the
# parser looks for one; None: anywhere.
_ENDS_OPEN = {
    "li": ({"li"}, _ITEM_STOP - {"li"}),
    "dd": ({"dd", "dt"}, _ITEM_STOP - {"dd", "dt"}),
    "dt": ({"dd", "dt"}, _ITEM_STOP - {"dd", "dt"}),
    "a": ({"a"}, None),
    "nobr": ({"nobr"}, None),
    "button": ({"button"}, None),
    "option": ({"option"}, None),
    "optgroup": ({"option", "optgroup"}, None),
}
# Elements the parser adds or copies without a start tag: an end tag may close one of them.
_ADDED = _FORMATTING | _names("tbody tr")

_SPACE = "\t\n\f\r "
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# HTML's tokenizer, as far as where tags start and end: a comment (`<!-->` is a whole one), a
# doctype or bogus comment (up to the first `>`), `</>`, and a tag whose attribute values may
# be quoted (`<div title="></div>">` is one start tag).
_TOKEN = re.compile(
    r"""
    <!--(?:-?>|.*?--!?>|.*)
  | (<!\[CDATA\[)
  | <[!?][^>]*>?
  | </(?:>|[^A-Za-z>][^>]*>?)
  | <(/?)([A-Za-z][^\t\n\f\r />]*)
    (?>[\t\n\f\r /]+
      |[^\t\n\f\r />][^\t\n\f\r />=]*
       (?>[\t\n\f\r ]*=[\t\n\f\r ]*(?>"[^"]*"?|'[^']*'?|[^\t\n\f\r >]*))?
    )*
    (>?)
    """,
    re.S | re.X,
)
# The only reading left once the tokenizer's is uncertain: every `<` and letter opens a tag.
_ANY_START = re.compile(r"<([A-Za-z][^\t\n\f\r />]*)[^>]*>?")


@functools.cache
def _raw_text_end(name: str) -> re.Pattern:
    return re.compile(rf"</{re.escape(name)}[\t\n\f\r />]", re.I)


@dataclass
class NestingLimit:
    """What limit_nesting changed: tags it left out, end tags it added, tables it closed."""

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
                "blocks were closed where the next block starts"
            )
        if self.tables_closed:
            parts.append(
                f"{self.tables_closed:,} tables were closed where more than {MAX_FOSTERED:,} "
                "pieces of text or tags in tables outside their cells had been written"
            )
        return "; ".join(parts)


class _Nesting:
    """A conservative count of the elements open at each tag (see above), and the changes
    that keep it within MAX_DEPTH and MAX_FOSTERED."""

    def __init__(self, html: str):
        self.html = html
        self.stack: list[str] = []
        self.foreign = 0  # <svg> and <math> in `stack`
        self.formatting = 0  # formatting elements in `stack` the parser may re-open
        self.dropped_open: dict[str, int] = {}
        # Tables, cells and SVG or MathML open around the current tag: "table", "cell", "foreign".
        self.tables: list[str] = []
        self.fostered = 0
        self.reopened = 0
        self.may_reopen = False  # an element around the formatting elements may have closed
        self.certain = True  # False once the tokenizer's reading is uncertain
        # True while the count holds exactly the parser's open elements (with two for a
        # table's implied <tbody> and <tr>): an end tag may then close the elements its
        # own end implies. Once the parser may have closed something the count keeps (or
        # ignored a start tag it counts), only an end tag for the innermost element closes.
        self.exact = True
        self.edits: list[tuple[int, int, str]] = []
        self.limit = NestingLimit()

    def run(self) -> str:
        html, position, size = self.html, 0, len(self.html)
        while position < size:
            match = _TOKEN.search(html, position)
            if match is None:
                self.text(position, size)
                break
            self.text(position, match.start())
            position = match.end()
            if match.group(1):  # <![CDATA[
                if self.foreign:
                    self.uncertain(match.start())
                    break
                position = html.find(">", match.end()) + 1 or size
                continue
            name = match.group(3)
            if name is None or not match.group(4):
                continue  # a comment, or a tag the end of the input cuts off
            name = name.translate(_ASCII_LOWER)
            if match.group(2):
                self.end_tag(name, match.start(), match.end())
                continue
            if name in _UNCERTAIN or (self.foreign and name in _RAW_TEXT | {"plaintext"}):
                self.uncertain(match.start())
                break
            if not self.start_tag(name, match.start(), match.end()):
                continue  # left out: what follows is read as markup, as the parser will
            if name in _RAW_TEXT:
                end = _raw_text_end(name).search(html, position)
                position = end.start() if end else size
            elif name == "plaintext":
                break  # the rest is text
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

    def uncertain(self, start: int) -> None:
        """From `start` on, every `<` and letter opens an element that stays open, and no cell
        is known to be open."""
        self.certain = False
        self.exact = False
        self.tables = [context for context in self.tables if context == "table"]
        for match in _ANY_START.finditer(self.html, start):
            self.text(start, match.start())
            start = match.end()
            name = match.group(1).translate(_ASCII_LOWER)
            self.foster(match.start(), name)
            self.push(name, match.start(), match.end())

    def text(self, start: int, end: int) -> None:
        if end > start:
            self.reopen(start)
            if self.tables and self.html[start:end].strip(_SPACE):
                self.foster(start, "")

    def reopen(self, at: int) -> None:
        """Text or a start tag at `at`, where the parser re-opens the formatting elements that
        an element around them took with it when it closed."""
        if not self.may_reopen or not self.formatting:
            return
        self.may_reopen = False
        stack = self.stack
        formatting = [index for index, name in enumerate(stack) if name in _FORMATTING]
        self.reopened += len(formatting)
        if self.reopened <= MAX_REOPENED or not formatting:
            return
        # An end tag takes each out of the parser's list of elements to re-open, unless a
        # scope boundary stands between: those stay counted as re-openable.
        self.change(at, at, "".join(f"</{stack[index]}>" for index in reversed(formatting)))
        self.limit.closed += len(formatting)
        self.exact = False
        if self.foreign:
            return
        for index in reversed(formatting):
            if any(name in _SCOPE for name in stack[index + 1 :]):
                break
            stack[index] += "/"  # still open as far as depth goes, never re-opened
            self.formatting -= 1

    def foster(self, at: int, name: str) -> None:
        """Text or a tag at `at` that the parser may move in front of the table it is in."""
        if name in _TABLE or not self.tables:
            return
        for context in reversed(self.tables):
            if context == "cell":
                return
            if context == "table":
                break
        else:
            return
        self.fostered += 1
        if self.fostered > MAX_FOSTERED:
            self.change(at, at, "</table>")
            self.limit.tables_closed += 1
            if self.certain:  # otherwise it may be ignored: every later piece gets one
                self.end_tag("table", at, at)

    def push(self, name: str, start: int, end: int) -> bool:
        """Open `name`, or leave its tag out past MAX_DEPTH (False)."""
        if len(self.stack) >= MAX_DEPTH:
            self.dropped_open[name] = self.dropped_open.get(name, 0) + 1
            self.leave_out(start, end)
            self.limit.dropped += 1
            return False
        self.stack.append(name)
        if name in _FORMATTING:
            self.formatting += 1
        elif name == "table":
            self.stack += ("", "")
        if name in _FOREIGN:
            self.foreign += 1
            self.tables.append("foreign")
        elif name == "table":
            self.tables.append("table")
        return True

    def pop(self, index: int) -> None:
        for name in self.stack[index:]:
            if name in _FOREIGN:
                self.foreign -= 1
            elif name in _FORMATTING:
                self.formatting -= 1
        del self.stack[index:]

    def leave_out(self, start: int, end: int) -> None:
        # A `<` just before would start a tag with the text after: a space keeps it text.
        self.change(start, end, " " if start and self.html[start - 1] == "<" else "")

    def start_tag(self, name: str, start: int, end: int) -> bool:
        """The start tag `name`; False if it was left out."""
        self.reopen(start)
        self.foster(start, name)
        if name in _TABLE and self.tables:
            self.table_tag(name)
        stack = self.stack
        if name in _CLOSES_P or name in _TABLE or name in _HEADINGS:
            self.may_reopen = True  # may close a <p> (or cell) around formatting elements
        if self.foreign:
            return self.push(name, start, end)
        if name in _TABLE and name != "table" and "table" not in stack:
            return True  # the parser ignores a table's part outside a table
        if name in _CLOSES_P and stack and stack[-1] == "p":
            stack.pop()
        if name in _HEADINGS and stack and stack[-1] in _HEADINGS:
            stack.pop()
        for ends in _ENDS_BEFORE.get(name, ()):
            if stack and stack[-1] in ends:
                stack.pop()
        if self.exact and self.may_close_more(name):
            self.exact = False
        if name in _VOID:
            return True
        return self.push(name, start, end)

    def may_close_more(self, name: str) -> bool:
        """Whether the start tag `name` may close (or be ignored for) an element the count
        keeps, once the innermost elements it ends have been closed."""
        stack = self.stack
        top = stack[-1] if stack else ""
        if name in _INEXACT:
            return True
        if name in _CLOSES_P and "p" in stack and _reaches(stack, {"p"}, _BUTTON_SCOPE):
            return True
        if name in _ENDS_OPEN:
            kind, stop = _ENDS_OPEN[name]
            if not kind.isdisjoint(stack) and _reaches(stack, kind, stop):
                return True
        if name == "table":
            return "table" in stack and top not in _CELLS
        return name in _TABLE and top not in _TABLE and top != ""

    def table_tag(self, name: str) -> None:
        """A table's part may end the cell it is in (a cell's own start tag opens another)."""
        tables = self.tables
        if name in _CELLS:
            if tables[-1] == "table":
                tables.append("cell")
        elif name != "table":
            bottom = len(tables)
            while bottom and tables[bottom - 1] != "table":
                bottom -= 1
            tables[bottom:] = [context for context in tables[bottom:] if context == "foreign"]

    def end_tag(self, name: str, start: int, end: int) -> None:
        if start < end:
            self.foster(start, name)  # `</p>` and `</br>` insert elements
        if name in _TABLE and self.tables:
            if name == "table":
                if "table" in self.tables:
                    del self.tables[len(self.tables) - self.tables[::-1].index("table") - 1 :]
            else:
                self.table_tag(name)
        elif name in _FOREIGN and "foreign" in self.tables:
            del self.tables[len(self.tables) - self.tables[::-1].index("foreign") - 1 :]
        stack = self.stack
        if stack and stack[-1] == name:
            self.pop(len(stack) - 1)
            return
        self.may_reopen = True  # an end tag not for the innermost element may close several
        if self.exact and not self.foreign and (name in _BLOCK_ENDS or name in _TABLE):
            implied = _TABLE_IMPLIED if name in _TABLE else _IMPLIED
            for index in range(len(stack) - 1, -1, -1):
                if stack[index] == name:
                    self.pop(index)
                    return
                if stack[index] not in implied:
                    break
        if name in stack or name in _ADDED or self.foreign:
            self.exact = False  # the parser may close elements the count keeps
        if self.dropped_open.get(name):
            self.dropped_open[name] -= 1
            self.leave_out(start, end)


def _reaches(stack: list[str], names: set[str], stop: frozenset[str] | None) -> bool:
    """Whether an element in `names` is open before one in `stop`, from the innermost."""
    for name in reversed(stack):
        if name in names:
            return True
        if stop is not None and name in stop:
            return False
    return False


def limit_nesting(html: str) -> tuple[str, NestingLimit | None]:
    """`html` with its nesting bounded (see above), and what changed (None: nothing)."""
    if html.count("<") <= MAX_DEPTH:
        return html, None  # too few tags to nest deeply or to fill a table's outside
    nesting = _Nesting(html)
    limited = nesting.run()
    return limited, (nesting.limit if limited is not html else None)
