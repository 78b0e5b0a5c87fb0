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
* Each entry's Google Scholar reference (exports.scholar_reference: LaTeX decoded, every value
  bounded) is computed here, within the same budget, and stored with the entry, so a reader's
  page never decodes LaTeX.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from dataclasses import dataclass, field

from pybtex.bibtex.utils import split_name_list, split_tex_string
from pybtex.database import BibliographyData, Entry, Person
from pybtex.database.input.bibtex import DuplicateField, LowLevelParser, Parser, UndefinedMacro
from pybtex.exceptions import PybtexError
from pybtex.scanner import Literal, PybtexSyntaxError, Token
from pybtex.textutils import normalize_whitespace

from scidraft.bounds import input_path
from scidraft.markup import limits

from .exports import scholar_reference

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
# The key of an entry, and the character after it; a key may hold parentheses only in braces.
_KEY = {
    "{": re.compile(r'\s*([^\s,={}"#%]+)\s*(.?)', re.DOTALL),
    "(": re.compile(r'\s*([^\s,={}()"#%]+)\s*(.?)', re.DOTALL),
}
_LOST_DATA = re.compile(r"[{}]|[A-Za-z][\w-]*\s*=\s*\S")
_LINE_IN_MESSAGE = re.compile(r" in line (\d+)")
_NON_ENTRIES = {"string", "comment", "preamble"}
# Bounds on one entry (a .bib with a 1 MB field). Plain text is cheap for pybtex
# (a 1 MB abstract is kept), but its work grows with every brace group and every name: an
# entry over these bounds is refused with a report line instead of holding the upload for
# seconds. Real entries are a few KB with a few dozen groups; 5,000 authors are about 150 KB.
MAX_ENTRY_CHARS = 2 * 1024 * 1024
MAX_BRACE_GROUPS = 20_000
# The same bounds after `@string` macros and `#` are expanded: one value (a field, an @string's
# value, a preamble) and the sum of an entry's fields. Every value a parse builds, macros
# included, together stays within expanded_chars_limit(text): EXPANSION_FACTOR times the
# file's own length (real files expand journal abbreviations, a few per cent), and at least
# twice an entry's bound, so a small file may still hold one long entry.
MAX_FIELD_CHARS = MAX_ENTRY_CHARS
EXPANSION_FACTOR = 2
# Names in one person field that are parsed; the rest become "others" (BibTeX's "et al.").
MAX_PERSONS = 10_000
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


@dataclass
class _Progress:
    offset: int = 0  # in the text: where the parse is, for the report when the budget runs out
    expanded: int = 0  # characters of every value read so far, after expansion
    expanded_limit: int = 0


class ExpansionTooLarge(Exception):
    """A value, an entry or the whole parse expands past its bound (see the module's notes)."""


@dataclass
class _Block:
    kind: str
    opener: str
    begin: int  # offset of the `@`
    end: int  # offset just after the block's text
    line: int
    complete: bool
    # Line of an `@type{…,` swallowed inside a braced value of this block, if any.
    swallowed_line: int | None = None


@dataclass
class _Stray:
    text: str
    line: int


class _BoundedScanner(LowLevelParser):
    """pybtex's scanner in linear time, stopping when the parse's CPU budget is spent.

    pybtex looks for the next of several delimiters by searching for each one from the current
    position: inside a quoted value every brace searched again for the closing quote, to the
    end of the entry, so 8,000 `{}` before 1 MB of text took 2.5 s. The delimiters are single
    characters, so one search for any of them finds the nearest, which is the one pybtex picks.
    """

    # Calls between two looks at the budget: a look costs about as much as a call.
    CHECK_EVERY = 64

    def __init__(self, *args, progress: _Progress, **kwargs):
        super().__init__(*args, **kwargs)
        self._calls = 0
        self._progress = progress
        self._value_chars = 0
        self._block_chars = 0

    def skip_to(self, patterns):
        self._calls += 1
        if not self._calls % self.CHECK_EVERY:
            limits.check()
        search, winners = _nearest(tuple(patterns))
        if search is None:
            return super().skip_to(patterns)
        match = search(self.text, self.pos)
        if match is None:
            return None
        value = self.text[self.pos : match.end()]
        self.pos = match.end()
        self.update_lineno(value)
        return Token(value, winners[match.group()])

    def parse_command(self):
        self._block_chars = 0
        return super().parse_command()

    def parse_value(self):
        self._value_chars = 0
        super().parse_value()
        # Once the value is read, before its parts are joined; a value past its own bound
        # is reported as such rather than as the file's.
        if self._progress.expanded > self._progress.expanded_limit:
            raise ExpansionTooLarge(
                f"with {self._value_name()}, the file's values expand to more than "
                f"{self._progress.expanded_limit:,} characters, the limit for this file"
            )

    def parse_value_part(self):
        # Once a value part: every loop of pybtex's over an entry reads one at each turn.
        self._calls += 1
        if not self._calls % self.CHECK_EVERY:
            limits.check()
        part = super().parse_value_part()
        self._count(len(part))
        return part

    def _count(self, size: int) -> None:
        """Count a value part before pybtex joins the value's parts (a macro's part is the
        macro's own string, not a copy): the join only happens within the bounds."""
        self._value_chars += size
        self._block_chars += size
        self._progress.expanded += size
        if self._value_chars > MAX_FIELD_CHARS:
            raise ExpansionTooLarge(
                f"{self._value_name()} expands to more than {MAX_FIELD_CHARS:,} characters, "
                "the limit for one value"
            )
        if self._block_chars > MAX_ENTRY_CHARS and self.current_entry_key is not None:
            raise ExpansionTooLarge(
                f"the fields of entry {self.current_entry_key!r} expand to more than "
                f"{MAX_ENTRY_CHARS:,} characters, the limit for one entry"
            )

    def _value_name(self) -> str:
        name = self.current_field_name
        if self.current_entry_key is not None:
            return f"field {name!r} of entry {self.current_entry_key!r}"
        return f"@string {name!r}" if name else "@preamble"


@functools.cache
def _nearest(patterns: tuple) -> tuple:
    """(search for the nearest of `patterns`, the pattern of each character it finds), when
    every one is a single-character Literal; (None, None) otherwise."""
    characters = {}
    for pattern in patterns:
        text = pattern.search.__self__.pattern if isinstance(pattern, Literal) else ""
        character = re.sub(r"\\(.)", r"\1", text)
        if len(character) != 1:
            return None, None
        characters.setdefault(character, pattern)
    union = re.compile("[" + "".join(re.escape(character) for character in characters) + "]")
    return union.search, characters


class _CollectingParser(Parser):
    """pybtex's parser, collecting errors instead of raising them.

    Line numbers in pybtex's messages count from the block's first line; `line_offset` turns
    them into lines of the file.
    """

    def __init__(self, progress: _Progress):
        super().__init__()
        self.errors: list[str] = []
        self.line_offset = 0
        self.people: dict[str, Person] = {}
        self.progress = progress

    def handle_error(self, error):
        self.errors.append(self._describe(error))

    def parse_string(self, text):
        # pybtex's own, reading through _BoundedScanner.
        self.unnamed_entry_counter = 1
        self.command_start = 0
        scanner = _BoundedScanner(
            text,
            keyless_entries=self.keyless_entries,
            handle_error=self.handle_error,
            want_entry=self.data.want_entry,
            filename=self.filename,
            macros=self.macros,
            progress=self.progress,
        )
        for entry_type, body in scanner:
            kind = entry_type.lower()
            if kind == "preamble":
                self.process_preamble(*body)
            elif kind != "string":
                self.process_entry(entry_type, *body)
        return self.data

    def _describe(self, error: Exception) -> str:
        if isinstance(error, UndefinedMacro):
            name = Exception.__str__(error)
            return (
                f"undefined string {name!r} in line {error.lineno + self.line_offset} "
                "(read as empty; an @string must be defined before it is used)"
            )
        message = str(error)
        if isinstance(error, PybtexSyntaxError) and error.lineno is not None:
            absolute = error.lineno + self.line_offset
            message = _LINE_IN_MESSAGE.sub(f" in line {absolute}", message, count=1)
            if message.endswith("unbalanced braces"):
                message += ' (a stray "}" or a missing closing quote)'
            if "expected" in message or "unbalanced" in message or "end of file" in message:
                message += "; the rest of the entry was not read"
        return message

    def process_entry(self, entry_type, key, fields):
        # pybtex's own, except that a name with too many commas is reported and repaired
        # (as pybtex does in non-strict mode) instead of raising and losing the entry.
        if key is None:
            return  # reported by parse_bibtex: an entry without a key cannot be cited
        entry = Entry(entry_type)
        seen_fields = set()
        for field_name, value_list in fields:
            if field_name.lower() in seen_fields:
                self.handle_error(DuplicateField(key, field_name))
                continue
            value = normalize_whitespace(self.flatten_value_list(value_list))
            if field_name in self.person_fields:
                names = split_name_list(value)
                if len(names) > MAX_PERSONS:
                    self.errors.append(
                        f"{field_name} lists {len(names):,} names: the first {MAX_PERSONS:,} "
                        'are kept, the rest read as "others"'
                    )
                    names = [*names[:MAX_PERSONS], "others"]
                for name in names:
                    person = self._person(name)
                    if person is not None:
                        entry.add_person(person, field_name)
            else:
                entry.fields[field_name] = value
            seen_fields.add(field_name.lower())
        self.data.add_entry(key, entry)

    def _person(self, name: str) -> Person | None:
        # Names recur across a file (a group's own papers): parse each spelling once. Only
        # clean parses are cached, so an error is reported for every entry that has it.
        cached = self.people.get(name)
        if cached is not None:
            return cached
        try:
            person = self.people[name] = Person(name)
            return person
        except PybtexError as error:
            self.handle_error(error)
        parts = split_tex_string(name, ",")
        try:
            return Person(", ".join([*parts[:2], " ".join(parts[2:])]))
        except PybtexError:
            return None


def _scan_text(text: str) -> str:
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


def _blocks(scan: str, progress: _Progress) -> tuple[list[_Block], list[_Stray]]:
    blocks: list[_Block] = []
    strays: list[_Stray] = []
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
            strays.append(_Stray(stray.strip(), line_of(start)))
        if match is None:
            return blocks, strays
        begin = match.start()
        line = line_of(begin)
        close, cut, swallowed = structure.block_end(match.end() - 1, match.group(2))
        if close is not None:
            end = resume = close + 1
        else:
            resume = cut if cut is not None else len(scan)
            end = begin + len(scan[begin:resume].rstrip())
        block = _Block(
            kind=match.group(1).lower(),
            opener=match.group(2),
            begin=begin,
            end=end,
            line=line,
            complete=close is not None,
        )
        if close is not None and swallowed is not None:
            block.swallowed_line = line + scan.count("\n", begin, swallowed) + 1
        blocks.append(block)
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

    def __init__(self, scan: str, progress: _Progress):
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
    progress = _Progress(expanded_limit=expanded_chars_limit(text))
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


def _parse(text: str, result: ParseResult, progress: _Progress) -> None:
    parser = _CollectingParser(progress)
    seen: dict[str, int] = {}
    scan = _scan_text(text)
    blocks, strays = _blocks(scan, progress)
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
    for block in blocks:
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
