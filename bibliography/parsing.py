"""Parse BibTeX text into entries and a report of what could not be read.

pybtex parses each `@…{…}` block on its own, so one malformed entry costs only itself: every
block that parses is kept, every block that does not is reported with its line and key.
`@string` macros carry over from block to block, as in BibTeX.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pybtex.database import BibliographyData
from pybtex.database.input.bibtex import Parser
from pybtex.exceptions import PybtexError

_BLOCK_START = re.compile(r"^[ \t]*@[ \t]*([A-Za-z][\w-]*)[ \t]*([{(])", re.MULTILINE)
_KEY = re.compile(r"\s*([^\s,={}()\"#%']+)\s*,")
_NON_ENTRIES = {"string", "comment", "preamble"}


@dataclass
class ParsedEntry:
    key: str
    entry_type: str
    fields: dict[str, str]
    persons: dict[str, list[str]]
    source: str
    line: int


@dataclass
class ParseProblem:
    line: int
    key: str
    reason: str

    def as_dict(self) -> dict:
        return {"line": self.line, "key": self.key, "reason": self.reason}


@dataclass
class ParseResult:
    entries: list[ParsedEntry] = field(default_factory=list)
    problems: list[ParseProblem] = field(default_factory=list)
    preamble: list[str] = field(default_factory=list)


@dataclass
class _Block:
    kind: str
    text: str
    line: int
    complete: bool


class _CollectingParser(Parser):
    """pybtex's parser, collecting errors instead of raising them."""

    def __init__(self):
        super().__init__()
        self.errors: list[str] = []

    def handle_error(self, error):
        self.errors.append(str(error))


def _blocks(text: str) -> list[_Block]:
    starts = list(_BLOCK_START.finditer(text))
    blocks = []
    for index, match in enumerate(starts):
        begin = match.start()
        limit = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        opener = match.group(2)
        end = _matching_close(text, match.end() - 1, limit, opener)
        complete = end is not None
        block_text = text[begin : end + 1] if complete else text[begin:limit].rstrip()
        blocks.append(
            _Block(
                kind=match.group(1).lower(),
                text=block_text.strip(),
                line=text.count("\n", 0, begin) + 1,
                complete=complete,
            )
        )
    return blocks


def _matching_close(text: str, open_at: int, limit: int, opener: str) -> int | None:
    """Index of the delimiter closing the block opened at `open_at`, if it comes before `limit`."""
    closer = "}" if opener == "{" else ")"
    depth = 0
    for position in range(open_at, limit):
        char = text[position]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if closer == "}" and depth == 0:
                return position
        elif char == ")" and closer == ")" and depth == 0:
            return position
        elif char == "(" and opener == "(" and position == open_at:
            continue
    return None


def _key_of(block_text: str) -> str:
    match = _KEY.match(block_text[block_text.find("{" if "{" in block_text else "(") + 1 :])
    return match.group(1) if match else ""


def parse_bibtex(text: str) -> ParseResult:
    result = ParseResult()
    parser = _CollectingParser()
    seen: dict[str, int] = {}
    for block in _blocks(text):
        if block.kind == "comment":
            continue
        key = "" if block.kind in _NON_ENTRIES else _key_of(block.text)
        if not block.complete:
            result.problems.append(
                ParseProblem(
                    block.line,
                    key,
                    "unbalanced braces: the entry is never closed before the next @",
                )
            )
            continue
        parser.errors = []
        parser.data = BibliographyData()
        try:
            data = parser.parse_string(block.text)
        except (PybtexError, ValueError, IndexError) as error:
            result.problems.append(ParseProblem(block.line, key, str(error)))
            continue
        if block.kind == "preamble":
            result.preamble.extend(data.preamble_list)
        if block.kind in _NON_ENTRIES:
            if parser.errors:
                result.problems.append(ParseProblem(block.line, key, "; ".join(parser.errors)))
            continue
        if not data.entries:
            reason = "; ".join(parser.errors) or "no entry could be read from this block"
            result.problems.append(ParseProblem(block.line, key, reason))
            continue
        for entry_key, entry in data.entries.items():
            folded = entry_key.lower()
            if folded in seen:
                result.problems.append(
                    ParseProblem(
                        block.line,
                        entry_key,
                        f"duplicate key: first defined on line {seen[folded]}; this one is ignored",
                    )
                )
                continue
            seen[folded] = block.line
            if parser.errors:
                # The entry was read, but not cleanly (e.g. a repeated field): keep it, say so.
                result.problems.append(
                    ParseProblem(
                        block.line, entry_key, "kept with errors: " + "; ".join(parser.errors)
                    )
                )
            result.entries.append(
                ParsedEntry(
                    key=entry_key,
                    entry_type=entry.type.lower(),
                    fields={name.lower(): value for name, value in entry.fields.items()},
                    persons={
                        role.lower(): [str(person) for person in people]
                        for role, people in entry.persons.items()
                    },
                    source=block.text,
                    line=block.line,
                )
            )
    return result
