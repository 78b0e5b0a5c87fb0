"""bibliography.styles.persons: parse_person gives pybtex's Person parts, for less.

Compared with pybtex's `Person(name)` on generated names made of the pieces pybtex's parser
treats specially (commas, braces, backslashes, ties, control spaces, von particles, Unicode
spaces), on the benchmark's synthetic names and on every name of the sample, demo and example
site bibliographies.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pybtex.database import Person

from bibliography.parsing import parse_bibtex
from bibliography.styles.memo import memo_clear, person_key
from bibliography.styles.persons import parse_person

ROOT = Path(__file__).resolve().parents[2]
BIB_FILES = [
    ROOT / "tests/bibliography/golden/sample.bib",
    *sorted((ROOT / "demo/assets/bib").glob("*.bib")),
    *sorted(Path("/work/shared/reference/scidraft-exampleSite/assets/bib").glob("*.bib")),
]
PIECES = [
    "a", "B", "Jr", "von", "de", "van der", "É", "é", "ß", "1", ".", "-", "'", '"',
    " ", "  ", "\t", "\n", "\xa0", "\u2003", ",", ", ", "~", "\\ ", "\\~", "\\", "{", "}",
    "{\\'e}", '{\\"u}', "{\\L}", "{\\ss}", "{\\relax Ch}", "{Van}", "{von}", "{\\v c}",
    "\\v{c}", "{{\\'e}}", "{{{x}}}", "\ue000",
]  # fmt: skip


def parts(person) -> tuple:
    return (
        person.first_names,
        person.middle_names,
        person.prelast_names,
        person.last_names,
        person.lineage_names,
    )


def outcome(parse, name: str):
    """The parts, or the error; pybtex's warning about too many commas is not compared."""
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            return parts(parse(name))
        except Exception as error:  # noqa: BLE001 - the error itself is what is compared
            return f"{type(error).__name__}: {error}"


@settings(max_examples=2000, derandomize=True, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=10).map("".join))
def test_generated_names_parse_as_pybtex_does(name):
    """Any name splits into the same first, middle, von, last and lineage parts as pybtex's."""
    memo_clear()
    assert outcome(parse_person, name) == outcome(Person, name)


def real_names() -> set[str]:
    names = set()
    for path in BIB_FILES:
        for entry in parse_bibtex(path.read_text(encoding="utf-8")).entries:
            for people in entry.persons.values():
                names.update(people)
    return names


def test_real_names_parse_as_pybtex_does():
    """Every name of the sample, demo and example site files parses as in pybtex."""
    names = real_names()
    assert len(names) > 100
    for name in names:
        assert outcome(parse_person, name) == outcome(Person, name), name


FAMILIES = ["Knuth", 'M{\\"u}ller', "Garc{\\'\\i}a", "van der Berg", "de la Cruz", "Stra{\\ss}e"]
GIVEN = ["Donald E.", "Andr{\\'e}", "Fran{\\c c}ois", "{\\L}ukasz", "Anna K.", "S{\\o}ren"]
EXTRA = ["", " A.", " de", " van", " Jean-Pierre"]


def test_benchmark_shaped_names_parse_as_pybtex_does():
    """Names shaped as the benchmark's (`Family, Given I.`, accents in braces, particles),
    and the same names written `Given Family` and `Family, Jr, Given`, parse as in pybtex."""
    for family in FAMILIES:
        for given_names in GIVEN:
            for extra in EXTRA:
                for name in (
                    f"{family}, {given_names}{extra}",
                    f"{given_names}{extra} {family}",
                    f"{family}, Jr, {given_names}{extra}",
                ):
                    assert outcome(parse_person, name) == outcome(Person, name), name


def test_memo_key_is_person_key():
    """The key a parsed person carries is the key computed from its parts."""
    person = parse_person("van der Berg, Jr, Jean-Pierre A.")
    computed = person_key(Person("van der Berg, Jr, Jean-Pierre A."))
    assert person.memo_key == computed
    assert person_key(person) == computed
