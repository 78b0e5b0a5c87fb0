"""pybtex reading one block of a .bib file within bounds (bibliography.parsing cuts the file
into blocks and reports on them).

pybtex's scanner is made linear in the text and made to look at the parse's CPU budget
(BoundedScanner); what `@string` macros and `#` expand to is counted part by part as pybtex
reads each value, before the parts are joined, so a few hundred bytes of macros that each
double the last never build gigabytes (ExpansionTooLarge); person fields are bounded in names,
and a name pybtex cannot read is reported and repaired instead of losing its entry
(CollectingParser).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from pybtex.bibtex.utils import split_name_list, split_tex_string
from pybtex.database import Entry, Person
from pybtex.database.input.bibtex import DuplicateField, LowLevelParser, Parser, UndefinedMacro
from pybtex.exceptions import PybtexError
from pybtex.scanner import Literal, PybtexSyntaxError, Token
from pybtex.textutils import normalize_whitespace

from scidraft.markup import limits

_LINE_IN_MESSAGE = re.compile(r" in line (\d+)")
# Bounds on one entry's values after `@string` macros and `#` are expanded: one value (a field,
# an @string's value, a preamble) and the sum of an entry's fields (the length of an entry's
# text is bounded the same: bibliography.parsing).
MAX_ENTRY_CHARS = 2 * 1024 * 1024
MAX_FIELD_CHARS = MAX_ENTRY_CHARS
# Names in one person field that are parsed; the rest become "others" (BibTeX's "et al.").
MAX_PERSONS = 10_000


@dataclass
class Progress:
    """One parse's progress, which its bounds and its report when stopped read."""

    offset: int = 0  # in the text: where the parse is, for the report when the budget runs out
    expanded: int = 0  # characters of every value read so far, after expansion
    expanded_limit: int = 0


class ExpansionTooLarge(Exception):
    """A value, an entry or the whole parse expands past its bound (see the module's notes and
    bibliography.parsing's)."""


class BoundedScanner(LowLevelParser):
    """pybtex's scanner in linear time, stopping when the parse's CPU budget is spent.

    pybtex looks for the next of several delimiters by searching for each one from the current
    position: inside a quoted value every brace searched again for the closing quote, to the
    end of the entry, so 8,000 `{}` before 1 MB of text took 2.5 s. The delimiters are single
    characters, so one search for any of them finds the nearest, which is the one pybtex picks.
    """

    # Calls between two looks at the budget: a look costs about as much as a call.
    CHECK_EVERY = 64

    def __init__(self, *args, progress: Progress, **kwargs):
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


class CollectingParser(Parser):
    """pybtex's parser, collecting errors instead of raising them.

    Line numbers in pybtex's messages count from the block's first line; `line_offset` turns
    them into lines of the file.
    """

    def __init__(self, progress: Progress):
        super().__init__()
        self.errors: list[str] = []
        self.line_offset = 0
        self.people: dict[str, Person] = {}
        self.progress = progress

    def handle_error(self, error):
        self.errors.append(self._describe(error))

    def parse_string(self, text):
        # pybtex's own, reading through BoundedScanner.
        self.unnamed_entry_counter = 1
        self.command_start = 0
        scanner = BoundedScanner(
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
            return  # reported by bibliography.parsing: an entry without a key cannot be cited
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
