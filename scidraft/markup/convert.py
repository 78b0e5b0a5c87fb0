"""Stage 6, Markdown: CommonMark as Hugo's Goldmark renders it, on markdown-it-py.

The notes were written for Hugo, whose Goldmark is CommonMark 0.31 with, under the theme's
`[markup]` settings: GFM tables, strikethrough, linkify and task lists; footnotes; definition
lists; attributes on headings and on the line after a block (`{.table-academic}`); the
typographer with Hugo's defaults; heading ids in Hugo's `github` style. markdown-it-py gives the
CommonMark core, tables, strikethrough, footnotes and definition lists (mdit-py-plugins); the
rest is Goldmark's behaviour, ported here and in `goldmark.py`.

Everything the earlier stages stashed reaches this stage as a placeholder. A placeholder of a
block (a code fence, an environment, a reference list…) alone on its lines is a block here
too, so it ends a paragraph, a list item or a quote exactly where the fence it replaced would.

Raw HTML is parsed as CommonMark parses it and cleaned by the sanitiser afterwards. One parser
per thread; each render's state lives in its own `env`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.footnote import footnote_plugin

from . import attributes, fast_rules, figures, goldmark, limits, markdown_html
from .rendered import RenderWarning
from .sourcelines import ATTRIBUTE, SourceLine
from .stash import CLOSE, FILL, OPEN, TOKEN, Stash

# Token levels a document may open (a list and its item are two): past this markdown-it drops
# the rest of the document, so the render falls back and says why.
# deep_blocks.refuse_deep_blocks keeps real notes far below it: MAX_NESTING levels of four
# columns hold at most two lists each, and two tokens open per list.
MAX_TOKEN_NESTING = 4 * limits.MAX_NESTING + 16

_PLACEHOLDER_START = re.compile(f"{OPEN}(\\d+)[{FILL} \\t]*({CLOSE})?[ \\t]*$")
_PLACEHOLDER_MORE = re.compile(f"[{FILL} \\t]*({CLOSE})?[ \\t]*$")


# --- Block rules -----------------------------------------------------------------------------


def _budget(state, start_line: int, end_line: int, silent: bool) -> bool:
    """First of the block rules: every block starts by checking the render's time budget,
    and notes when blocks nest so deep that markdown-it would drop what is inside."""
    limits.check()
    if state.level >= MAX_TOKEN_NESTING - 2:
        state.env["too_deep"] = True
    return False


def _placeholder_block(state, start_line: int, end_line: int, silent: bool) -> bool:
    """A stashed block (code, an environment's edge, a component) alone on its lines."""
    start = state.bMarks[start_line] + state.tShift[start_line]
    src = state.src
    if start >= state.eMarks[start_line] or src[start] != OPEN:
        return False
    match = _PLACEHOLDER_START.match(src, start, state.eMarks[start_line])
    if match is None or not state.env["stash"].item(int(match.group(1))).block:
        return False
    line = start_line
    closed = match.group(2) is not None
    while not closed:
        line += 1
        if line >= end_line or state.sCount[line] < state.blkIndent:
            return False
        more = _PLACEHOLDER_MORE.match(
            src, state.bMarks[line] + state.tShift[line], state.eMarks[line]
        )
        if more is None:
            return False
        closed = more.group(1) is not None
    if not silent:
        token = state.push("placeholder_block", "", 0)
        token.content = f"{OPEN}{match.group(1)}{CLOSE}"
        token.map = [start_line, line + 1]
        state.line = line + 1
    return True


def _attributes_block(state, start_line: int, end_line: int, silent: bool) -> bool:
    """`{.class #id name=value}` on a line of its own: attributes for the block before it
    (Hugo's attributes extension, `[markup.goldmark.parser.attribute] block = true`). The
    rest of the line is ignored, as Hugo ignores it."""
    if state.is_code_block(start_line):
        return False
    start = state.bMarks[start_line] + state.tShift[start_line]
    if start >= state.eMarks[start_line] or state.src[start] != "{":
        return False
    parsed = attributes.parse(state.src[start : state.eMarks[start_line]])
    if parsed is None:
        return False
    if not silent:
        token = state.push("attributes_block", "", 0)
        token.meta = {
            "attributes": parsed[0],
            "after_blank": start_line > 0 and state.isEmpty(start_line - 1),
        }
        token.map = [start_line, start_line + 1]
        token.hidden = True
        state.line = start_line + 1
    return True


# --- Inline rules ---------------------------------------------------------------------------


def _inline_budget(state, silent: bool) -> bool:
    """Asked first at every special character (the text rule takes the rest in runs): a body
    made of them, `[[[…` or `<<<…`, is what can take time, in loops of the library's own."""
    limits.check()
    return False


# --- Core rules ------------------------------------------------------------------------------


def _inline(state) -> None:
    """markdown-it's inline core rule, telling the typographer whether the content is a
    paragraph's (whose last line ends in a line break for Goldmark) or a heading's or cell's."""
    tokens, md, env = state.tokens, state.md, state.env
    for index, token in enumerate(tokens):
        if token.type == "inline":
            limits.check()  # once a paragraph or a table cell: 2 MB of table is 500,000 cells
            if token.children is None:
                token.children = []
            paragraph = index and tokens[index - 1].type == "paragraph_open"
            env["line_end"] = "\n" if paragraph else ""
            md.inline.parse(token.content, md, env, token.children)


def _heading_attribute_split(content: str) -> tuple[str, dict] | None:
    """goldmark's parseLastLineAttributes: `{…}` ending a heading's last line, found left to
    right past escaped punctuation."""
    line_start = content.rfind("\n") + 1
    index = line_start
    while index < len(content):
        char = content[index]
        if char == "\\":
            index += 2 if content[index + 1 : index + 2] in attributes.ASCII_PUNCTUATION else 1
            continue
        if char == "{":
            parsed = attributes.parse(content, index)
            if parsed is not None and not content[parsed[1] :].strip():
                return content[:index].rstrip(), parsed[0]
        index += 1
    return None


def _heading_attributes(state) -> None:
    tokens = state.tokens
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and "{" in tokens[index + 1].content:
            split = _heading_attribute_split(tokens[index + 1].content)
            if split is not None:
                tokens[index + 1].content, found = split
                for name, value in found.items():
                    token.attrSet(name, attributes.as_html_value(value))


def _opening(tokens: list[Token], close: int) -> int:
    """Index of the token that opens the one closing at `close`."""
    level = tokens[close].level
    index = close - 1
    while index >= 0 and not (tokens[index].level == level and tokens[index].nesting == 1):
        index -= 1
    return index


def _apply_block_attributes(tokens: list[Token], index: int) -> None:
    """The block right before an attribute line takes its attributes, unless a blank line or
    nothing comes between, or it is a code fence (Hugo's attributes transformer)."""
    token = tokens[index]
    if token.meta["after_blank"] or index == 0:
        return
    previous = tokens[index - 1]
    if previous.level != token.level or previous.nesting == 1:
        return  # the first thing in its container: no block before it
    if previous.nesting == -1:
        target = tokens[_opening(tokens, index - 1)]
    elif previous.type in {"fence", "code_block", "html_block", "placeholder_block"}:
        return
    else:
        target = previous
    if target.type == "paragraph_open" and target.hidden:
        return  # a tight list's paragraph has no element to carry them
    for name, value in token.meta["attributes"].items():
        if target.attrGet(name) is None:
            target.attrSet(name, attributes.as_html_value(value))


def _after(tokens: list[Token], index: int) -> Iterator[Token]:
    """The tokens after `index`, without copying the list's tail (a slice per definition or
    task item made a body of 100,000 of them quadratic)."""
    for position in range(index + 1, len(tokens)):
        yield tokens[position]


def _blank_before(state, line: int) -> bool:
    lines = state.env.get("source_lines")
    if lines is None:
        lines = state.env["source_lines"] = state.src.split("\n")
    return line > 0 and not lines[line - 1].strip(" \t>")


def _definition_paragraphs(tokens: list[Token], index: int, state) -> None:
    """Goldmark's definitions: one after a blank line is loose (its paragraphs shown), any
    other is tight, where only a first paragraph loses its <p> (markdown-it decides for the
    whole list at once)."""
    opening = tokens[index]
    inner = opening.level + 1
    # The definition's first line (the plugin's dd map starts at the term's).
    content = next(
        (token for token in _after(tokens, index) if token.map or token.level < inner), None
    )
    loose = content is not None and content.map is not None and _blank_before(state, content.map[0])
    first = True
    for token in _after(tokens, index):
        if token.level < inner:
            break
        if token.level == inner and token.type in {"paragraph_open", "paragraph_close"}:
            token.hidden = not loose and first
            if token.type == "paragraph_close":
                first = False
        elif token.level == inner and token.nesting >= 0:
            first = False


def _heading_text(children: Sequence[Token], stash: Stash) -> str:
    """What Hugo makes a heading's id from (hugo markup/goldmark/internal/render TextPlain):
    text and code as written, images' alt text, raw HTML without its tags, line breaks as
    new lines. Math adds nothing (Hugo's passthrough nodes add none); other placeholders add
    the source they stand for (code's text, a command as written)."""
    parts = []
    for child in children:
        if child.type in {"text", "text_special", "code_inline"}:
            parts.append(child.content)
        elif child.type in {"softbreak", "hardbreak"}:
            parts.append("\n")
        elif child.type == "image":
            parts.append(_heading_text(child.children or [], stash))
    text = "".join(parts)
    if OPEN in text:

        def source(match: re.Match) -> str:
            item = stash.item(int(match.group(1)))
            if item.kind == "inline-code":
                return item.text
            return "" if item.kind == "math" else item.original

        text = TOKEN.sub(source, text)
    return text


def _task_checkbox(stash: Stash, checked: bool) -> str:
    # A disabled checkbox as Goldmark draws one, as inert text: the allowlist has no <input>.
    label, glyph = ("done", "\u2611") if checked else ("to do", "\u2610")
    css = "task-checkbox task-checkbox-done" if checked else "task-checkbox"
    return stash.add(
        f'<span class="{css}" role="img" aria-label="{label}">{glyph}</span>', kind="task"
    )


def _hugo_blocks(state) -> None:
    """After inline parsing: block attributes, heading ids, task checkboxes, the TOC."""
    tokens: list[Token] = state.tokens
    stash: Stash = state.env["stash"]
    ids = goldmark.AnchorIds()
    headings = state.env["headings"]
    attribute_lines = []
    for index, token in enumerate(tokens):
        if index % 512 == 0:
            limits.check()
        kind = token.type
        if kind == "heading_open":
            children = tokens[index + 1].children or []
            explicit = token.attrGet("id")
            if explicit is not None:
                ids.put(str(explicit))
            else:
                text = _heading_text(children, stash)
                if text:
                    # A setext heading of several lines takes its id from the last one.
                    token.attrSet("id", ids.generate(text.rsplit("\n", 1)[-1]))
            headings.append((int(token.tag[1]), token.attrGet("id"), children))
        elif kind == "attributes_block":
            attribute_lines.append(index)
        elif kind == "list_item_open" and token.meta and "checked" in token.meta:
            # Goldmark puts the box at the start of the item's text, inside its paragraph.
            token.attrs.pop("class", None)
            checked = token.meta.pop("checked")
            for inner in _after(tokens, index):
                if inner.type == "inline":
                    box = Token("html_inline", "", 0)
                    box.content = _task_checkbox(stash, checked) + " "
                    inner.children = [box, *(inner.children or [])]
                    break
        elif kind in {"bullet_list_open", "ordered_list_open"} and token.attrs:
            token.attrs.pop("class", None)  # markdown-it's task-list class; Goldmark has none
        elif kind == "dd_open":
            _definition_paragraphs(tokens, index, state)
    for index in attribute_lines:
        _apply_block_attributes(tokens, index)
    if attribute_lines:
        state.tokens = [token for token in tokens if token.type != "attributes_block"]


def _source_lines(state) -> None:
    """The editor preview's scroll sync (sourcelines.py): every top-level block carries the
    author's line it starts on. Last of the core rules, so attributes are already placed."""
    source_line: SourceLine | None = state.env.get("source_line")
    if source_line is None:
        return
    standalone = {"placeholder_block", "fence", "hr"}
    for token in state.tokens:
        starts = token.nesting == 1 or (token.nesting == 0 and token.type in standalone)
        if starts and token.level == 0 and token.block and token.map:
            token.attrSet(ATTRIBUTE, str(source_line(token.map[0] + 1)))


# --- The parser ------------------------------------------------------------------------------

_PLACEHOLDER_SPLIT = re.compile(f"({OPEN}\\d+[{FILL}\\s]*{CLOSE})")


class HugoMarkdown(MarkdownIt):
    """markdown-it whose link destinations keep the earlier stages' placeholders intact: a
    formula in a URL (`[a](https://e.example/$x$)`) is filled in after the sanitiser has
    checked the URL, as before; percent-encoding would have destroyed it."""

    def normalizeLink(self, url: str) -> str:  # noqa: N802 - markdown-it's API
        normalise = super().normalizeLink
        if OPEN not in url:
            return normalise(url)
        return "".join(
            piece if index % 2 else (normalise(piece) if piece else "")
            for index, piece in enumerate(_PLACEHOLDER_SPLIT.split(url))
        )


def new_parser(*, fast_paths: bool = True) -> MarkdownIt:
    """markdown-it configured as Hugo's Goldmark with the example site's [markup]. Without
    `fast_paths`, the library's own paragraph, setext-heading, table and line-break rules
    (tests/markup/test_fast_paths.py renders with both)."""
    md = HugoMarkdown(
        "commonmark",
        {
            "maxNesting": MAX_TOKEN_NESTING,
            "xhtmlOut": False,
            "tasklists": True,
            "strikethrough_single_tilde": True,  # goldmark accepts ~one~ and ~~two~~
        },
    )
    md.enable(["table", "strikethrough"])
    footnote_plugin(md, inline=False)  # Goldmark has no ^[inline] footnotes
    deflist_plugin(md)

    md.block.ruler.before("table", "budget", _budget)
    md.block.ruler.before(
        "code",
        "placeholder_block",
        _placeholder_block,
        {"alt": ["paragraph", "reference", "blockquote", "list"]},
    )
    md.block.ruler.before(
        "paragraph",
        "attributes_block",
        _attributes_block,
        {"alt": ["paragraph", "reference", "blockquote"]},
    )

    for char in "'\".":
        md.inline.add_terminator_char(char)
    md.inline.ruler.after("text", "typographer", goldmark.typographer)
    md.inline.ruler.after("typographer", "goldmark_linkify", goldmark.linkify)
    md.inline.ruler.push("angle_quotes", goldmark.angle_quotes)
    if fast_paths:
        fast_rules.install(md)
    # First of all at every special character, the ones the typographer and linkify take too:
    # 2 MB of `www.a.org ` is links all the way.
    md.inline.ruler.after("text", "budget", _inline_budget)

    md.core.ruler.at("inline", _inline)
    md.core.ruler.before("inline", "heading_attributes", _heading_attributes)
    md.core.ruler.push("hugo_blocks", _hugo_blocks)
    md.core.ruler.push("figures", figures.number_figures)
    md.core.ruler.push("source_lines", _source_lines)

    for name, rule in markdown_html.RENDER_RULES.items():
        md.add_render_rule(name, rule)
    return md


_local = threading.local()


def _parser() -> MarkdownIt:
    md = getattr(_local, "parser", None)
    if md is None:
        md = _local.parser = new_parser()
    return md


class Converted(NamedTuple):
    html: str
    toc: str
    # Markdown could not finish: `html` is limits.escaped_paragraphs, already as nh3 writes it.
    fallback: bool = False


def to_html(
    text: str,
    stash: Stash,
    warnings: list[RenderWarning] | None = None,
    *,
    source_line: SourceLine | None = None,
) -> Converted:
    """Markdown → HTML and the TOC HTML. A body Markdown cannot finish within the render's
    budget, or nested past what it can parse, becomes escaped paragraphs and a warning.

    With `source_line` (a line of `text` → the author's line), every top-level block element
    carries `data-source-line` (sourcelines.py)."""
    md = _parser()
    env = {"stash": stash, "headings": [], "source_line": source_line}
    try:
        limits.check()
        tokens = md.parse(text, env)
        if env.get("too_deep"):
            raise RecursionError
        body = md.renderer.render(tokens, md.options, env)
        toc = markdown_html.toc(md, env["headings"], env)
    except (limits.BudgetExceeded, RecursionError) as error:
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
    return Converted(body, toc)
