"""'Cite this note' formats: BibTeX, RIS and CSL-JSON describing a note."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from bibliography.exports import (
    CitableWork,
    Person,
    bibtex_with_macros,
    to_bibtex,
    to_ris,
)
from bibliography.parsing import parse_bibtex

WORK = CitableWork(
    key="softmax-shift",
    title="Softmax & the 100% {shift} lemma",
    authors=(Person("Ada Novak"), Person("Tomás Ríos")),
    date=dt.datetime(2026, 9, 22, 7, 20, tzinfo=dt.timezone(dt.timedelta(hours=9))),
    site="Halden Notes",
    url="https://notes.example/notes/softmax-shift/",
    accessed=dt.date(2026, 11, 29),
    summary="Adding a constant\nchanges nothing.",
)


def test_bibtex_is_an_online_entry_that_pybtex_reads_back():
    """The BibTeX export parses, with escaped specials and "Family, Given" authors."""
    text = to_bibtex(WORK)
    assert text.startswith("@online{Novak2026-softmax-shift,")
    (entry,) = parse_bibtex(text).entries
    assert entry.persons["author"] == ["Novak, Ada", "Ríos, Tomás"]
    assert entry.fields["title"] == r"{Softmax \& the 100\% \{shift\} lemma}"
    assert entry.fields["url"] == WORK.url and entry.fields["year"] == "2026"


def test_a_handle_is_kept_whole_as_a_corporate_author():
    """A site handle (no given name) is braced so BibTeX does not split it."""
    work = CitableWork(**{**WORK.__dict__, "authors": (Person("halden-lab", is_handle=True),)})
    assert "author = {{halden-lab}}" in to_bibtex(work)


def test_ris_has_one_tag_per_line_and_no_stray_line_breaks():
    """RIS: TY first, one AU per author, ER last, CRLF lines; line breaks in values flattened."""
    lines = to_ris(WORK).split("\r\n")
    assert lines[0] == "TY  - ELEC" and lines[-2] == "ER  - " and lines[-1] == ""
    assert "AU  - Novak, Ada" in lines and "AU  - Ríos, Tomás" in lines
    assert "AB  - Adding a constant changes nothing." in lines
    assert "DA  - 2026/09/22" in lines


def test_csl_json_is_the_bibtex_export_through_citation_js():
    """CSL-JSON: the note's BibTeX entry mapped by citation-js, as every reference list is:
    family/given authors, issued and accessed date parts, the site as publisher, the URL."""
    from notes.citing import work_csl_json

    (item,) = json.loads(work_csl_json(WORK))
    assert item["type"] == "webpage" and item["id"] == "Novak2026-softmax-shift"
    assert item["author"][1] == {"family": "Ríos", "given": "Tomás"}
    assert item["issued"] == {"date-parts": [[2026, 9, 22]]}
    assert item["accessed"] == {"date-parts": [[2026, 11, 29]]}
    assert item["title"] == "Softmax & the 100% {shift} lemma"
    assert item["publisher"] == "Halden Notes" and item["URL"] == WORK.url


def test_entries_using_macros_bring_their_string_definitions():
    """An exported entry that uses @string macros parses on its own."""
    raw = '@string{jasa = "J. Am. Stat. Assoc."}\n@string{unused = "x"}\n'
    entry = "@article{k, title={T}, journal = jasa, year=1992}"
    text = bibtex_with_macros([entry], [raw])
    assert "unused" not in text
    (parsed,) = parse_bibtex(text).entries
    assert parsed.fields["journal"] == "J. Am. Stat. Assoc."


def test_scholar_reference_decodes_each_value_once_and_gives_the_same_text():
    """Scholar references decode LaTeX (latexcodec, slow) for every entry of an upload: a value
    decoded once is remembered, and the remembered text is what decoding gives."""
    from types import SimpleNamespace

    from bibliography.exports import _decoded, scholar_reference

    entry = SimpleNamespace(
        fields={"title": r"Sch{\"o}nhage's {FFT}", "year": "1971", "journal": "Computing"},
        persons={"author": [r"Sch{\"o}nhage, Arnold"]},
    )
    first = scholar_reference(entry)
    hits = _decoded.cache_info().hits
    assert scholar_reference(entry) == first
    assert _decoded.cache_info().hits == hits + 3  # title, author and journal: none decoded again
    assert "citation_title=Schönhage's FFT" in first
    assert "citation_author=Schönhage, Arnold" in first


def test_cite_this_note_formats_any_title_and_summary():
    """A title or summary that would derail a BibTeX parser (an `@entry{` line, braces,
    percent signs) still gives the formatted citation: the entry is built from the fields,
    not parsed back from the text (the XSS corpus found it: a 500 on the note page)."""
    from types import SimpleNamespace

    from notes.citing import work_reference_html

    work = CitableWork(
        **{
            **WORK.__dict__,
            "title": "}{ 100% <script>alert(1)</script>",
            "summary": "line\n@misc{evil,\n title = {",
        }
    )
    site = SimpleNamespace(citation_style="vancouver", language_code="en-us")
    cited = work_reference_html(work, site)
    assert cited.startswith("Novak A, Ríos T. }{ 100% &lt;script&gt;")
    assert "<script" not in cited


@pytest.mark.parametrize(
    "value",
    [
        r"Sch\"onhage und Stra\ss en",
        r"G\"{o}del, Kurt",
        r"{\O}rsted, H. C. and \O rsted",
        r"Erd{\H o}s and {\v{C}}ech",
        r"Fran\c{c}ois and \c c",
        r"Garc{\'\i}a, Ana and Y{\i}lmaz",
        r"{\aa}ngstr{\"o}m {\l}ukasiewicz {\ae}ther",
        r"\'{\i}ndice \~{n} \^o \`a \=a \.z \u{g} \r{u} \k{a}",
        r"Pages 10--20 and ``quoted'' ?`y !`",
        r"50% of {BERT} with $\alpha$ and \emph{words}",
        r"\ldots and \i\j",
        "Plain {Title} with   spaces",
    ],
)
def test_scholar_values_decode_as_pybtex_does_with_or_without_latexcodec(value):
    """Accented letters are decoded by a quick way, each spelling once; the text is what
    pybtex and latexcodec give for the whole value."""
    from pybtex.richtext import Text

    from bibliography.exports import _decoded

    assert _decoded.__wrapped__(value) == str(Text.from_latex(value))
