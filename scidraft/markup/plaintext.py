"""The plain text of a render (search, `index.json`, excerpts' fallbacks, word counts), read
from the structure of the sanitised HTML: its text nodes, with block elements separating
words and inline ones joining them (`H<sub>2</sub>O` is one word). Placeholders are text to
the HTML parser; each is replaced by its stand-in only after the HTML is read, so a `<` in a
formula or in code is a character, never the start of a tag that swallows what follows."""

from __future__ import annotations

import re

from lxml import etree
from lxml import html as lxml_html

from .stash import TOKEN, Stash

BLOCK_ELEMENTS = frozenset(
    {
        "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "dl", "dt", "dd",
        "tr", "td", "th", "table", "thead", "tbody", "tfoot", "caption", "blockquote", "pre",
        "figure", "figcaption", "br", "hr", "section", "aside", "details", "summary",
    }
)  # fmt: skip
# Placeholders whose text is only known once filled: what readers see is their HTML's text.
LABELLED = frozenset({"cite", "ref", "environment-open"})
# A labelled placeholder's HTML may hold placeholders of its own; deeper than this, its text.
_DEPTH = 8
# The sanitised body is bounded (NOTE_BODY_MAX_BYTES and its expansion); libxml2 refuses a
# text node over 10 MB without huge_tree, which would lose the text of such a body.
_PARSER = lxml_html.HTMLParser(huge_tree=True)
_MARKUP = re.compile(r"[<&]")


def html_text(markup: str) -> str:
    """The text of an HTML fragment: entities decoded, a space for each block element's start
    and end, comments and processing instructions left out."""
    if not _MARKUP.search(markup):
        return markup
    root = lxml_html.fragment_fromstring(markup, create_parent="div", parser=_PARSER)
    parts: list[str] = []
    for event, element in etree.iterwalk(root, events=("start", "end")):
        is_element = isinstance(element.tag, str)
        block = is_element and element is not root and element.tag in BLOCK_ELEMENTS
        if event == "start":
            if block:
                parts.append(" ")
            if is_element and element.text:
                parts.append(element.text)
        else:
            if block:
                parts.append(" ")
            if element.tail and element is not root:
                parts.append(element.tail)
    return "".join(parts)


def plain_text(markup: str, stash: Stash) -> str:
    """Text for search and word counts, from the sanitised HTML once `fill` has resolved its
    placeholders. Each placeholder reads as readers see it: references and citations as their
    labels (`Lemma 2`, `[3]`), an environment with its heading, a formula as its TeX between
    `\\(…\\)` or `\\[…\\]`, code and diagrams as written."""

    def token(match: re.Match, depth: int = 0) -> str:
        item = stash.item(int(match.group(1)))
        text = stand_in(item, depth)
        return f" {text} " if item.block else text

    def stand_in(item, depth: int) -> str:
        if item.kind == "math":
            if (item.html or "").startswith('<span class="math-display"'):
                return f"\\[{item.text}\\]"
            return f"\\({item.text}\\)"
        if item.kind in LABELLED and item.html and depth < _DEPTH:
            return TOKEN.sub(lambda match: token(match, depth + 1), html_text(item.html))
        return item.text

    text = TOKEN.sub(token, html_text(markup))
    # str.split() splits at the characters \s matches: one space between words, none around.
    return " ".join(text.split())
