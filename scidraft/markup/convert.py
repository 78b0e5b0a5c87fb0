"""Stage 4, Markdown: Python-Markdown with the theme's Goldmark features.

GFM tables (with `{.table-academic}` / `{.table-striped}` on the line after the table),
footnotes, definition lists, heading ids and a TOC, attribute lists, strikethrough and bare
URLs. Python-Markdown instances are not thread-safe: one per thread, reset per render.
"""

from __future__ import annotations

import functools
import re
import threading

import markdown
from markdown.extensions import Extension
from markdown.extensions.tables import TableProcessor
from markdown.extensions.toc import slugify_unicode
from markdown.htmlparser import HTMLExtractor
from markdown.preprocessors import HtmlBlockPreprocessor

from . import limits
from .rendered import RenderWarning
from .stash import Stash

_TABLE_ATTRIBUTES = re.compile(r"^[ \t]*\{:?[ \t]*((?:\.[\w-]+[ \t]*)+)\}[ \t]*$")


class AttributedTableProcessor(TableProcessor):
    """GFM tables that accept a class line (`{.table-academic}`) directly underneath."""

    def _strip_attributes(self, block: str) -> tuple[str, list[str]]:
        rows = block.split("\n")
        if len(rows) > 2 and (match := _TABLE_ATTRIBUTES.match(rows[-1])):
            return "\n".join(rows[:-1]), re.findall(r"\.([\w-]+)", match.group(1))
        return block, []

    def test(self, parent, block):
        return super().test(parent, self._strip_attributes(block)[0])

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


def _new_markdown() -> markdown.Markdown:
    md = _markdown()
    md.preprocessors.register(CheckedHtmlBlockPreprocessor(md), "html_block", 20)
    for processor in md.parser.blockprocessors:
        processor.test = _checked(processor.test)
    for pattern in md.inlinePatterns:
        pattern.getCompiledRegExp = _checked(pattern.getCompiledRegExp)
        pattern.handleMatch = _checked(pattern.handleMatch)
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


def to_html(
    text: str, stash: Stash, warnings: list[RenderWarning] | None = None
) -> tuple[str, str]:
    """Markdown → HTML and the TOC HTML. A body Markdown cannot finish within the render's
    budget (or that exhausts the stack) becomes escaped paragraphs and a warning."""
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
        return limits.escaped_paragraphs(text), ""
    finally:
        _local.stash = None
    return body, toc
