"""The Markdown stage before engine 4 (Python-Markdown with pymdown-extensions), frozen.

scidraft/markup/convert.py as it was at commit e85e0f1, kept so that benchmarks/markdown_stage.py
can time the old stage beside the new one in one run. A copy, because `git show` needs the
history (a shallow CI clone or a Docker image has none) and would name the new code once this
is merged. It needs the dev dependencies Markdown and pymdown-extensions; nothing outside
benchmarks/ imports it.

Its own description, then: Python-Markdown with the theme's Goldmark features. GFM tables
(with `{.table-academic}` / `{.table-striped}` on the line after the table), footnotes,
definition lists, heading ids and a TOC, attribute lists, strikethrough and bare URLs.
Python-Markdown instances are not thread-safe: one per thread, reset per render.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections.abc import Iterator
from typing import NamedTuple

import markdown
from markdown import treeprocessors, util
from markdown.extensions import Extension
from markdown.extensions.tables import TableProcessor
from markdown.extensions.toc import slugify_unicode
from markdown.htmlparser import HTMLExtractor
from markdown.preprocessors import HtmlBlockPreprocessor

from scidraft.markup import limits
from scidraft.markup.rendered import RenderWarning
from scidraft.markup.stash import Stash

_TABLE_ATTRIBUTES = re.compile(r"^[ \t]*\{:?[ \t]*((?:\.[\w-]+[ \t]*)+)\}[ \t]*$")


class AttributedTableProcessor(TableProcessor):
    """GFM tables that accept a class line (`{.table-academic}`) directly underneath."""

    def _strip_attributes(self, block: str) -> tuple[str, list[str]]:
        rows = block.split("\n")
        if len(rows) > 2 and (match := _TABLE_ATTRIBUTES.match(rows[-1])):
            return "\n".join(rows[:-1]), re.findall(r"\.([\w-]+)", match.group(1))
        return block, []

    def test(self, parent, block):
        # A table's header row holds a pipe (the library needs one to find two cells or a
        # border): every other block, nearly all of them, is turned away before it is split.
        if "|" not in block.partition("\n")[0]:
            return False
        return super().test(parent, self._strip_attributes(block)[0])

    def _build_row(self, *args, **kwargs):
        # The library builds every row of a table without returning to a checked loop: a body
        # of 200,000 rows ran a second past the budget.
        limits.check()
        return super()._build_row(*args, **kwargs)

    def run(self, parent, blocks):
        block, classes = self._strip_attributes(blocks[0])
        blocks[0] = block
        result = super().run(parent, blocks)
        if classes:
            tables = parent.findall("table")
            if tables:
                tables[-1].set("class", " ".join(classes))
        return result


class AttributedTableExtension(Extension):
    def extendMarkdown(self, md):  # noqa: N802 - Python-Markdown's API
        md.parser.blockprocessors.register(
            AttributedTableProcessor(md.parser, {"use_align_attribute": False}), "table", 75
        )


class _CheckedExtractor(HTMLExtractor):
    # html.parser calls these once per piece of text or tag: the budget is checked there.
    def handle_data(self, data):
        limits.check()
        super().handle_data(data)

    def handle_starttag(self, tag, attrs):
        limits.check()
        super().handle_starttag(tag, attrs)


class CheckedHtmlBlockPreprocessor(HtmlBlockPreprocessor):
    """Python-Markdown's raw-HTML pass, which runs html.parser over the whole body (minutes on
    a body of `<` characters), interruptible by the render's budget."""

    def run(self, lines: list[str]) -> list[str]:
        parser = _CheckedExtractor(self.md)
        parser.feed("\n".join(lines))
        parser.close()
        return "".join(parser.cleandoc).split("\n")


_local = threading.local()


def _slugify(value: str, separator: str) -> str:
    # Headings may hold placeholders (math, code): ids are made from their plain text.
    stash: Stash | None = getattr(_local, "stash", None)
    if stash is not None:
        value = stash.plain(value)
    return slugify_unicode(value, separator) or "section"


def _checked(function):
    """`function` that first checks the render's time budget: Python-Markdown calls every block
    processor's test and every inline pattern's regex getter and match handler in its loops,
    so a hostile body stops there instead of running for minutes."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        limits.check()
        return function(*args, **kwargs)

    return wrapper


# Python-Markdown runs every inline pattern's regex over every piece of text, and many of those
# regexes start with a lookbehind or an alternation, which the regex engine tries at every
# position: over a third of the Markdown stage on the longest example note. Every match of
# each pattern below contains one of its substrings, so where none occurs the regex cannot
# match and str.find answers instead. The substrings were read off each regex by hand: they
# are keyed by a fingerprint of the regex (regex_fingerprint), so a library upgrade that
# changes a regex loses the shortcut for that pattern and never its matches
# (tests/markup/test_fast_paths.py says when that happens).
# fingerprint: (substrings, whether to look for them in the lower-cased text)
_NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "c3de0b91ec790f29": (("`",), False),  # backtick: (?<!\\)((?:\\{2})+)(?=`+)|(?<!\\)`
    "3d7a232ca22058d3": (("\\",), False),  # escape: \\(.)
    "ac7e6dde9eeeff10": (("[^",), False),  # footnote: \[\^([^\]]*)\]
    "2398df75a1bd3dde": (("[",), False),  # reference, link, short_reference: (?<!\!)\[
    "29ec216ff2ccb814": (("![",), False),  # image_link, image_reference, short_image_ref: \!\[
    "593fa59dc27961ec": (("<",), False),  # autolink: (?i)<((?:ht|f)tps?://[^<>]*)>
    "6e98577909e0813a": (("<",), False),  # automail: <([^<> !]+@[^@<> ]+)>
    "797be2177d5f52f4": (("  \n",), False),  # linebreak: two spaces and a line break
    "50cef294db8f214e": (("<",), False),  # html: (<(\/?+[a-zA-Z]…|!--…|[?]…|!\[CDATA\[…)>)
    "d5b233049c352366": (("://", "www."), True),  # magic-link: (?:ht|f)tps?://|(?P<www>w{3}\.)
    "d108651168adbc3a": (("@",), False),  # magic-mail: local part @ domain
    "017bd5f13525a35d": (("&",), False),  # entity: (&(?:\#[0-9]+|\#x[0-9a-fA-F]+|…);)
    "425bab1dbbd88be5": (("*", "_"), False),  # em_strong: \*|_
    "4634828ab5773523": (("~",), False),  # pymdownx.tilde's delimiter: \~
}


def regex_fingerprint(regex: re.Pattern) -> str:
    return hashlib.sha256(f"{regex.flags}\0{regex.pattern}".encode()).hexdigest()[:16]


class PrefilteredRegex:
    """An inline pattern's regex that finds nothing, without running, in text that holds none
    of the substrings every one of its matches contains. Python-Markdown calls it once per
    pattern and piece of text: it checks the render's budget there, as the getter did."""

    def __init__(self, regex: re.Pattern, needles: tuple[str, ...], lower: bool):
        self.regex, self.needles, self.lower = regex, needles, lower

    def possible(self, data: str, pos: int = 0) -> bool:
        if self.lower:
            data, pos = data[pos:].lower(), 0
        # A loop, not any(): a generator costs more than the search, ~4,000 times a render.
        for needle in self.needles:  # noqa: SIM110
            if data.find(needle, pos) != -1:
                return True
        return False

    def finditer(self, data: str, pos: int = 0) -> Iterator[re.Match]:
        # The only call Python-Markdown makes on an InlineProcessor's regex.
        limits.check()
        return self.regex.finditer(data, pos) if self.possible(data, pos) else iter(())

    def compiled(self) -> PrefilteredRegex:
        return self

    def __getattr__(self, name):
        return getattr(self.regex, name)


def _prefiltered(pattern) -> PrefilteredRegex | None:
    regex = pattern.getCompiledRegExp()
    needles = _NEEDLES.get(regex_fingerprint(regex))
    return PrefilteredRegex(regex, *needles) if needles else None


class PrefilteredInlineProcessor(treeprocessors.InlineProcessor):
    """Python-Markdown's inline stage, passing over a pattern whose regex cannot match the text
    at hand instead of trying it: of the ~4,000 tries on a long note, nine in ten are hopeless,
    and a try costs more in the library's Python than the test does.

    This is the library's private loop (`__handleInline`, Markdown 3.11) with that test added.
    A try that finds nothing leaves the text as it was and the loop goes on with the next
    pattern from the start of the text, which is what passing over does. The library's loop is
    pinned by tests/markup/test_fast_paths.py, so an upgrade that changes it is noticed."""

    def run(self, tree, ancestors=None):
        self.prefilters = [
            regex if isinstance(regex, PrefilteredRegex) else None
            for regex in (pattern.getCompiledRegExp() for pattern in self.inlinePatterns)
        ]
        return super().run(tree, ancestors)

    def _InlineProcessor__handleInline(self, data: str, patternIndex: int = 0) -> str:  # noqa: N802
        if isinstance(data, util.AtomicString):
            return data
        start = 0
        count = len(self.inlinePatterns)
        while patternIndex < count:
            regex = self.prefilters[patternIndex]
            if regex is not None and not regex.possible(data, start):
                patternIndex, start = patternIndex + 1, 0
                continue
            data, matched, start = self._InlineProcessor__applyPattern(
                self.inlinePatterns[patternIndex], data, patternIndex, start
            )
            if not matched:
                patternIndex += 1
        return data


def _new_markdown() -> markdown.Markdown:
    md = _markdown()
    md.preprocessors.register(CheckedHtmlBlockPreprocessor(md), "html_block", 20)
    for processor in md.parser.blockprocessors:
        processor.test = _checked(processor.test)
    for pattern in md.inlinePatterns:
        regex = _prefiltered(pattern)
        if regex is not None:
            pattern.getCompiledRegExp = regex.compiled
        else:
            pattern.getCompiledRegExp = _checked(pattern.getCompiledRegExp)
        pattern.handleMatch = _checked(pattern.handleMatch)
    md.treeprocessors.register(PrefilteredInlineProcessor(md), "inline", 20)
    return md


def _markdown() -> markdown.Markdown:
    return markdown.Markdown(
        extensions=[
            AttributedTableExtension(),
            "footnotes",
            "def_list",
            "attr_list",
            "sane_lists",
            "toc",
            "pymdownx.tilde",
            "pymdownx.magiclink",
        ],
        extension_configs={
            "toc": {"slugify": _slugify, "permalink": False, "toc_depth": "2-4"},
            "footnotes": {"BACKLINK_TITLE": "Back to reference %d"},
            "pymdownx.tilde": {"subscript": False},
            "pymdownx.magiclink": {"hide_protocol": False},
        },
        output_format="html",
    )


class Converted(NamedTuple):
    html: str
    toc: str
    # Markdown could not finish: `html` is limits.escaped_paragraphs, already as nh3 writes it.
    fallback: bool = False


def to_html(
    text: str, stash: Stash, warnings: list[RenderWarning] | None = None, source_line=None
) -> Converted:
    """Markdown → HTML and the TOC HTML. A body Markdown cannot finish within the render's
    budget (or that exhausts the stack) becomes escaped paragraphs and a warning. The old stage
    never marked source lines (only the editor preview asks for them): `source_line` is taken
    and left unused, so the pipeline of today can call it."""
    md = getattr(_local, "markdown", None)
    if md is None:
        md = _local.markdown = _new_markdown()
    md.reset()
    _local.stash = stash
    try:
        limits.check()
        body = md.convert(text)
        toc = md.toc if getattr(md, "toc_tokens", None) else ""
    except (limits.BudgetExceeded, RecursionError) as error:
        # The instance may hold half-built state: the next render starts a fresh one.
        _local.markdown = None
        reason = (
            "is nested too deeply"
            if isinstance(error, RecursionError)
            else "took too long to format"
        )
        if warnings is not None:
            warnings.append(
                RenderWarning(
                    1, "render-limit", f"this note {reason}: its text is shown unformatted"
                )
            )
        return Converted(limits.escaped_paragraphs(text), "", fallback=True)
    finally:
        _local.stash = None
    return Converted(body, toc)
