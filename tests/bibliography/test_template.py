"""bibliography.styles.template: the project's template nodes give pybtex's rich text.

Each node is compared with pybtex's node of the same name on the same template and entries
(including the FieldIsMissing a missing field raises), `rich_text` with pybtex's Text
constructor, and the BibTeX styles' name formatting with pybtex's plain name style.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pybtex.exceptions import PybtexError
from pybtex.richtext import HRef, Protected, String, Symbol, Tag, Text, nbsp
from pybtex.style import template as pybtex_template
from pybtex.style.formatting import BaseStyle
from pybtex.style.formatting import toplevel as pybtex_toplevel
from pybtex.style.names.plain import NameStyle as PybtexPlainNames

from bibliography.parsing import parse_bibtex
from bibliography.styles import make_entry
from bibliography.styles import template as ours
from bibliography.styles.base import LenientMixin, TemplateCache
from bibliography.styles.bibtex import PlainNames

ROOT = Path(__file__).resolve().parents[2]
BIB_FILES = [
    ROOT / "tests/bibliography/golden/sample.bib",
    *sorted((ROOT / "demo/assets/bib").glob("*.bib")),
]


def entries():
    found = []
    for path in BIB_FILES:
        for parsed in parse_bibtex(path.read_text(encoding="utf-8")).entries:
            found.append(make_entry(parsed.key, parsed.entry_type, parsed.fields, parsed.persons))
    return found


ENTRIES = entries()


def outcome(template, entry):
    """What formatting gives: the Text, or the message of the error it raises."""
    context = {"entry": entry, "style": NAMES_STYLE, "bib_data": None}
    try:
        return template.format_data(context)
    except PybtexError as error:  # FieldIsMissing, or LaTeX pybtex cannot parse
        return f"{type(error).__name__}: {error}"


class PlainStyleForNames(BaseStyle):
    default_name_style = "plain"


NAMES_STYLE = PlainStyleForNames()  # `names` formats each person with the style's name style


def templates(nodes):
    """The same templates, built from pybtex's nodes or from the project's."""
    n = nodes
    top = nodes.get("toplevel", pybtex_toplevel)
    pages = n["field"]("pages")
    return [
        n["join"](sep=", ", sep2=" and ", last_sep=", and ")[
            n["field"]("title"), n["optional_field"]("year"), "x", ""
        ],
        n["join"][n["field"]("volume"), n["optional"]["(", n["field"]("number"), ")"], ":", pages],
        n["words"][n["optional_field"]("month"), n["field"]("year")],
        n["words"](sep=" / ")["a", n["optional_field"]("publisher"), "b"],
        n["together"]["chapter", n["field"]("chapter")],
        n["together"]["pages", pages],
        n["together"](last_tie=True)["a", "very", "long", n["optional_field"]("address")],
        n["together"]["Volume", n["optional_field"]("volume")],
        n["sentence"][n["field"]("title"), n["optional_field"]("note")],
        n["sentence"](capfirst=True)[n["optional_field"]("series"), "of things"],
        n["sentence"](capitalize=True, sep=" ")[n["optional_field"]("title"), "END"],
        n["sentence"](add_period=False)[n["optional_field"]("howpublished"), "x"],
        n["sentence"]["Done!", n["optional_field"]("year")],
        n["sentence"][n["tag"]("em")[n["field"]("title")]],
        n["first_of"][n["optional_field"]("organization"), n["field"]("publisher"), "none"],
        n["first_of"][n["optional"][n["field"]("nothere")], n["field"]("also-missing")],
        n["optional"][n["field"]("title"), n["field"]("nothere")],
        n["names"]("author", sep=", ", sep2=" and ", last_sep=", and "),
        n["sentence"][n["names"]("editor", sep=", ", sep2=" and ", last_sep=", and ")],
        n["tag"]("strong")[n["optional_field"]("journal"), " ", n["optional_field"]("year")],
        n["href"](n["join"]["https://doi.org/", n["field"]("doi", raw=True)])[
            n["join"]["doi:", n["field"]("doi", raw=True)]
        ],
        top[
            n["sentence"][n["names"]("author")],
            n["sentence"][n["field"]("title", apply_func=lambda text: text.capitalize())],
            n["optional"][n["field"]("url", raw=True)],
            n["sentence"][n["optional_field"]("note")],
        ],
    ]


NODE_NAMES = ["join", "words", "together", "sentence", "optional", "first_of", "field"]
NODE_NAMES += ["optional_field", "names", "tag", "href"]
PYBTEX_NODES = {name: getattr(pybtex_template, name) for name in NODE_NAMES}
OUR_NODES = {name: getattr(ours, name) for name in NODE_NAMES} | {"toplevel": ours.toplevel}


@pytest.mark.parametrize("number", range(len(templates(OUR_NODES))))
def test_nodes_give_pybtex_results(number):
    """Each template gives the same Text (or the same missing field) with either set of nodes,
    for every entry of the sample and demo files."""
    pybtex_template_ = templates(PYBTEX_NODES)[number]
    our_template = templates(OUR_NODES)[number]
    for entry in ENTRIES:
        expected = outcome(pybtex_template_, entry)
        assert outcome(our_template, entry) == expected, entry.key


def test_either_chooses_per_entry():
    """`either` formats its first child when the test holds for the entry, else its second."""
    chooser = ours.either(lambda entry: "doi" in entry.fields)[
        ours.field("doi", raw=True), "no doi"
    ]
    with_doi = make_entry("a", "misc", {"doi": "10.1/x"}, {})
    without = make_entry("b", "misc", {}, {})
    assert outcome(chooser, with_doi) == "10.1/x"
    assert outcome(chooser, without) == "no doi"


LEAVES = st.one_of(
    st.sampled_from(["", " ", "a", "B.", "x y", ", "]),
    st.sampled_from([String("s"), String(""), nbsp, Symbol("newblock")]),
    st.builds(lambda text: Tag("em", text), st.sampled_from(["", "e", "f g"])),
    st.builds(lambda text: Protected(text), st.sampled_from(["", "P", "q r"])),
    st.builds(lambda text: HRef("https://x.org/", text), st.sampled_from(["l", "m"])),
)
PARTS = st.recursive(
    LEAVES, lambda children: st.lists(children, max_size=4).map(lambda p: Text(*p)), max_leaves=8
)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.lists(PARTS, max_size=6))
def test_rich_text_is_pybtex_text(parts):
    """rich_text(*parts) is Text(*parts): same parts, same length, same HTML."""
    built = ours.rich_text(*parts)
    expected = Text(*parts)
    assert built == expected
    assert type(built) is Text
    assert len(built) == len(expected)
    assert built.render_as("html") == expected.render_as("html")


@settings(max_examples=400, derandomize=True, deadline=None)
@given(st.lists(PARTS, max_size=5))
def test_capitalize_and_capfirst_are_pybtex_s(parts):
    """text_capitalize and text_capfirst give pybtex's Text.capitalize() and capfirst()."""
    text = Text(*parts)
    for ours_, pybtex_s in (
        (ours.text_capitalize, Text.capitalize),
        (ours.text_capfirst, Text.capfirst),
    ):
        built, expected = ours_(text), pybtex_s(text)
        assert built == expected
        assert len(built) == len(expected)
        assert built.render_as("html") == expected.render_as("html")


@settings(max_examples=200, derandomize=True, deadline=None)
@given(PARTS, st.lists(PARTS, max_size=5))
def test_joined_text_is_pybtex_join(separator, parts):
    """joined_text(sep, parts) is Text(sep).join(parts)."""
    assert ours.joined_text(separator, parts) == Text(separator).join(parts)


def test_rich_text_refuses_what_text_refuses():
    """A part that is neither a string nor rich text raises pybtex's TypeError."""
    with pytest.raises(TypeError):
        Text(3)
    with pytest.raises(TypeError):
        ours.rich_text("a", 3)


@pytest.mark.parametrize("abbreviate", [False, True])
def test_plain_names_are_pybtex_plain_names(abbreviate):
    """The BibTeX styles' names equal pybtex's plain name style for every person of the
    sample and demo files, full or abbreviated."""
    persons = [
        person for entry in ENTRIES for people in entry.persons.values() for person in people
    ]
    assert len(persons) > 100
    for person in persons:
        expected = PybtexPlainNames().format(person, abbreviate).format_data(None)
        assert PlainNames().format(person, abbreviate) == expected, str(person)


def test_cached_template_must_not_read_the_entry():
    """Templates are built once per entry type: one that reads its entry fails loudly instead
    of giving every entry the first one's layout."""

    class Careless(LenientMixin, TemplateCache, BaseStyle):
        def get_article_template(self, e):
            return pybtex_template.join[ours.field("title")] if "title" in e.fields else None

    with pytest.raises(TypeError, match="decide on the entry in a node"):
        Careless().format_entry("", make_entry("k", "article", {"title": "T"}, {}))
