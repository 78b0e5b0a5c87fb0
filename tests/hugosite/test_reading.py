"""Reading Hugo sites: front matter, dates, config, and the theme's real example site."""

from __future__ import annotations

import datetime as dt

import pytest

from hugosite.reading import (
    FrontMatterError,
    math_macros,
    note_from_front_matter,
    parse_date,
    read_site,
    site_config_from_mapping,
    split_front_matter,
)


def test_toml_front_matter_is_separated_from_the_body():
    """`+++` TOML front matter is parsed; the body starts on the line after the fence."""
    matter = split_front_matter('+++\ntitle = "A"\ntags = ["x"]\n+++\nBody $x$\n')
    assert matter.format == "toml"
    assert matter.data == {"title": "A", "tags": ["x"]}
    assert matter.body == "Body $x$\n"
    assert matter.body_line == 5


def test_yaml_front_matter_is_separated_from_the_body():
    """`---` YAML front matter is parsed too (standalone pages use it)."""
    matter = split_front_matter("---\ntitle: Search\nlayout: search\n---\n")
    assert matter.format == "yaml"
    assert matter.data["layout"] == "search"


def test_file_without_front_matter_is_all_body():
    """No fence: no metadata, the whole text is the body."""
    matter = split_front_matter("Just text.\n")
    assert matter.data == {} and matter.body == "Just text.\n" and matter.format is None


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('+++\ntitle = "A"\ndate = \n+++\n', 3, "invalid TOML"),  # value missing, on line 3
        ("---\ntitle: [unclosed\n---\n", None, "invalid YAML"),
        ('+++\ntitle = "A"\n', 1, "never closed"),
        ("---\n- a list\n---\n", 2, "table of keys"),
    ],
)
def test_broken_front_matter_names_the_line(text, line, words):
    """Broken front matter raises FrontMatterError with the file line where that is known."""
    with pytest.raises(FrontMatterError) as caught:
        split_front_matter(text)
    assert words in caught.value.message
    if line is not None:
        assert caught.value.line == line


def test_dates_keep_the_offset_they_were_written_in():
    """`2026-09-22T07:20:00+09:00` keeps +09:00 (540 minutes); a bare date is UTC midnight."""
    moment, offset = parse_date(dt.datetime.fromisoformat("2026-09-22T07:20:00+09:00"))
    assert offset == 540
    assert moment.astimezone(dt.UTC) == dt.datetime(2026, 9, 21, 22, 20, tzinfo=dt.UTC)
    bare, bare_offset = parse_date(dt.date(2026, 9, 20))
    assert bare == dt.datetime(2026, 9, 20, tzinfo=dt.UTC) and bare_offset is None
    from_text, text_offset = parse_date("2026-09-22T07:20:00Z")
    assert text_offset == 0 and from_text.hour == 7


def test_config_maps_params_menus_and_entry_sets():
    """hugo.toml keys, in any case, become settings, menu entries and entry sets."""
    config = site_config_from_mapping(
        {
            "title": "Lab",
            "baseURL": "https://lab.example/",
            "pagination": {"pagerSize": 6},
            "params": {
                "institute": "Inst",
                "author": "me",
                "ShowShareButtons": False,
                "recommendationCount": 0,
                "entrySets": {"math": {"titleField": "mathTitle", "countLabel": "Results"}},
                "feed": {"notesPerPage": 5, "promotionsPerPage": 1, "promotionPositions": "4"},
            },
            "menu": {
                "main": [
                    {"identifier": "ref", "name": "Reference", "weight": 20},
                    {"name": "Math A–Z", "parent": "ref", "url": "/a/", "params": {"note": "n"}},
                ]
            },
        }
    )
    assert config.settings["title"] == "Lab"
    assert config.settings["pager_size"] == 6
    assert config.settings["show_share_buttons"] is False
    assert config.settings["recommendation_count"] == 3  # 0 falls back to 3, as the theme does
    assert config.settings["notes_per_page"] == 5
    assert config.settings["promotion_positions"] == "4"
    assert config.entry_sets["math"]["title_field"] == "mathTitle"
    assert config.entry_sets["math"]["category_field"] == "entryCategory"
    child = config.menus[1]
    assert (child.identifier, child.parent, child.note) == ("math-a-z", "ref", "n")


def test_example_site_reads_without_problems(example_site):
    """All 70 notes, the standalone pages, both .bib files and the config of the theme's
    example site are read; no file is reported."""
    site = read_site(example_site)
    assert site.problems == []
    assert len(site.notes) == 70
    assert {page.slug for page in site.pages} >= {
        "about",
        "search",
        "math-a-to-z",
        "rendering-categories",
    }
    assert {bib.name for bib in site.bib_files} == {"bib/refs.bib", "bib/survey-refs-02.bib"}
    assert set(site.config.entry_sets) == {"math", "rendering"}
    assert site.config.settings["promotions_per_page"] == 1
    reference = [entry for entry in site.config.menus if entry.identifier == "working-with-ai"]
    assert reference and reference[0].url == ""


def test_example_note_fields_land_in_columns_and_params(example_site):
    """Known keys fill fields (any case); entry-set fields and unknown keys stay in params."""
    notes = {note.slug: note for note in read_site(example_site).notes}
    lemma = notes["demo-note-lemma-softmax-shift"]
    assert lemma.show_title is True and lemma.math is True
    assert lemma.params["mathTitle"] == "Softmax Is Invariant to a Shift"
    assert lemma.params["mathCategory"] == "Lemmas"
    assert lemma.date_offset_minutes == 540
    assert notes["promotion-textual-01"].promotion is True
    assert notes["demo-note-with-references"].show_title is False


def test_unreadable_files_are_reported_and_the_rest_is_read(tmp_path):
    """A note with broken front matter or bytes that are not UTF-8 is a problem; others load."""
    notes = tmp_path / "content" / "notes"
    notes.mkdir(parents=True)
    (tmp_path / "hugo.toml").write_text('title = "T"\n')
    (notes / "good.md").write_text('+++\ntitle = "Good"\n+++\nText\n')
    (notes / "broken.md").write_text('+++\ntitle = "Broken\n+++\nText\n')
    (notes / "binary.md").write_bytes(b"+++\ntitle = \xff\n+++\n")
    site = read_site(tmp_path)
    assert [note.slug for note in site.notes] == ["good"]
    reported = {problem.path: problem for problem in site.problems}
    assert reported["content/notes/broken.md"].line == 2
    assert "UTF-8" in reported["content/notes/binary.md"].message


@pytest.mark.parametrize(
    ("value", "latex"),
    [
        ("\\newcommand{\\R}{\\mathbb{R}}\n", "\\newcommand{\\R}{\\mathbb{R}}"),
        (["\\def\\a{a}", "\\def\\b{b}"], "\\def\\a{a}\n\\def\\b{b}"),
        ({"R": "\\mathbb{R}"}, "\\newcommand{\\R}{\\mathbb{R}}"),
        ({"norm": ["\\lVert #1 \\rVert", 1]}, "\\newcommand{\\norm}[1]{\\lVert #1 \\rVert}"),
        ({"opt": ["#1+#2", 2, "d"]}, "\\newcommand{\\opt}[2][d]{#1+#2}"),
        (None, ""),
    ],
)
def test_math_macros_are_read_from_every_shape_a_site_writes(value, latex):
    """LaTeX, a list of lines, and MathJax's tex.macros table (a body, or [body, arguments,
    default]) all become LaTeX definitions."""
    assert math_macros(value) == latex


def test_front_matter_math_macros_go_to_the_note_field():
    """`mathMacros` in front matter (any case) is the note's preamble, not a kept param."""
    matter = split_front_matter('+++\ntitle = "A"\nmathmacros = "\\\\def\\\\x{y}"\n+++\nBody\n')
    note = note_from_front_matter("content/notes/a.md", "a", matter)
    assert note.math_macros == "\\def\\x{y}"
    assert "mathmacros" not in note.params


def test_site_math_macros_come_from_params_or_a_mathjax_configuration():
    """params.mathMacros and a MathJax configuration's params.mathjax.tex.macros are the site's
    preamble, in that order."""
    config = site_config_from_mapping(
        {
            "params": {
                "mathMacros": "\\newcommand{\\R}{\\mathbb{R}}",
                "mathjax": {"tex": {"macros": {"E": "\\mathbb{E}"}}},
            }
        }
    )
    assert config.settings["math_macros"] == (
        "\\newcommand{\\R}{\\mathbb{R}}\n\\newcommand{\\E}{\\mathbb{E}}"
    )
    assert "math_macros" not in site_config_from_mapping({"params": {}}).settings


def test_front_matter_expanding_past_its_bound_is_a_problem_of_its_file():
    """YAML aliases that would spell out past MAX_VALUES values (400 bytes made 48 M), and
    nesting past MAX_DEPTH, are refused when the front matter is read, with a message."""
    from hugosite.reading import FrontMatterError, split_front_matter

    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i + 1}: &a{i + 1} [" + ", ".join([f"*a{i}"] * 9) + "]" for i in range(6)]
    with pytest.raises(FrontMatterError, match="values once its YAML aliases are expanded"):
        split_front_matter("---\n" + "\n".join(lines) + "\n---\nBody.\n")
    with pytest.raises(FrontMatterError, match="nested more than 64 levels deep"):
        split_front_matter("---\na: " + "[" * 100 + "]" * 100 + "\n---\nBody.\n")
    with pytest.raises(FrontMatterError, match="nested more than 64 levels deep"):
        split_front_matter("+++\na = " + "[" * 5000 + "]" * 5000 + "\n+++\nBody.\n")


def test_notes_are_read_from_their_files_as_they_are_iterated(tmp_path):
    """The site read holds where its notes are, not their text: each pass over the notes
    reads the files again (an import holds one batch at a time), and a note that can no
    longer be read is then a problem."""
    notes = tmp_path / "content" / "notes"
    notes.mkdir(parents=True)
    (tmp_path / "hugo.toml").write_text('title = "T"\n')
    (notes / "a.md").write_text('+++\ntitle = "A"\n+++\nFirst text\n')
    (notes / "b.md").write_text('+++\ntitle = "B"\n+++\nText\n')
    site = read_site(tmp_path)
    assert len(site.notes) == 2 and site.notes.slugs == ["a", "b"]
    (notes / "a.md").write_text('+++\ntitle = "A"\n+++\nSecond text\n')
    (notes / "b.md").write_text('+++\ntitle = "B\n+++\nText\n')
    assert [note.body for note in site.notes] == ["Second text\n"]
    assert [problem.path for problem in site.problems] == ["content/notes/b.md"]
