"""Faster forms of markdown-it's hottest rules, with the same results.

markdown-it tests every rule that could end a paragraph at every line of every paragraph (and
the setext-heading rule does it once more beforehand), runs a Python loop over every
character of a table and pushes two tokens per line break of wrapped prose. Those were most of
the Markdown stage. The forms here skip only work whose answer is known (a rule that cannot
start on the line's first character, a line that cannot underline a heading) and keep the
library's tokens and output: tests/markup/test_fast_paths.py renders with and without them.
They are registered on the stage's own parser through markdown-it's rulers; the library's
modules, the rules and loggers other parsers in the process use, are left as they are.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.common.utils import mdTrim
from markdown_it.rules_block import lheading
from markdown_it.rules_core import normalize
from markdown_it.rules_inline import newline

from . import table_rule
from .stash import OPEN

# The characters each rule that can end a paragraph may start on (read off each rule's first
# test). A rule not named here is asked on every line.
_TERMINATOR_STARTS = {
    "fence": "`~",
    "blockquote": ">",
    "hr": "*-_",
    "list": "*-+0123456789",
    "html_block": "<",
    "heading": "#",
    "footnote_def": "[",
    "deflist": ":~",
    "placeholder_block": OPEN,
    "attributes_block": "{",
}


class _Paragraph:
    """markdown-it's paragraph rule, asking of each further line only the rules that could
    end the paragraph there: a line of prose starts with a letter, which most of them refuse
    at once, and this loop (every rule for every line of every paragraph) was the largest
    cost of the stage. The lines, content and tokens are the library's."""

    def __init__(self):
        self.ruler = None
        self.by_char: dict[str, tuple] = {}

    def terminators(self, ruler, char: str) -> tuple:
        """The rules that could end a paragraph at a line starting with `char`."""
        if ruler is not self.ruler:
            self.ruler, self.by_char = ruler, {}
        rules = self.by_char.get(char)
        if rules is None:
            names = dict(zip(ruler.getRules(""), ruler.get_active_rules(), strict=True))
            rules = self.by_char[char] = tuple(
                rule
                for rule in ruler.getRules("paragraph")
                if names.get(rule) not in _TERMINATOR_STARTS
                or char in _TERMINATOR_STARTS[names[rule]]
            )
        return rules

    def __call__(self, state, start_line: int, end_line: int, silent: bool) -> bool:
        next_line = start_line + 1
        ruler = state.md.block.ruler
        end_line = state.lineMax
        old_parent = state.parentType
        state.parentType = "paragraph"
        src = state.src
        while next_line < end_line:
            if state.isEmpty(next_line):
                break
            # Indented as code, or a line a quote already checked: lazily continued.
            if state.sCount[next_line] - state.blkIndent > 3 or state.sCount[next_line] < 0:
                next_line += 1
                continue
            char = src[state.bMarks[next_line] + state.tShift[next_line]]
            if any(
                rule(state, next_line, end_line, True) for rule in self.terminators(ruler, char)
            ):
                break
            next_line += 1
        content = mdTrim(state.getLines(start_line, next_line, state.blkIndent, False))
        state.line = next_line
        token = state.push("paragraph_open", "p", 1)
        token.map = [start_line, state.line]
        token = state.push("inline", "", 0)
        token.content = content
        token.map = [start_line, state.line]
        token.children = []
        state.push("paragraph_close", "p", -1)
        state.parentType = old_parent
        return True


class _SetextHeading:
    """markdown-it's setext-heading rule, which scans a paragraph's lines for an underline and
    asks every rule that could end the paragraph at each line, before the paragraph rule does
    the same. This scans alike with the paragraph's shortlist of rules for each line's first
    character, and leaves to the library's rule only a paragraph that has a line that could
    underline it (a `-` or `=` first)."""

    def __init__(self, paragraph: _Paragraph):
        self.paragraph = paragraph

    def __call__(self, state, start_line: int, end_line: int, silent: bool) -> bool:
        if state.is_code_block(start_line):
            return False
        ruler = state.md.block.ruler
        src, indent = state.src, state.blkIndent
        old_parent = state.parentType
        state.parentType = "paragraph"  # what the terminators test, as in the library's rule
        try:
            line = start_line + 1
            while line < end_line and not state.isEmpty(line):
                offset = state.sCount[line] - indent
                if offset > 3:  # lazily continued whatever it holds
                    line += 1
                    continue
                char = src[state.bMarks[line] + state.tShift[line]]
                if offset >= 0 and char in "-=":
                    state.parentType = old_parent
                    return lheading(state, start_line, end_line, silent)
                if state.sCount[line] >= 0 and any(
                    rule(state, line, end_line, True)
                    for rule in self.paragraph.terminators(ruler, char)
                ):
                    return False
                line += 1
            return False
        finally:
            state.parentType = old_parent


def _line_break(state, silent: bool) -> bool:
    """A line break inside a paragraph: kept in the text, where markdown-it would push a
    softbreak token between two text tokens; both render as the same line break, and paragraphs
    of wrapped prose have one on every line. A hard break (`  ` or `\\` at the line's end)
    is the library's rule's."""
    if state.src[state.pos] != "\n":
        return False
    if silent or state.pending.endswith(" "):
        return newline(state, silent)
    state.append_pending("\n")
    pos, end, src = state.pos + 1, state.posMax, state.src
    while pos < end and src[pos] in " \t":
        pos += 1
    state.pos = pos
    return True


def _normalize(state) -> None:
    """markdown-it's normalize rule, skipped when there is nothing to change: it rewrites
    every line ending with a regex (each `\n` by itself too), 5% of the stage on a long note,
    and the editor and the importer already store LF line endings."""
    if "\r" in state.src or "\0" in state.src:
        normalize(state)


def install(md: MarkdownIt) -> None:
    """Put the faster rules in place of the library's in `md`."""
    md.core.ruler.at("normalize", _normalize)
    md.block.ruler.at("table", table_rule.table, {"alt": ["paragraph", "reference"]})
    paragraph = _Paragraph()
    md.block.ruler.at("lheading", _SetextHeading(paragraph))
    md.block.ruler.at("paragraph", paragraph)
    # First after the text rule: a line break is the commonest special character of prose.
    md.inline.ruler.disable("newline")
    md.inline.ruler.after("text", "line_break", _line_break)
