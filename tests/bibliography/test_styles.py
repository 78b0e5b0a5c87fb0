"""Citation styles (bibliography.styles): each style, each entry type, labels, real files."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from bibliography.formatting import EntryData, ParsedBibliography, format_entries
from bibliography.parsing import parse_bibtex
from bibliography.styles import (
    STYLE_CHOICES,
    STYLES,
    HtmlBackend,
    VancouverStyle,
    get_style,
    make_entry,
    style_labels,
)

BIB_FILES = sorted(Path(__file__).resolve().parents[2].glob("demo/assets/bib/*.bib")) + sorted(
    Path("/work/shared/reference/scidraft-exampleSite/assets/bib").glob("*.bib")
)

ENTRIES = {
    "article": (
        "article",
        {
            "title": r"Attention for {BERT} in Sch{\"o}lkopf's view",
            "journal": "Journal of Machine Learning Research",
            "year": "2017",
            "volume": "18",
            "number": "3",
            "pages": "357--362",
            "doi": "10.1000/xyz123",
        },
        {
            "author": [
                "Vaswani, Ashish",
                "Shazeer, Noam M.",
                "van der Walt, St{\\'e}fan J.",
                "Gomez, Jean-Pierre",
            ]
        },
    ),
    "book": (
        "book",
        {
            "title": "The Art of Computer Programming",
            "publisher": "Addison-Wesley",
            "address": "Reading, MA",
            "year": "1984",
            "edition": "3",
        },
        {"author": ["Knuth, Donald E."]},
    ),
    "inproceedings": (
        "inproceedings",
        {
            "title": "Active Prompting",
            "booktitle": "Proceedings of ACL",
            "publisher": "ACL",
            "address": "Stroudsburg, PA",
            "year": "2024",
            "pages": "1330--1350",
        },
        {"author": ["Diao, Shizhe", "Zhang, Tong"], "editor": ["Ku, Lun-Wei", "Martins, Andre"]},
    ),
    "incollection": (
        "incollection",
        {
            "title": "{WaveLab} and Reproducible Research",
            "booktitle": "Wavelets and Statistics",
            "publisher": "Springer",
            "address": "New York",
            "year": "1995",
            "pages": "55--81",
        },
        {
            "author": ["Buckheit, Jonathan B.", "Donoho, David L."],
            "editor": ["Antoniadis, Anestis"],
        },
    ),
    "techreport": (
        "techreport",
        {
            "title": "The {PageRank} Citation Ranking",
            "institution": "Stanford InfoLab",
            "address": "Stanford, CA",
            "year": "1999",
            "number": "1999-66",
        },
        {"author": ["Page, Lawrence", "Brin, Sergey"]},
    ),
    "phdthesis": (
        "phdthesis",
        {
            "title": "{Bayesian} Learning for Neural Networks",
            "school": "University of Toronto",
            "address": "Toronto",
            "year": "1995",
        },
        {"author": ["Neal, Radford M."]},
    ),
    "misc": (
        "misc",
        {
            "title": "{MathJax} Documentation",
            "publisher": "MathJax Consortium",
            "year": "2026",
            "url": "https://docs.mathjax.org/",
            "urldate": "2026-09-18",
        },
        {"author": ["Cervone, Davide P."]},
    ),
    "manual": (
        "manual",
        {"title": "{BibTeXing}", "organization": "CTAN", "year": "1988"},
        {"author": ["Patashnik, Oren"]},
    ),
}

EXPECTED = {
    "vancouver": {
        "article": "Vaswani A, Shazeer NM, van der Walt SJ, Gomez JP. Attention for BERT in Schölkopf's view. Journal of Machine Learning Research. 2017;18(3):357–362. doi:10.1000/xyz123",  # noqa: E501
        "book": "Knuth DE. The Art of Computer Programming. 3rd ed. Reading, MA: Addison-Wesley; 1984.",  # noqa: E501
        "inproceedings": "Diao S, Zhang T. Active Prompting. In: Ku LW, Martins A, editors. Proceedings of ACL. Stroudsburg, PA: ACL; 2024. p. 1330–1350.",  # noqa: E501
        "incollection": "Buckheit JB, Donoho DL. WaveLab and Reproducible Research. In: Antoniadis A, editor. Wavelets and Statistics. New York: Springer; 1995. p. 55–81.",  # noqa: E501
        "techreport": "Page L, Brin S. The PageRank Citation Ranking. Stanford, CA: Stanford InfoLab; 1999. Report No.: 1999-66.",  # noqa: E501
        "phdthesis": "Neal RM. Bayesian Learning for Neural Networks [dissertation]. Toronto: University of Toronto; 1995.",  # noqa: E501
        "misc": "Cervone DP. MathJax Documentation [Internet]. MathJax Consortium; 2026 [cited 2026-09-18]. Available from: https://docs.mathjax.org/",  # noqa: E501
        "manual": "Patashnik O. BibTeXing. CTAN; 1988.",
    },
    "plain": {
        "article": "Ashish Vaswani, Noam M. Shazeer, Stéfan J. van der Walt, and Jean-Pierre Gomez. Attention for BERT in schölkopf's view. Journal of Machine Learning Research, 18(3):357–362, 2017. doi:10.1000/xyz123.",  # noqa: E501
        "book": "Donald E. Knuth. The Art of Computer Programming. Addison-Wesley, Reading, MA, 3 edition, 1984.",  # noqa: E501
        "inproceedings": "Shizhe Diao and Tong Zhang. Active prompting. In Lun-Wei Ku and Andre Martins, editors, Proceedings of ACL, 1330–1350. Stroudsburg, PA, 2024. ACL.",  # noqa: E501
        "incollection": "Jonathan B. Buckheit and David L. Donoho. WaveLab and reproducible research. In Anestis Antoniadis, editor, Wavelets and Statistics, pages 55–81. Springer, New York, 1995.",  # noqa: E501
        "techreport": "Lawrence Page and Sergey Brin. The PageRank citation ranking. Technical Report 1999-66, Stanford InfoLab, Stanford, CA, 1999.",  # noqa: E501
        "phdthesis": "Radford M. Neal. Bayesian Learning for Neural Networks. PhD thesis, University of Toronto, Toronto, 1995.",  # noqa: E501
        "misc": "Davide P. Cervone. MathJax documentation. 2026. URL: https://docs.mathjax.org/ (visited on 2026-09-18).",  # noqa: E501
        "manual": "Oren Patashnik. BibTeXing. CTAN, 1988.",
    },
    "unsrt": {
        "article": "Ashish Vaswani, Noam M. Shazeer, Stéfan J. van der Walt, and Jean-Pierre Gomez. Attention for BERT in schölkopf's view. Journal of Machine Learning Research, 18(3):357–362, 2017. doi:10.1000/xyz123.",  # noqa: E501
        "book": "Donald E. Knuth. The Art of Computer Programming. Addison-Wesley, Reading, MA, 3 edition, 1984.",  # noqa: E501
        "inproceedings": "Shizhe Diao and Tong Zhang. Active prompting. In Lun-Wei Ku and Andre Martins, editors, Proceedings of ACL, 1330–1350. Stroudsburg, PA, 2024. ACL.",  # noqa: E501
        "incollection": "Jonathan B. Buckheit and David L. Donoho. WaveLab and reproducible research. In Anestis Antoniadis, editor, Wavelets and Statistics, pages 55–81. Springer, New York, 1995.",  # noqa: E501
        "techreport": "Lawrence Page and Sergey Brin. The PageRank citation ranking. Technical Report 1999-66, Stanford InfoLab, Stanford, CA, 1999.",  # noqa: E501
        "phdthesis": "Radford M. Neal. Bayesian Learning for Neural Networks. PhD thesis, University of Toronto, Toronto, 1995.",  # noqa: E501
        "misc": "Davide P. Cervone. MathJax documentation. 2026. URL: https://docs.mathjax.org/ (visited on 2026-09-18).",  # noqa: E501
        "manual": "Oren Patashnik. BibTeXing. CTAN, 1988.",
    },
    "alpha": {
        "article": "Ashish Vaswani, Noam M. Shazeer, Stéfan J. van der Walt, and Jean-Pierre Gomez. Attention for BERT in schölkopf's view. Journal of Machine Learning Research, 18(3):357–362, 2017. doi:10.1000/xyz123.",  # noqa: E501
        "book": "Donald E. Knuth. The Art of Computer Programming. Addison-Wesley, Reading, MA, 3 edition, 1984.",  # noqa: E501
        "inproceedings": "Shizhe Diao and Tong Zhang. Active prompting. In Lun-Wei Ku and Andre Martins, editors, Proceedings of ACL, 1330–1350. Stroudsburg, PA, 2024. ACL.",  # noqa: E501
        "incollection": "Jonathan B. Buckheit and David L. Donoho. WaveLab and reproducible research. In Anestis Antoniadis, editor, Wavelets and Statistics, pages 55–81. Springer, New York, 1995.",  # noqa: E501
        "techreport": "Lawrence Page and Sergey Brin. The PageRank citation ranking. Technical Report 1999-66, Stanford InfoLab, Stanford, CA, 1999.",  # noqa: E501
        "phdthesis": "Radford M. Neal. Bayesian Learning for Neural Networks. PhD thesis, University of Toronto, Toronto, 1995.",  # noqa: E501
        "misc": "Davide P. Cervone. MathJax documentation. 2026. URL: https://docs.mathjax.org/ (visited on 2026-09-18).",  # noqa: E501
        "manual": "Oren Patashnik. BibTeXing. CTAN, 1988.",
    },
    "author-year": {
        "article": "Vaswani, A., Shazeer, N. M., van der Walt, S. J., & Gomez, J.-P. (2017). Attention for BERT in Schölkopf's view. Journal of Machine Learning Research, 18(3), 357–362. https://doi.org/10.1000/xyz123",  # noqa: E501
        "book": "Knuth, D. E. (1984). The Art of Computer Programming (3rd ed.). Addison-Wesley.",
        "inproceedings": "Diao, S., & Zhang, T. (2024). Active Prompting. In L.-W. Ku & A. Martins (Eds.), Proceedings of ACL (pp. 1330–1350). ACL.",  # noqa: E501
        "incollection": "Buckheit, J. B., & Donoho, D. L. (1995). WaveLab and Reproducible Research. In A. Antoniadis (Ed.), Wavelets and Statistics (pp. 55–81). Springer.",  # noqa: E501
        "techreport": "Page, L., & Brin, S. (1999). The PageRank Citation Ranking (Report No. 1999-66). Stanford InfoLab.",  # noqa: E501
        "phdthesis": "Neal, R. M. (1995). Bayesian Learning for Neural Networks [Doctoral dissertation, University of Toronto].",  # noqa: E501
        "misc": "Cervone, D. P. (2026). MathJax Documentation. MathJax Consortium. https://docs.mathjax.org/",  # noqa: E501
        "manual": "Patashnik, O. (1988). BibTeXing. CTAN.",
    },
}


def render(style: str, key: str, entry_type: str, fields: dict, persons: dict) -> str:
    entry = make_entry(key, entry_type, fields, persons)
    return get_style(style).format_entry("", entry).text.render(HtmlBackend())


def plain(markup: str) -> str:
    text = html.unescape(re.sub(r"<[^>]+>", "", markup))
    return text.replace("\n", " ").replace("\xa0", " ")


def entry_text(style: str, name: str) -> str:
    entry_type, fields, persons = ENTRIES[name]
    return plain(render(style, name, entry_type, fields, persons))


@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize("name", list(ENTRIES))
def test_entry_types(style, name):
    """Each style formats each entry type exactly as expected (tags stripped)."""
    assert entry_text(style, name) == EXPECTED[style][name]


@pytest.mark.parametrize("style", list(STYLES))
def test_doi_becomes_link(style):
    """A DOI is a link to https://doi.org/…."""
    entry_type, fields, persons = ENTRIES["article"]
    assert '<a href="https://doi.org/10.1000/xyz123">' in render(
        style, "a", entry_type, fields, persons
    )


@pytest.mark.parametrize("style", list(STYLES))
def test_url_becomes_link(style):
    """A URL is a link to itself."""
    entry_type, fields, persons = ENTRIES["misc"]
    assert '<a href="https://docs.mathjax.org/">https://docs.mathjax.org/</a>' in render(
        style, "m", entry_type, fields, persons
    )


@pytest.mark.parametrize("style", list(STYLES))
def test_unsafe_url_not_linked_and_escaped(style):
    """javascript: URLs are not linked; quotes in URLs cannot break out of the attribute."""
    bad = render(style, "x", "misc", {"title": "T", "url": "javascript:alert(1)"}, {})
    assert "<a " not in bad
    quoted = render(style, "x", "misc", {"title": "T", "url": 'https://a.b/"onclick="x'}, {})
    assert 'href="https://a.b/&quot;onclick=&quot;x"' in quoted


def authors(count: int) -> list[str]:
    return [f"Family{chr(ord('A') + n)}, Given" for n in range(count)]


def test_vancouver_six_authors_listed():
    """Six authors are all listed, without et al."""
    text = plain(
        render("vancouver", "a", "article", {"title": "T", "year": "2000"}, {"author": authors(6)})
    )
    assert text.startswith("FamilyA G, FamilyB G, FamilyC G, FamilyD G, FamilyE G, FamilyF G. T.")


def test_vancouver_seven_authors_et_al():
    """Seven authors give the first six, then et al."""
    text = plain(
        render("vancouver", "a", "article", {"title": "T", "year": "2000"}, {"author": authors(7)})
    )
    assert text.startswith(
        "FamilyA G, FamilyB G, FamilyC G, FamilyD G, FamilyE G, FamilyF G, et al. T."
    )
    assert "FamilyG" not in text


def test_vancouver_and_others_is_et_al():
    """`and others` in BibTeX is et al."""
    text = plain(
        render("vancouver", "a", "misc", {"title": "T"}, {"author": ["Paszke, Adam", "others"]})
    )
    assert text == "Paszke A, et al. T."


def test_vancouver_names():
    """Initials without periods, hyphenated given names, particles and lineage."""
    persons = {
        "author": [
            "Harris, Charles R.",
            "Jean-Pierre Gomez",
            "van der Walt, St{\\'e}fan J.",
            "Bau, III, David",
        ]
    }
    text = plain(render("vancouver", "a", "misc", {"title": "T"}, persons))
    assert text == "Harris CR, Gomez JP, van der Walt SJ, Bau D III. T."


def test_vancouver_article_missing_parts():
    """Missing volume, issue or pages drop their punctuation."""
    base = {"title": "T", "journal": "J", "year": "2001"}
    assert (
        plain(render("vancouver", "a", "article", {**base, "volume": "4", "pages": "1--9"}, {}))
        == "T. J. 2001;4:1–9."
    )
    assert plain(render("vancouver", "a", "article", base, {})) == "T. J. 2001."
    with_month = {**base, "month": "4~March", "volume": "4"}
    assert plain(render("vancouver", "a", "article", with_month, {})) == "T. J. 2001 Mar 4;4."


@pytest.mark.parametrize("style", list(STYLES))
def test_accents_decoded(style):
    """LaTeX accents are decoded: Sch{\\"o}lkopf → Schölkopf."""
    text = plain(
        render(
            style,
            "a",
            "book",
            {"title": "Kernels", "publisher": "MIT", "year": "2002"},
            {"author": ['Sch{\\"o}lkopf, Bernhard']},
        )
    )
    assert "Schölkopf" in text


@pytest.mark.parametrize("style", list(STYLES))
def test_protected_braces_keep_case(style):
    """`{BERT}` loses its braces and keeps its case, even in sentence-case styles."""
    markup = render(
        style, "a", "article", {"title": "{BERT} pre-training", "journal": "J", "year": "2019"}, {}
    )
    assert "BERT pre-training" in plain(markup)
    assert "{" not in markup


@pytest.mark.parametrize("style", list(STYLES))
def test_math_in_titles(style):
    """Decision: `$\\alpha$` becomes α (pybtex's decoding); other math stays TeX, case kept."""
    fields = {"title": r"Tuning $\alpha$ in $O(N^2)$ time", "journal": "J", "year": "2019"}
    text = plain(render(style, "a", "article", fields, {}))
    assert "α in $O(N^2)$ time" in text


@pytest.mark.parametrize("style", list(STYLES))
def test_latex_text_commands(style):
    """`\\emph{…}` becomes <em>, `\\url{…}` in howpublished a link."""
    fields = {"title": r"The \emph{big} idea", "howpublished": r"\url{https://x.org/a\_b}"}
    markup = render(style, "a", "misc", fields, {})
    assert "<em>big</em>" in markup
    assert '<a href="https://x.org/a_b">' in markup


@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize(
    "entry_type", ["article", "book", "inproceedings", "techreport", "phdthesis", "nonsense"]
)
def test_missing_required_fields_do_not_raise(style, entry_type):
    """An entry without its required fields (or of an unknown type) still formats."""
    text = plain(render(style, "k", entry_type, {"title": "Only a title"}, {}))
    assert "Only a title" in text


def test_format_entries_uses_project_styles():
    """formatting.format_entries goes through get_style; unknown names give Vancouver."""
    data = [
        EntryData(
            "k",
            "article",
            {"title": "T", "journal": "J", "year": "2000", "volume": "1"},
            {"author": ["Doe, Jane"]},
        )
    ]
    assert format_entries(data, None)["k"] == format_entries(data, "vancouver")["k"]
    assert plain(format_entries(data, "no-such-style")["k"]) == "Doe J. T. J. 2000;1."


def test_get_style_fallback_and_registry():
    """get_style falls back to Vancouver; STYLE_CHOICES match the site setting's choices."""
    from scidraft.site.models import CITATION_STYLES

    assert isinstance(get_style(None), VancouverStyle)
    assert isinstance(get_style("bogus"), VancouverStyle)
    assert [key for key, _ in STYLE_CHOICES] == [key for key, _ in CITATION_STYLES] == list(STYLES)


def test_alpha_labels():
    """alpha gives BibTeX alpha labels, with a/b for clashes."""
    entries = [
        make_entry(
            "knuth", "book", {"title": "T", "year": "1984"}, {"author": ["Knuth, Donald E."]}
        ),
        make_entry(
            "kp1", "article", {"title": "A", "year": "1981"}, {"author": ["Knuth, D.", "Plass, M."]}
        ),
        make_entry(
            "kp2", "article", {"title": "B", "year": "1981"}, {"author": ["Knuth, D.", "Plass, M."]}
        ),
    ]
    assert style_labels("alpha", entries) == {"knuth": "Knu84", "kp1": "KP81a", "kp2": "KP81b"}


def test_author_year_labels():
    """author-year labels: one, two, three or more authors; no year; clashes."""
    entries = [
        make_entry(
            "one", "article", {"title": "A", "year": "2020"}, {"author": ["van der Walt, S."]}
        ),
        make_entry(
            "two", "article", {"title": "B", "year": "2019"}, {"author": ["Knuth, D.", "Plass, M."]}
        ),
        make_entry(
            "many",
            "article",
            {"title": "C", "year": "2018"},
            {"author": ['Sch{\\"o}lkopf, B.', "Smola, A.", "Doe, J."]},
        ),
        make_entry("nd", "misc", {"title": "D"}, {"author": ["Roe, R."]}),
        make_entry("x1", "article", {"title": "E", "year": "2001"}, {"author": ["Lee, K."]}),
        make_entry("x2", "article", {"title": "F", "year": "2001"}, {"author": ["Lee, K."]}),
    ]
    assert style_labels("author-year", entries) == {
        "one": "van der Walt 2020",
        "two": "Knuth & Plass 2019",
        "many": "Schölkopf et al. 2018",
        "nd": "Roe n.d.",
        "x1": "Lee 2001a",
        "x2": "Lee 2001b",
    }


@pytest.mark.parametrize("style", ["vancouver", "plain", "unsrt"])
def test_numbered_styles_have_no_labels(style):
    """Numbered styles give None from style_labels and {} from Bibliography.labels."""
    entry = make_entry("k", "article", {"title": "T", "year": "2000"}, {"author": ["Doe, J."]})
    assert style_labels(style, [entry]) is None
    parsed = ParsedBibliography(
        "bib/x.bib", parse_bibtex("@article{k, title={T}, author={Doe, J.}, year=2000}").entries
    )
    assert parsed.labels(["k"], style) == {}


def test_parsed_bibliography_labels():
    """ParsedBibliography.labels gives labels of the keys found, for label styles."""
    parsed = ParsedBibliography(
        "bib/x.bib",
        parse_bibtex("@book{knuth, title={T}, author={Knuth, Donald}, year=1984}").entries,
    )
    assert parsed.labels(["knuth", "missing"], "alpha") == {"knuth": "Knu84"}
    assert parsed.labels(["knuth"], "author-year") == {"knuth": "Knuth 1984"}


@pytest.mark.django_db
def test_stored_bibliography_labels():
    """StoredBibliography.labels reads the entries from the database."""
    from bibliography.formatting import StoredBibliography
    from bibliography.models import BibEntry, BibFile

    bibfile = BibFile.objects.create(name="bib/s.bib")
    BibEntry.objects.create(
        bibfile=bibfile,
        key="knuth",
        entry_type="book",
        fields={"title": "T", "year": "1984"},
        persons={"author": ["Knuth, Donald"]},
    )
    stored = StoredBibliography(bibfile)
    assert stored.labels(["knuth"], "alpha") == {"knuth": "Knu84"}
    assert stored.labels(["knuth"], "vancouver") == {}


def test_real_files_are_present():
    """The demo and example-site bibliographies are found (so the next test is not empty)."""
    assert len(BIB_FILES) >= 3


@pytest.mark.parametrize("style", list(STYLES))
@pytest.mark.parametrize("path", BIB_FILES, ids=lambda path: path.name)
def test_real_files_format_in_every_style(style, path):
    """Every entry of the real .bib files formats, non-empty, without the fallback text."""
    entries = parse_bibtex(path.read_text(encoding="utf-8")).entries
    assert entries
    data = [EntryData(e.key, e.entry_type, e.fields, e.persons) for e in entries]
    formatted = format_entries(data, style)
    assert set(formatted) == {e.key for e in entries}
    for key, markup in formatted.items():
        assert plain(markup).strip(), key
        assert "incomplete entry" not in markup, key
