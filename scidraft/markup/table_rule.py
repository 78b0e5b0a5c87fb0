"""GFM tables: markdown-it-py's table rule (4.3.0, MIT licence, Copyright (c) 2020
ExecutableBookProject), registered on the stage's own parser in place of the library's.

A copy, because the library's rule splits rows with its module's `escapedSplit`, a Python
loop over every character of the table, looked up as a module global: another split can only
be had by replacing that global for every user of markdown-it in the process, which the stage
never does. Its own rule differs from the library's in three ways and in nothing it produces
(tests/markup/test_fast_paths.py renders with both): a block whose first line has no pipe is
turned away first (most blocks are not tables), rows are split by one regex, and each row
checks the render's time budget (a table of 2 MB is one block of 500,000 cells). markdown-it-py
is pinned in pyproject.toml; a new version's rule is compared with this one before it is taken.
"""

from __future__ import annotations

import re

from markdown_it.common.utils import isStrSpace, mdTrim
from markdown_it.rules_block.state_block import StateBlock

from . import limits

_HEADER_CELL = re.compile(r"^:?-+:?$")
_CELL_SEPARATOR = re.compile(r"(?<!\\)\|")
# The library's bound on cells added to short rows (its issue 1000: a 256×256 table of two
# lines would otherwise expand 1.8 kB into 650 kB).
MAX_AUTOCOMPLETED_CELLS = 0x10000


def table_cells(row: str) -> list[str]:
    """markdown-it's escapedSplit (a row's cells at each `|` not after a backslash, and `\\|`
    as `|` inside them) with a regex instead of its loop over every character. Called once a
    row, it checks the render's budget."""
    limits.check()
    return [cell.replace("\\|", "|") for cell in _CELL_SEPARATOR.split(row)]


def _line(state: StateBlock, line: int) -> str:
    return state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]]


# Cells read or written between two checks of the render's budget: one row may hold half a
# million of them (2 MB of `|`), seconds of tokens.
_CELLS_BETWEEN_CHECKS = 4096


def _cells(state: StateBlock, line: int) -> list[str]:
    columns = table_cells(mdTrim(_line(state, line)))
    if columns and columns[0] == "":
        columns.pop(0)
    if columns and columns[-1] == "":
        columns.pop()
    return columns


def _aligns(state: StateBlock, line: int) -> list[str] | None:
    """The delimiter row's alignments, or None when the line is not a delimiter row."""
    pos, end, src = state.bMarks[line] + state.tShift[line], state.eMarks[line], state.src
    # `^[-:|][-:|\s]*$`, and a `-` first not followed by a space (that is a list item).
    if end - pos < 2:
        return None
    first, second = src[pos], src[pos + 1]
    if first not in "|-:" or (second not in "|-:" and not isStrSpace(second)):
        return None
    if first == "-" and isStrSpace(second):
        return None
    if any(ch not in "|-:" and not isStrSpace(ch) for ch in src[pos + 2 : end]):
        return None
    columns = _line(state, line).split("|")
    aligns = []
    for index, column in enumerate(columns):
        if index % _CELLS_BETWEEN_CHECKS == _CELLS_BETWEEN_CHECKS - 1:
            limits.check()
        cell = mdTrim(column)
        if not cell:
            # Empty columns only before and after the table: ` |---| `, never ` ---||--- `.
            if index in (0, len(columns) - 1):
                continue
            return None
        if not _HEADER_CELL.search(cell):
            return None
        if cell[-1] == ":":
            aligns.append("center" if cell[0] == ":" else "right")
        elif cell[0] == ":":
            aligns.append("left")
        else:
            aligns.append("")
    return aligns


def _row(state: StateBlock, line: int, cells: list[str], aligns: list[str], tag: str) -> None:
    token = state.push("tr_open", "tr", 1)
    token.map = [line, line + 1]
    for index, align in enumerate(aligns):
        if index % _CELLS_BETWEEN_CHECKS == _CELLS_BETWEEN_CHECKS - 1:
            limits.check()
        token = state.push(f"{tag}_open", tag, 1)
        if align:
            token.attrs = {"style": "text-align:" + align}
        token = state.push("inline", "", 0)
        # The library keeps the map that markdown-it (JavaScript) dropped: the stage's source
        # lines are read from it.
        token.map = [line, line + 1]
        token.content = mdTrim(cells[index]) if index < len(cells) and cells[index] else ""
        token.children = []
        state.push(f"{tag}_close", tag, -1)
    state.push("tr_close", "tr", -1)


def table(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """The block rule: a header row, a delimiter row, then body rows up to a line that is
    empty, starts another block or is indented as code."""
    if start_line + 2 > end_line:
        return False
    start = state.bMarks[start_line] + state.tShift[start_line]
    if state.src.find("|", start, state.eMarks[start_line]) < 0:
        return False
    delimiter = start_line + 1
    if state.sCount[delimiter] < state.blkIndent or state.is_code_block(delimiter):
        return False
    aligns = _aligns(state, delimiter)
    if aligns is None:
        return False
    if "|" not in mdTrim(_line(state, start_line)) or state.is_code_block(start_line):
        return False
    header = _cells(state, start_line)
    # The header row sets the number of columns; the delimiter row must have as many.
    column_count = len(header)
    if column_count == 0 or column_count != len(aligns):
        return False
    if silent:
        return True

    old_parent = state.parentType
    state.parentType = "table"
    # A blockquote's terminators end a table too: the most similar block.
    terminators = state.md.block.ruler.getRules("blockquote")

    token = state.push("table_open", "table", 1)
    token.map = table_lines = [start_line, 0]
    token = state.push("thead_open", "thead", 1)
    token.map = [start_line, start_line + 1]
    _row(state, start_line, header, aligns, "th")
    state.push("thead_close", "thead", -1)

    body_lines = None
    autocompleted = 0
    line = start_line + 2
    while line < end_line:
        if state.sCount[line] < state.blkIndent:
            break
        if any(rule(state, line, end_line, True) for rule in terminators):
            break
        if not mdTrim(_line(state, line)) or state.is_code_block(line):
            break
        cells = _cells(state, line)
        # Negative when a row has more cells than the header: only growth is bounded.
        autocompleted += column_count - len(cells)
        if autocompleted > MAX_AUTOCOMPLETED_CELLS:
            break
        if line == start_line + 2:
            token = state.push("tbody_open", "tbody", 1)
            token.map = body_lines = [start_line + 2, 0]
        _row(state, line, cells, aligns, "td")
        line += 1

    if body_lines:
        state.push("tbody_close", "tbody", -1)
        body_lines[1] = line
    state.push("table_close", "table", -1)
    table_lines[1] = line
    state.parentType = old_parent
    state.line = line
    return True
