"""Parse BibTeX text into entries and a report of what could not be read.

The text is cut into `@type{…}` blocks first and pybtex parses each block on its own, so one
malformed entry costs only itself: every block that parses is kept, every block that does not
is reported with its line, its key (when it has one) and the reason. `@string` macros carry
over from block to block, as in BibTeX.

How the text is read, and why:

* Lines whose first non-blank character is `%` are ignored, inside entries too, as the Hugo
  theme does before handing the file to citation-js (BibTeX has no comments inside entries, and
  pybtex stops reading an entry at such a line). They are blanked, not removed, so offsets and
  line numbers stay those of the file; an entry's `source` is the file's own text.
* Between entries, an `@type{` or `@type(` starts an entry wherever it is (as in BibTeX); any
  other text there is ignored, and reported only when it looks like lost data (a brace or a
  `field = value`), e.g. a stray `}` or the tail of an entry that closed too early.
* Inside an entry, braces are matched as BibTeX does, so `@` inside a braced value is text. An
  `@type{` at the start of a line at the entry's own level (outside any value) means the entry
  was never closed: it is reported and the next entry starts there. If braces never balance
  before the end of the file, the entry ends at the first `@type{` line.
* The work is linear in the text (entries that never close were quadratic), and
  every parse runs within parse_seconds(text) of CPU time, the renderer's budget mechanism
  (scidraft.markup.limits). A parse that runs out of it is `stopped`: no entries, and a
  report line saying where, so callers refuse the file instead of keeping part of it.
* What `@string` macros and `#` expand to is bounded as well, since a few hundred bytes of
  macros that each double the last spell gigabytes. Each value is counted part by part as
  pybtex reads it, before the parts are joined: a field or `@string` over MAX_FIELD_CHARS, an
  entry whose fields together pass MAX_ENTRY_CHARS, or a parse whose values together pass
  expanded_chars_limit(text) stops the parse the same way, naming the line of the `@string` or
  entry, and no string of that size is ever built.
* Where each block ends is found by bibliography.blocks, each block read by pybtex through
  bibliography.pybtex_reader (the expansion bounds and the scanner's linear time are there).
* Each entry's Google Scholar reference (exports.scholar_reference: LaTeX decoded, every value
  bounded) is computed here, within the same budget, and stored with the entry, so a reader's
  page never decodes LaTeX.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from pybtex.database import BibliographyData

from scidraft.bounds import input_path
from scidraft.markup import limits

from .blocks import blocks, scan_text
from .exports import scholar_reference
from .pybtex_reader import MAX_ENTRY_CHARS, CollectingParser, ExpansionTooLarge, Progress

# The key of an entry, and the character after it; a key may hold parentheses only in braces.
_KEY = {
    "{": re.compile(r'\s*([^\s,={}"#%]+)\s*(.?)', re.DOTALL),
    "(": re.compile(r'\s*([^\s,={}()"#%]+)\s*(.?)', re.DOTALL),
}
_LOST_DATA = re.compile(r"[{}]|[A-Za-z][\w-]*\s*=\s*\S")
_NON_ENTRIES = {"string", "comment", "preamble"}
# Bounds on one entry (a .bib with a 1 MB field). Plain text is cheap for pybtex
# (a 1 MB abstract is kept), but its work grows with every brace group and every name: an
# entry over these bounds (MAX_ENTRY_CHARS: pybtex_reader) is refused with a report line
# instead of holding the upload for seconds. Real entries are a few KB with a few dozen groups;
# 5,000 authors are about 150 KB.
MAX_BRACE_GROUPS = 20_000
# The same bounds hold after `@string` macros and `#` are expanded (pybtex_reader: one value,
# MAX_FIELD_CHARS, and the sum of an entry's fields). Every value a parse builds, macros
# included, together stays within expanded_chars_limit(text): EXPANSION_FACTOR times the
# file's own length (real files expand journal abbreviations, a few per cent), and at least
# twice an entry's bound, so a small file may still hold one long entry.
EXPANSION_FACTOR = 2
# CPU seconds a parse may take per MB of text, and at least the renderer's budget.
# Parsing is linear, about 0.6 s per MB of ordinary entries (the 5,000-entry benchmark file,
# 2 MB, takes 1.2 s), so a real file stays well inside this; whatever input still finds a slow
# path in pybtex is stopped here instead of holding a worker, its transaction and its locks.
PARSE_SECONDS_PER_MB = 2.0


@dataclass
class ParsedEntry:
    key: str
    entry_type: str
    fields: dict[str, str]
    persons: dict[str, list[str]]
    source: str
    line: int
    scholar: str = ""  # Google Scholar's citation_reference value, decoded and bounded


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
    # A bound was passed (CPU time, or what macros expand to): `entries` is empty and the last
    # problem says where reading stopped and why.
    stopped: bool = False


def _key_problem(block_text: str, opener: str) -> tuple[str, str | None]:
    """The key the block names, and what is wrong with it (None when nothing is)."""
    body = block_text[block_text.index(opener) + 1 :]
    match = _KEY[opener].match(body)
    closer = "}" if opener == "{" else ")"
    if not match or match.group(2) == "=":
        return "", ("missing key: the entry has no citation key, so no note could cite it; skipped")
    key, after = match.groups()
    if after in (",", closer, ""):
        return key, None
    return key, f"missing comma after the key {key!r}"


def _too_big(block_text: str) -> str:
    """Why pybtex should not read this block (too long, too many brace groups), or ""."""
    if len(block_text) > MAX_ENTRY_CHARS:
        return (
            f"the entry is {len(block_text):,} characters long, over the limit of "
            f"{MAX_ENTRY_CHARS:,} for one entry (a field this long is not a reference): "
            "it was not imported"
        )
    groups = block_text.count("{")
    if groups > MAX_BRACE_GROUPS:
        return (
            f"the entry has {groups:,} brace groups, over the limit of {MAX_BRACE_GROUPS:,} "
            "for one entry: it was not imported"
        )
    return ""


def parse_seconds(text: str) -> float:
    """The CPU time a parse of `text` may take."""
    return max(limits.RENDER_SECONDS, PARSE_SECONDS_PER_MB * len(text) / (1024 * 1024))


def expanded_chars_limit(text: str) -> int:
    """How many characters every value of a parse of `text` may expand to, together."""
    return max(2 * MAX_ENTRY_CHARS, EXPANSION_FACTOR * len(text))


@input_path("bib-text")
def parse_bibtex(text: str) -> ParseResult:
    """Every entry of `text` that reads, and a report of every block that does not, in at
    most parse_seconds(text) of CPU time: past it the result is `stopped`, with no entries and
    a problem saying where reading stopped, so that no caller keeps half a file."""
    progress = Progress(expanded_limit=expanded_chars_limit(text))
    result = ParseResult()
    seconds = parse_seconds(text)
    try:
        with limits.budget(seconds, engine_seconds=math.inf):
            _parse(text, result, progress)
    except limits.BudgetExceeded:
        _stop(
            result,
            text.count("\n", 0, progress.offset) + 1,
            f"reading stopped here: the file took more than {seconds:.1f} s of CPU "
            f"time to read (the limit for {limits.describe_bytes(len(text))} of text), so "
            "nothing was imported and any earlier version is unchanged. Look here for an "
            "entry that never closes or a value with thousands of braces, or split the file.",
        )
    except ExpansionTooLarge as error:
        _stop(
            result,
            text.count("\n", 0, progress.offset) + 1,
            f"reading stopped here: {error}, so nothing was imported and any earlier version "
            "is unchanged. Look here for @string macros that repeat one another (a # b # …).",
        )
    return result


def _stop(result: ParseResult, line: int, reason: str) -> None:
    result.entries, result.preamble, result.stopped = [], [], True
    result.problems.sort(key=lambda problem: problem.line)
    result.problems.append(ParseProblem(line, "", reason))


def _parse(text: str, result: ParseResult, progress: Progress) -> None:
    parser = CollectingParser(progress)
    seen: dict[str, int] = {}
    scan = scan_text(text)
    found, strays = blocks(scan, progress)
    for stray in strays:
        for number, line_text in enumerate(stray.text.split("\n"), start=stray.line):
            line_text = line_text.strip()
            if not _LOST_DATA.search(line_text):
                continue  # prose and separator lines between entries are ignored, as in BibTeX
            excerpt = line_text if len(line_text) <= 40 else line_text[:39] + "…"
            result.problems.append(
                ParseProblem(
                    number,
                    "",
                    f"text outside any entry was ignored: {excerpt!r} "
                    "(a stray brace, or an entry that closed too early?)",
                )
            )
    for block in found:
        if block.kind == "comment":
            continue
        progress.offset = block.begin
        block_scan = scan[block.begin : block.end]
        key, key_problem = (
            ("", None) if block.kind in _NON_ENTRIES else _key_problem(block_scan, block.opener)
        )
        if not block.complete:
            result.problems.append(
                ParseProblem(
                    block.line,
                    key,
                    "unbalanced braces: the entry is never closed before the next @",
                )
            )
            continue
        if key_problem and not key:
            result.problems.append(ParseProblem(block.line, key, key_problem))
            continue
        too_big = _too_big(block_scan)
        if too_big:
            result.problems.append(ParseProblem(block.line, key, too_big))
            continue
        parser.errors = [key_problem] if key_problem else []
        parser.data = BibliographyData()
        parser.line_offset = block.line - 1
        try:
            data = parser.parse_string(block_scan)
        except (limits.BudgetExceeded, ExpansionTooLarge):
            raise
        except Exception as error:  # noqa: BLE001 - one block must never abort the file
            result.problems.append(ParseProblem(block.line, key, f"could not be read: {error}"))
            continue
        if block.swallowed_line is not None:
            parser.errors.append(
                f"line {block.swallowed_line} looks like the start of another entry but is "
                "inside a braced value of this one (a closing brace missing before it?)"
            )
        if block.kind in _NON_ENTRIES:
            if block.kind == "preamble":
                result.preamble.extend(data.preamble_list)
            if parser.errors:
                reason = f"@{block.kind}: " + "; ".join(parser.errors)
                result.problems.append(ParseProblem(block.line, "", reason))
            continue
        if not data.entries:
            reason = "; ".join(parser.errors) or "no entry could be read from this block"
            result.problems.append(ParseProblem(block.line, key, reason))
            continue
        for entry_key, entry in data.entries.items():
            limits.check()
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
            parsed = ParsedEntry(
                key=entry_key,
                entry_type=entry.type.lower(),
                fields={name.lower(): value for name, value in entry.fields.items()},
                persons={
                    role.lower(): [str(person) for person in people]
                    for role, people in entry.persons.items()
                },
                source=text[block.begin : block.end],
                line=block.line,
            )
            parsed.scholar = scholar_reference(parsed)
            result.entries.append(parsed)
    result.problems.sort(key=lambda problem: problem.line)
