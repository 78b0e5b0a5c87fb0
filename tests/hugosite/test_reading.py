"""Reading whole Hugo sites: the theme's real example site, and unreadable files reported."""

from __future__ import annotations

from hugosite.reading import read_site


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
