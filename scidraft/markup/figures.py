"""Numbered figures and tables, in Pandoc's syntax (which Quarto and MyST's Markdown share):

    ![A caption, with *emphasis* and $x^2$](plot.png){#fig:growth}

    Table: A caption {#tbl:results}

    | a | b |
    |---|---|

A paragraph that is only an image followed by `{#fig:…}` is a figure: the image, then its alt
text as the caption ("Figure 1: …"). A paragraph `Table: caption {#tbl:…}` (or `: caption
{#tbl:…}`) right before or after a table is that table's caption, shown above it as papers
do. Figures and tables are numbered apart, in order of appearance, and their labels are the
note's like an environment's. An image or a table without such a label is left as Markdown
made it.

A markdown-it core rule, after Goldmark's block attributes (a table's skin is on it already).
The `<figure>`, its number and the caption's edges are placeholders, filled after the
sanitiser as the engine's own markup; the image and the caption's words are the author's and
pass the sanitiser like any other Markdown.
"""

from __future__ import annotations

import html
import re

from markdown_it.token import Token

from . import limits
from .rendered import RenderWarning
from .stash import Stash

# A label as environments accept it (environments._LABEL), with its kind's prefix.
_LABEL = r"[\w:.-]+"
_FIGURE_LABEL = re.compile(rf"[ \t]*\{{#(fig:{_LABEL})\}}[ \t]*")
# Pandoc's table caption: `Table:`, `table:` or a bare `:`, then the caption, then the label.
# Found as a prefix and the last label, never one pattern with the caption between: that
# backtracks over every run of spaces in it (a 2 MB caption would take half an hour).
_CAPTION_PREFIX = re.compile(r"(?:[Tt]able)?:[ \t]+")
_TABLE_LABEL = re.compile(rf"\{{#(tbl:{_LABEL})\}}[ \t]*")
_TEXT = frozenset({"text", "text_special"})

KINDS = {"figure": "Figure", "table": "Table"}


def anchor_of(label: str) -> str:
    """The element id of a label, as environments make it (`fig:growth` → `fig-growth`)."""
    return re.sub(r"[^\w-]+", "-", label).strip("-")


def _caption_children(children: list[Token]) -> list[Token]:
    """The caption's inline tokens: raw HTML left out (an unclosed tag would run past the
    caption), an image inside the caption as its alt text."""
    kept = []
    for child in children:
        if child.type in {"html_inline", "html_block"}:
            continue
        if child.type == "image":
            kept.extend(_caption_children(child.children or []))
            continue
        kept.append(child)
    return kept


def _placeholder_block(
    markup: str, stash: Stash, level: int, kind: str, data: dict | None = None
) -> Token:
    token = Token("placeholder_block", "", 0)
    token.content = stash.add(markup, block=True, kind=kind, data=data)
    token.level, token.block = level, True
    return token


def _inline_placeholder(markup: str, stash: Stash, text: str = "") -> Token:
    token = Token("html_inline", "", 0)
    token.content = stash.add(markup, text=text, kind="figure-part")
    return token


def _hidden_paragraph(level: int, children: list[Token]) -> list[Token]:
    """A paragraph that renders only its inline content (the sanitiser sees no <p>)."""
    opening, closing = Token("paragraph_open", "p", 1), Token("paragraph_close", "p", -1)
    inline = Token("inline", "", 0)
    inline.children, inline.level = children, level + 1
    for token in (opening, closing):
        token.level, token.block, token.hidden = level, True, True
    return [opening, inline, closing]


def _numbered(kind: str, counters: dict[str, int], label: str, line: int) -> dict:
    counters[kind] = counters.get(kind, 0) + 1
    number = str(counters[kind])
    return {
        "kind": kind,
        "number": number,
        "text": f"{KINDS[kind]} {number}",
        "anchor": anchor_of(label),
        "label": label,
        "line": line,
    }


def _caption_open(target: dict, stash: Stash, captioned: bool) -> Token:
    """`<figcaption>` and the number ("Figure 1:" before a caption, "Figure 1" alone)."""
    css = "figure-number" if target["kind"] == "figure" else "table-number"
    words = target["text"] + (":" if captioned else "")
    markup = f'<figcaption><span class="{css}">{html.escape(words)}</span>'
    return _inline_placeholder(markup + (" " if captioned else ""), stash, words + " ")


def opening_html(target: dict) -> str:
    """A figure's or table's opening tags; without an id for a label defined twice."""
    css = "figure" if target["kind"] == "figure" else "table-figure"
    anchor = f' id="{html.escape(target["anchor"])}"' if target["anchor"] else ""
    return f'<figure{anchor} class="{css}">'


def _figure(paragraph: list[Token], state, counters: dict[str, int]) -> list[Token] | None:
    """The tokens of a figure for a paragraph that is only `![caption](src){#fig:label}`."""
    opening, inline, _ = paragraph
    children = inline.children or []
    if len(children) < 2 or children[0].type != "image":
        return None
    if any(child.type not in _TEXT for child in children[1:]):
        return None
    found = _FIGURE_LABEL.fullmatch("".join(child.content for child in children[1:]))
    if found is None:
        return None
    stash: Stash = state.env["stash"]
    line = opening.map[0] + 1 if opening.map else 0
    target = _numbered("figure", counters, found.group(1), line)
    caption = _caption_children(children[0].children or [])
    start = _placeholder_block(opening_html(target), stash, opening.level, "figure", target)
    start.map = opening.map
    body = [
        children[0],
        _caption_open(target, stash, bool(caption)),
        *caption,
        _inline_placeholder("</figcaption></figure>\n", stash),
    ]
    return [start, *_hidden_paragraph(opening.level, body)]


def _table_caption(tokens: list[Token], level: int) -> tuple[str, str] | None:
    """The caption and label a paragraph of `tokens` (three, or fewer at an edge) gives a
    table."""
    if len(tokens) != 3 or tokens[0].type != "paragraph_open" or tokens[0].level != level:
        return None
    content = tokens[1].content
    prefix = _CAPTION_PREFIX.match(content)
    at = content.rfind("{#tbl:")
    if prefix is None or at < prefix.end():
        return None
    label = _TABLE_LABEL.fullmatch(content, at)
    if label is None:
        return None
    return content[prefix.end() : at].rstrip(" \t"), label.group(1)


def _table(
    table: list[Token], caption: tuple[str, str], line: int, state, counters: dict[str, int]
) -> list[Token]:
    stash: Stash = state.env["stash"]
    level = table[0].level
    words, label = caption
    target = _numbered("table", counters, label, line)
    children: list[Token] = []
    if words:
        state.env["line_end"] = ""
        state.md.inline.parse(words, state.md, state.env, children)
    start = _placeholder_block(opening_html(target), stash, level, "table", target)
    start.map = table[0].map
    caption_tokens = [
        _caption_open(target, stash, bool(words)),
        *_caption_children(children),
        _inline_placeholder("</figcaption>", stash),
    ]
    closing = _placeholder_block("</figure>", stash, level, "figure-part")
    return [start, *_hidden_paragraph(level, caption_tokens), *table, closing]


def _table_end(tokens: list[Token], start: int) -> int:
    level = tokens[start].level
    end = start + 1
    while end < len(tokens) - 1 and not (
        tokens[end].type == "table_close" and tokens[end].level == level
    ):
        end += 1
    return end


def number_figures(state) -> None:
    """Core rule: labelled images become figures, captioned tables numbered tables."""
    if "{#" not in state.src:
        return
    tokens: list[Token] = state.tokens
    counters = state.env.setdefault("figure_counters", {})
    out: list[Token] = []
    index = 0
    while index < len(tokens):
        if index % 512 == 0:
            limits.check()
        token = tokens[index]
        if token.type == "paragraph_open" and index + 2 < len(tokens):
            figure = _figure(tokens[index : index + 3], state, counters)
            if figure is not None:
                out.extend(figure)
                index += 3
                continue
        if token.type == "table_open":
            end = _table_end(tokens, index)
            table = tokens[index : end + 1]
            before = _table_caption(out[-3:], token.level)
            after = None if before else _table_caption(tokens[end + 1 : end + 4], token.level)
            if before or after:
                caption_tokens = out[-3:] if before else tokens[end + 1 : end + 4]
                line = caption_tokens[0].map[0] + 1 if caption_tokens[0].map else 0
                if before:
                    del out[-3:]
                out.extend(_table(table, before or after, line, state, counters))
                index = end + 1 + (3 if after else 0)
                continue
        out.append(token)
        index += 1
    state.tokens = out


def add_labels(
    stash: Stash,
    labels: dict[str, dict],
    warnings: list[RenderWarning],
    source_line=lambda line: line,
) -> None:
    """Put the note's figure and table labels among its `labels`; a label already taken (by
    an environment, an equation or another figure) warns, and its figure loses the id."""
    for item in stash.items:
        if item.kind not in KINDS or not item.data:
            continue
        target, label = item.data, item.data["label"]
        if label in labels:
            warnings.append(
                RenderWarning(
                    source_line(target["line"]) if target["line"] else 0,
                    "duplicate-label",
                    f"the label {label} is defined twice",
                )
            )
            item.html = opening_html({**target, "anchor": ""})
            continue
        labels[label] = {key: target[key] for key in ("kind", "number", "text", "anchor")}
