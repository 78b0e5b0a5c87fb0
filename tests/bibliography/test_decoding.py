"""bibliography.styles.decoding: decode_latex is pybtex's Text.from_latex, remembered.

Its shortcuts (plain text and braces skip latexcodec; accent groups, en dashes and ties are
decoded one by one; flat braces are parsed without pybtex's parser) are checked against pybtex
on generated strings made of the characters and pieces latexcodec treats specially, and on
every field value and name part of the sample and demo bibliographies.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pybtex.markup import LaTeXParser
from pybtex.richtext import Text

from bibliography.parsing import parse_bibtex
from bibliography.styles import make_entry
from bibliography.styles.decoding import decode_latex, parse_braces
from bibliography.styles.memo import memo_clear

ROOT = Path(__file__).resolve().parents[2]
BIB_FILES = [
    ROOT / "tests/bibliography/golden/sample.bib",
    *sorted((ROOT / "demo/assets/bib").glob("*.bib")),
]
# Letters, and every character with a meaning for latexcodec or pybtex's brace parser.
ALPHABET = "ab Z9.éŁ" + " " * 4 + "{}{}\\$%#~'`!?,-\t\n\"<>&_^"


def outcome(function, source: str):
    try:
        return function(source)
    except Exception as error:  # noqa: BLE001 - the error itself is what is compared
        return f"{type(error).__name__}: {error}"


def undecorated(source: str):
    return decode_latex.__wrapped__(source)  # the shortcut itself, not a remembered result


@settings(max_examples=3000, derandomize=True, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=14))
def test_generated_strings_decode_as_pybtex_does(source):
    """Any string decodes to pybtex's Text (or fails with pybtex's error)."""
    assert outcome(undecorated, source) == outcome(Text.from_latex, source)


# Pieces of names and values around accent groups, en dashes and ties, which the decoder
# decodes one by one (the rest must be text latexcodec leaves alone), and what could upset that.
PIECES = [
    "a", "Z", "9", ".", "é", " ", "  ", "{", "}", "{x}", "-", "--", "---", "~", "\\~", "'",
    "`", ",", "!", "?", "%", "$", "#", "\t", "\n", "\\", "\\'", "{\\'e}", '{\\"u}',
    "{\\c c}", "{\\ss}", "{\\L}", "{\\'\\i}", "{\\~n}", "{\\relax Ch}", "{\\v{c}}",
    "{\\o}", "{\\`a}", "{\\^o}", "{\\=a}", "{\\.z}", "{\\u g}", "{\\H o}", "{\\textit x}",
    "{\\em x}", "{\\'}", "{\\ }", "{\\\\}", "{\\%}", "{\\$}", "{\\'{e}}", "{\\t oo}",
    "{\\ldots}", "{\\TeX}", "{\\'a}--", "\ue000",
]  # fmt: skip


@settings(max_examples=3000, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8).map("".join))
def test_accent_groups_decode_as_pybtex_does(source):
    """Values with accent groups, dashes and ties decode to pybtex's Text (or its error)."""
    memo_clear()
    assert outcome(undecorated, source) == outcome(Text.from_latex, source)


@settings(max_examples=2000, derandomize=True, deadline=None)
@given(st.text(alphabet="ab {}{}{}\n", max_size=12))
def test_braces_parse_as_pybtex_does(source):
    """parse_braces gives pybtex's LaTeXParser Text, Protected parts and lengths included."""
    assert structure(parse_braces, source) == structure(
        lambda text: LaTeXParser(text).parse(), source
    )


def structure(parse, source: str):
    try:
        text = parse(source)
    except Exception as error:  # noqa: BLE001 - the error itself is what is compared
        return f"{type(error).__name__}: {error}"
    return repr(text), len(text), [(type(part), len(part)) for part in text.parts]


def test_real_values_decode_as_pybtex_does():
    """Every field value and name part of the sample and demo files decodes as in pybtex."""
    checked = 0
    for path in BIB_FILES:
        for parsed in parse_bibtex(path.read_text(encoding="utf-8")).entries:
            entry = make_entry(parsed.key, parsed.entry_type, parsed.fields, parsed.persons)
            values = list(entry.fields.values())
            for people in entry.persons.values():
                for person in people:
                    values += person.first_names + person.middle_names + person.last_names
                    values += person.prelast_names + person.lineage_names
            for value in values:
                assert outcome(undecorated, value) == outcome(Text.from_latex, value), value
                checked += 1
    assert checked > 1000


def test_decoded_once_per_string():
    """A string met again is not decoded again, until the memories are cleared."""
    memo_clear()
    first = decode_latex(r"Sch{\"o}lkopf")
    assert decode_latex(r"Sch{\"o}lkopf") is first
    assert decode_latex.cache_info().hits == 1
    memo_clear()
    assert decode_latex.cache_info().currsize == 0
