"""Blocks nested too deep for the Markdown stage: shown as escaped text with a warning.

Markdown parses a container's content inside it, a level of recursion each, so a block nested
past `limits.MAX_NESTING` levels is taken out before Markdown could spend minutes or exhaust
the stack on it. An ordinary note is decided by one search.
"""

from __future__ import annotations

import html
import re

from .limits import BLANK_LINES, MAX_NESTING
from .rendered import RenderWarning
from .stash import Stash

# Container markers at the start of a line: indentation, block-quote marks and list markers.
_CONTAINER = re.compile(r"[ \t]*(?:(?:>|(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$))[ \t]*)*")
_MARKER = re.compile(r">|[-*+](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$)")
# A line nested deeper than MAX_NESTING starts with at least that many container characters:
# one search skips the per-line work for every ordinary note.
_DEEP_CANDIDATE = re.compile(rf"^[ \t>*+\-\d.)]{{{MAX_NESTING + 1},}}", re.M)


def nesting(line: str) -> int:
    """How many container levels `line` opens or sits in: four columns of indentation count
    as one level (a list's usual indent; CommonMark nests from two columns, which
    convert.MAX_TOKEN_NESTING allows for), each `>` or list marker as another."""
    prefix = _CONTAINER.match(line).group(0)
    markers = prefix.lstrip(" \t")
    indent = prefix[: len(prefix) - len(markers)]
    return len(indent.expandtabs(4)) // 4 + len(_MARKER.findall(markers))


def refuse_deep_blocks(text: str, stash: Stash, warnings: list[RenderWarning]) -> str:
    """Blocks (between blank lines) nested deeper than MAX_NESTING become escaped text with a
    warning, before Markdown can spend minutes or exhaust the stack on them."""
    if not _DEEP_CANDIDATE.search(text):
        return text
    out, line = [], 1
    pieces = BLANK_LINES.split(text)
    separators = [match.group(0) for match in BLANK_LINES.finditer(text)]
    for index, block in enumerate(pieces):
        depth = max(
            (nesting(row) for row in block.split("\n") if _DEEP_CANDIDATE.match(row)), default=0
        )
        if depth > MAX_NESTING:
            warnings.append(
                RenderWarning(
                    line,
                    "nesting-limit",
                    f"this block is nested {depth} levels deep (the limit is {MAX_NESTING}): "
                    "it is shown as plain text",
                )
            )
            out.append(
                stash.add(
                    f'<pre class="render-limit">{html.escape(block)}</pre>',
                    text=block,
                    block=True,
                    kind="refused",
                    line=line,
                    original=block,
                )
            )
        else:
            out.append(block)
        line += block.count("\n")
        if index < len(separators):
            out.append(separators[index])
            line += separators[index].count("\n")
    return "".join(out)
