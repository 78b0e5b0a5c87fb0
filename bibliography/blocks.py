"""A .bib file's text cut into `@type{…}` blocks (bibliography.parsing reads each on its own),
in time linear in the text: where each block ends, whether it closes, and the text between
blocks (reported when it looks like lost data). See bibliography.parsing for how the text is
read, and why.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from scidraft.markup import limits

from .pybtex_reader import Progress

# An entry starts with @type{ or @type( (BibTeX allows blanks and newlines in between).
_ENTRY_START = re.compile(r"@\s*([A-Za-z][\w-]*)\s*([{(])")
# Inside an entry, what changes the brace level or may end it: braces, parentheses, quotes and
# a newline after which a line starts with @type{.
_INSIDE = re.compile(r"""[{}()"]|\n(?=[ \t]*@\s*[A-Za-z][\w-]*\s*[{(])""")
_BRACES_AND_ENTRY_LINES = re.compile(r"[{}]|\n(?=[ \t]*@\s*[A-Za-z][\w-]*\s*[{(])")
# A swallowed line that looks like a whole entry, not a stray `@` in prose.
_LOOKS_LIKE_ENTRY = re.compile(r"\s*@\s*[A-Za-z][\w-]*\s*[{(]\s*[^\s,={}()]+\s*,\s*[\w-]+\s*=")
_COMMENT_LINE = re.compile(r"^[ \t]*%[^\r\n]*", re.MULTILINE)
_LONE_CR = re.compile(r"\r(?!\n)")


@dataclass
class Block:
    kind: str
    opener: str
    begin: int  # offset of the `@`
    end: int  # offset just after the block's text
    line: int
    complete: bool
    # Line of an `@type{…,` swallowed inside a braced value of this block, if any.
    swallowed_line: int | None = None


@dataclass
class Stray:
    text: str
    line: int


def scan_text(text: str) -> str:
    """The text as the block scanner and pybtex read it: same length, same line breaks."""
    if text.startswith("\ufeff"):
        text = " " + text[1:]
    if "\r" in text:
        text = _LONE_CR.sub("\n", text)
    if "%" in text:
        text = _COMMENT_LINE.sub(lambda match: " " * len(match.group()), text)
    return text


class _LineCounter:
    """Line number of an offset, for offsets asked in increasing order (linear overall)."""

    def __init__(self, text: str):
        self.text = text
        self.offset = 0
        self.line = 1

    def __call__(self, offset: int) -> int:
        if offset < self.offset:
            return self.text.count("\n", 0, offset) + 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def blocks(scan: str, progress: Progress) -> tuple[list[Block], list[Stray]]:
    found: list[Block] = []
    strays: list[Stray] = []
    line_of = _LineCounter(scan)
    structure = _Structure(scan, progress)
    position = 0
    while True:
        progress.offset = position
        limits.check()
        match = _ENTRY_START.search(scan, position)
        stray_end = match.start() if match else len(scan)
        stray = scan[position:stray_end]
        if stray.strip():
            start = position + len(stray) - len(stray.lstrip())
            strays.append(Stray(stray.strip(), line_of(start)))
        if match is None:
            return found, strays
        begin = match.start()
        line = line_of(begin)
        close, cut, swallowed = structure.block_end(match.end() - 1, match.group(2))
        if close is not None:
            end = resume = close + 1
        else:
            resume = cut if cut is not None else len(scan)
            end = begin + len(scan[begin:resume].rstrip())
        block = Block(
            kind=match.group(1).lower(),
            opener=match.group(2),
            begin=begin,
            end=end,
            line=line,
            complete=close is not None,
        )
        if close is not None and swallowed is not None:
            block.swallowed_line = line + scan.count("\n", begin, swallowed) + 1
        found.append(block)
        position = resume


class _Structure:
    """Where each block of the text ends, found in time linear in the whole text.

    Scanning each block from its `@` until it closes is linear while blocks close, but an entry
    that never closes is scanned to the end of the file, and the next one starts on its next
    line: `"@misc{k, title = {x\n" * N` would be scanned N times (26 s for 80 KB). So the
    braces are matched once for the whole text, with a stack: where a `{` closes depends only
    on the text after it, so one pass serves every block, wherever it starts. A `(` entry ends
    at a `)` outside braces and quotes; it is walked over its own level only (brace groups are
    jumped over), and each walk remembers its outcome for every token it passed, so a later
    walk that reaches the same token in the same quote state stops there.
    """

    def __init__(self, scan: str, progress: Progress):
        self.scan = scan
        self.progress = progress
        self.closes: dict[int, int] = {}  # offset of a `{` -> offset of its `}`
        self.first_cut: dict[int, int] = {}  # offset of a `{` -> first entry line directly in it
        self.entry_lines: list[int] = []  # offsets of the newline before each `@type{` line
        stack: list[int] = []
        for count, token in enumerate(_BRACES_AND_ENTRY_LINES.finditer(scan)):
            char, offset = token.group(), token.start()
            if not count % 4096:
                progress.offset = offset
                limits.check()
            if char == "{":
                stack.append(offset)
            elif char == "}":
                if stack:
                    self.closes[stack.pop()] = offset
            else:
                self.entry_lines.append(offset)
                if stack and stack[-1] not in self.first_cut:
                    self.first_cut[stack[-1]] = offset
        self._entry_like: list[int] | None = None
        # (offset of a token, inside quotes) -> how a `(` entry walking through it ends.
        self._walks: dict[tuple[int, bool], tuple[str, int | None]] = {}

    def block_end(self, open_at: int, opener: str) -> tuple[int | None, int | None, int | None]:
        """(offset of the closing delimiter or None, where to cut an unclosed block, first
        entry-like `@` line swallowed inside a braced value)."""
        if opener == "{":
            close = self.closes.get(open_at)
            cut = self.first_cut.get(open_at)
            if cut is not None and (close is None or cut < close):
                return None, cut, None  # a new entry at the entry's own level: never closed
            outcome = ("close", close) if close is not None else ("open", None)
        else:
            outcome = self._walk(open_at + 1)
        kind, offset = outcome
        if kind == "cut":
            return None, offset, None
        if kind == "open":
            # Braces never balance: the entry ends at the first `@type{` line inside it.
            return None, self._first_after(self.entry_lines, open_at), None
        swallowed = self._first_after(self._entry_like_lines(), open_at)
        return offset, None, swallowed if swallowed is not None and swallowed < offset else None

    def _walk(self, position: int) -> tuple[str, int | None]:
        """How a `(` entry whose text starts at `position` ends: ("close", offset of the `)`),
        ("cut", offset of the newline before an `@type{` line at its own level) or ("open",
        None) when it never closes."""
        in_quote = False
        passed: list[tuple[int, bool]] = []
        outcome: tuple[str, int | None] = ("open", None)
        while outcome == ("open", None):
            jumped = False
            for token in _INSIDE.finditer(self.scan, position):
                char, offset = token.group(), token.start()
                self.progress.offset = offset
                limits.check()
                known = self._walks.get((offset, in_quote))
                if known is not None:
                    outcome = known
                    break
                passed.append((offset, in_quote))
                if char == "{":
                    close = self.closes.get(offset)
                    if close is None:
                        break  # a group that never closes: neither does the entry
                    position, jumped = close + 1, True
                    break
                if char == '"':
                    in_quote = not in_quote
                elif char == ")" and not in_quote:
                    outcome = ("close", offset)
                    break
                elif char == "\n" and not in_quote:
                    outcome = ("cut", offset)
                    break
                # A `}` at the entry's own level is stray, and `(` is text: both are read on.
            if not jumped:
                break
        for state in passed:
            self._walks[state] = outcome
        return outcome

    def _entry_like_lines(self) -> list[int]:
        if self._entry_like is None:
            self._entry_like = [
                offset
                for offset in self.entry_lines
                if _LOOKS_LIKE_ENTRY.match(self.scan, offset + 1)
            ]
        return self._entry_like

    @staticmethod
    def _first_after(offsets: list[int], position: int) -> int | None:
        index = bisect.bisect_right(offsets, position)
        return offsets[index] if index < len(offsets) else None
