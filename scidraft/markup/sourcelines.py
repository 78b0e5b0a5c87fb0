"""Source lines on the preview's blocks: `data-source-line="N"` for the editor's scroll sync.

Only the editor preview asks for them (`RenderContext.source_lines`); the published HTML never
carries them. Three parts, so that the Markdown stage can change library without the rest:

1. `LineMap`: the environments stage puts each `:::` fence on three lines (the placeholder
   between blank lines), so lines of the text Markdown sees are mapped back to the author's.
2. The Markdown stage (convert.py) sets the attribute, with the mapped line, on every
   top-level block element it makes. That is its only duty here: with markdown-it-py it is
   `token.attrSet(ATTRIBUTE, str(source_line(token.map[0] + 1)))` on each level-0 block token.
3. The sanitiser keeps the attribute (digits only) when asked, and `fill` moves it from a
   paragraph that held only a block placeholder (code, diagram, environment) to that block's
   own first tag (`with_source_line`), as it unwraps the paragraph.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

ATTRIBUTE = "data-source-line"
_FIRST_TAG = re.compile(r"^(\s*<[A-Za-z][\w-]*)(?=[\s>/])")
DIGITS = re.compile(r"^\d{1,9}$")

SourceLine = Callable[[int], int]


class LineMap:
    """Lines of a stage's output (1-based) → lines of its input, for stages that add lines.

    `replaced(out_line, count, source_line)` records that `count` output lines starting at
    `out_line` stand for `source_line`; every other output line keeps its distance to the
    nearest recorded group before it."""

    def __init__(self):
        self._starts: list[int] = []
        self._groups: list[tuple[int, int]] = []  # (count, source line)

    def replaced(self, out_line: int, count: int, source_line: int) -> None:
        self._starts.append(out_line)
        self._groups.append((count, source_line))

    def __call__(self, out_line: int) -> int:
        index = bisect.bisect_right(self._starts, out_line) - 1
        if index < 0:
            return out_line
        start = self._starts[index]
        count, source = self._groups[index]
        if out_line < start + count:
            return source
        return source + 1 + (out_line - start - count)


def with_source_line(markup: str, line: int) -> str:
    """`markup` with the attribute on its first tag, when it starts with one that has none."""
    if not line or ATTRIBUTE in markup[: markup.find(">") + 1]:
        return markup
    return _FIRST_TAG.sub(lambda match: f'{match.group(1)} {ATTRIBUTE}="{line}"', markup, count=1)
