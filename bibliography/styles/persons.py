"""pybtex's name parsing (`Person(string)`), the same parts for less.

pybtex's `Person` splits a name with `split_tex_string`, which compiles its separator and walks
brace by brace on every call, eight calls a name (five of them on empty strings), and a
reference list parses hundreds of names. `parse_person` follows pybtex's `_parse_string` step
by step (pybtex.database, MIT licence, © Andrey Golovizin) with the cheap cases taken directly:
brace groups (`M{\\"u}ller`) are masked by one character so that a name splits with one call of
str.split or of pybtex's precompiled space pattern, a word starting with a letter is a "von"
word exactly when that letter is lower case, and the family and given parts, which recur in
other combinations, are split once each. Deeper braces and anything unusual go to pybtex's own
functions. tests/bibliography/test_persons.py compares the two on generated and real names.
"""

from __future__ import annotations

import re

from pybtex.bibtex.utils import BIBTEX_SPACE_RE, scan_bibtex_string, split_tex_string
from pybtex.database import Person

from .memo import remembered

# A brace group nested at most two deep; a file's names rarely nest deeper.
_GROUP = re.compile(r"\{(?:[^{}]|\{[^{}]*\})*\}")
# Stands for a brace group while splitting: not a separator, not a brace, not a backslash.
_MARK = "\ue000"


def _masked(string: str) -> tuple[str, list[str]] | None:
    """`string` with each brace group replaced by one mark, and the groups; None when pybtex
    must split it (braces nested deeper or unclosed, or a mark already there)."""
    if "{" not in string:
        return string, []
    if _MARK in string:
        return None
    masked = _GROUP.sub(_MARK, string)
    if "{" in masked:
        return None
    return masked, _GROUP.findall(string)


def _unmasked(parts: list[str], groups: list[str]) -> list[str]:
    """The parts of a masked string with their brace groups put back, in order."""
    if not groups:
        return parts
    remaining = iter(groups)
    return [_unmask(part, remaining) if _MARK in part else part for part in parts]


def _unmask(part: str, groups) -> str:
    pieces = part.split(_MARK)
    out = [pieces[0]]
    for piece in pieces[1:]:
        out += (next(groups), piece)
    return "".join(out)


def _words(string: str) -> list[str]:
    """`split_tex_string(string)`: words split at BibTeX spaces outside braces, stripped,
    empty ones dropped. pybtex walks the string brace group by brace group; here each group
    is masked by one character, the masked string is split at once and the groups put back."""
    masked = _masked(string)
    if masked is None:
        return split_tex_string(string)
    text, groups = masked
    if "\\" in text or "~" in text:
        parts = [part for part in (part.strip() for part in BIBTEX_SPACE_RE.split(text)) if part]
    else:
        # Only whitespace separates: str.split's whitespace is the regular expression's `\s`.
        parts = text.split()
    return _unmasked(parts, groups)


def _comma_parts(string: str) -> list[str]:
    """`split_tex_string(string, ",")`: parts split at commas outside braces, stripped, kept
    if empty."""
    masked = _masked(string)
    if not string or masked is None:
        return split_tex_string(string, ",")
    text, groups = masked
    return _unmasked([part.strip() for part in text.split(",")], groups)


def _special_char_islower(special_char: str) -> bool:
    control_sequence = True
    for char in special_char[1:]:  # skip the backslash
        if control_sequence:
            if not char.isalpha():
                control_sequence = False
        elif char.isalpha():
            return char.islower()
    return False


def _is_von(word: str) -> bool:
    """pybtex's `is_von_name`: the first letter (at brace level 0, or a special character's)
    is lower case."""
    if word[0].isupper():
        return False
    if word[0].islower():
        return True
    for char, brace_level in scan_bibtex_string(word):
        if brace_level == 0 and char.isalpha():
            return char.islower()
        if brace_level == 1 and char.startswith("\\"):
            return _special_char_islower(char)
    return False


def _first_von(words: list[str]) -> int:
    """pybtex's `find_pos(words, is_von_name)`: the first von word's index, else len(words)."""
    for index, word in enumerate(words):
        if _is_von(word):
            return index
    return len(words)


def _von_last(words: list[str]) -> tuple[list[str], list[str]]:
    """pybtex's `process_von_last`: (von words, last words). The von part runs to the last
    von word before the final word, which is always a last name."""
    split = 0
    for index in range(len(words) - 2, -1, -1):
        if _is_von(words[index]):
            split = index + 1
            break
    return words[:split], words[split:]


def parse_person(string: str) -> Person:
    """`Person(string)`: the same first, middle, prelast, last and lineage names."""
    name = string.strip()
    parts = _comma_parts(name) if name else []
    if len(parts) > 3:
        return Person(string)  # pybtex reports the malformed name; keep its behaviour
    first: list[str] = []
    prelast: list[str] = []
    last: list[str] = []
    lineage: list[str] = []
    if len(parts) == 1:  # First von Last
        words = _words(name)
        position = _first_von(words)
        first, von_last = words[:position], words[position:]
        if not von_last and first:
            von_last = [first.pop()]
        prelast, last = _von_last(von_last)
    elif parts:  # von Last, First  or  von Last, Jr, First
        von, family = _family(parts[0])
        prelast, last = list(von), list(family)
        if len(parts) == 3:
            lineage = _words(parts[1])
        first = list(_given(parts[-1]))
    person = Person.__new__(Person)
    person.first_names = first[:1]
    person.middle_names = first[1:]
    person.prelast_names = prelast
    person.last_names = last
    person.lineage_names = lineage
    person.memo_key = (
        tuple(first[:1]),
        tuple(first[1:]),
        tuple(prelast),
        tuple(last),
        tuple(lineage),
    )
    return person


# Family names and given names recur across a file's names in other combinations: each part
# is split once. Tuples, so no Person shares a list with another.
@remembered
def _family(part: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The von and last words of the part before the first comma."""
    von, last = _von_last(_words(part))
    return tuple(von), tuple(last)


@remembered
def _given(part: str) -> tuple[str, ...]:
    """The first and middle words of the part after the last comma."""
    return tuple(_words(part))
