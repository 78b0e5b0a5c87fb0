"""Stage 4, Markdown: Python-Markdown with the theme's Goldmark features.

GFM tables (with `{.table-academic}` / `{.table-striped}` on the line after the table),
footnotes, definition lists, heading ids and a TOC, attribute lists, strikethrough and bare
URLs. Python-Markdown instances are not thread-safe: one per thread, reset per render.
"""

from __future__ import annotations

import re
import threading

import markdown
from markdown.extensions import Extension
from markdown.extensions.tables import TableProcessor
from markdown.extensions.toc import slugify_unicode

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


_local = threading.local()


def _slugify(value: str, separator: str) -> str:
    # Headings may hold placeholders (math, code): ids are made from their plain text.
    stash: Stash | None = getattr(_local, "stash", None)
    if stash is not None:
        value = stash.plain(value)
    return slugify_unicode(value, separator) or "section"


def _new_markdown() -> markdown.Markdown:
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


def to_html(text: str, stash: Stash) -> tuple[str, str]:
    """Markdown → HTML and the TOC HTML."""
    md = getattr(_local, "markdown", None)
    if md is None:
        md = _local.markdown = _new_markdown()
    md.reset()
    _local.stash = stash
    try:
        body = md.convert(text)
        toc = md.toc if getattr(md, "toc_tokens", None) else ""
    finally:
        _local.stash = None
    return body, toc
