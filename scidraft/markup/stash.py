"""Placeholders: what Markdown and the sanitiser must not touch waits here until `fill`.

A placeholder is made of private-use characters that neither Markdown nor nh3 alters. It takes
as many lines as the text it replaces (its extra lines hold a filler character, never blank),
so every stage before Markdown sees the author's line numbers and warnings point at the right
line.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from . import limits

OPEN, CLOSE, FILL = "\ue000", "\ue001", "\ue002"
TOKEN = re.compile(f"{OPEN}(\\d+)[{FILL}\\s]*{CLOSE}")


@dataclass
class Item:
    html: str | None  # trusted HTML, or None when `resolve` computes it in fill
    text: str  # plain-text stand-in (search text, heading ids, attributes)
    block: bool  # a block element, taken out of any <p> it lands in
    kind: str
    line: int
    resolve: Callable[[], str] | None = None
    data: dict | None = None
    original: str = ""  # the source it replaced: code Markdown finds shows it as written


_NOTHING = Item("", "", False, "forged", 0)


def strip_placeholder_characters(text: str) -> str:
    """Authors cannot type a placeholder: the private-use characters it uses are removed."""
    # str.replace is many times faster than str.translate on a large body.
    for character in (OPEN, CLOSE, FILL):
        if character in text:
            text = text.replace(character, "")
    return text


class Stash:
    def __init__(self):
        self.items: list[Item] = []

    def add(
        self,
        html: str | None,
        *,
        text: str = "",
        block: bool = False,
        kind: str = "",
        line: int = 0,
        original: str = "",
        indent: str = "",
        data: dict | None = None,
    ) -> str:
        """Store `html` and return its placeholder, spanning as many lines as `original`."""
        if len(self.items) >= limits.MAX_ITEMS:
            limits.exhaust()
        self.items.append(Item(html, text, block, kind, line, data=data, original=original))
        extra = original.count("\n")
        filler = "".join(f"\n{indent}{FILL}" for _ in range(extra))
        return f"{OPEN}{len(self.items) - 1}{filler}{CLOSE}"

    def item(self, index: int) -> Item:
        if 0 <= index < len(self.items):
            return self.items[index]
        return _NOTHING  # a forged placeholder (render strips them; belt and braces)

    def of_kind(self, kind: str) -> list[Item]:
        return [item for item in self.items if item.kind == kind]

    def plain(self, text: str) -> str:
        """`text` with each placeholder replaced by its plain-text stand-in."""
        return TOKEN.sub(lambda match: self.items[int(match.group(1))].text, text)

    def restore(self, text: str) -> str:
        """`text` with each placeholder replaced by the source it stands for: code that only
        Markdown recognises (an indented block, a fence on a list item's first line) shows
        the formulas and commands in it as the author wrote them."""
        if OPEN not in text:
            return text

        def original(match: re.Match) -> str:
            item = self.item(int(match.group(1)))
            return item.original or item.text

        for _ in range(8):  # a restored original may hold placeholders of its own
            if OPEN not in text:
                break
            text = TOKEN.sub(original, text)
        return text


class LineIndex:
    """Offsets to 1-based line numbers."""

    def __init__(self, text: str):
        # Offsets just after each newline, summed in C (a 2 MB body has 500,000 lines).
        lengths = map(operator.add, map(len, text.split("\n")), itertools.repeat(1))
        self.starts = list(itertools.accumulate(lengths, initial=0))[:-1]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)
