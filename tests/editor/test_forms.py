"""The editor's form: every side-panel field, its validation, and what it hands to note_save."""

from __future__ import annotations

import pytest
from django.utils import timezone

from bibliography.models import BibFile
from bibliography.services import bibfile_import
from editor.forms import NoteEditorForm
from notes import services
from notes.models import Author
from scidraft.site.models import EntrySet


def _data(note, **changes) -> dict:
    data = {
        key: ("" if value is None else value)
        for key, value in NoteEditorForm.initial_for(note).items()
    }
    data["date"] = timezone.localtime(note.date).strftime("%Y-%m-%dT%H:%M")
    data["show_title"] = "unknown"
    for flag in ("promotion", "disable_share", "search_hidden", "hidden_in_rss", "robots_noindex"):
        data.pop(flag)
    data.update(changes)
    return data


def _form(note, user, **changes) -> NoteEditorForm:
    return NoteEditorForm(_data(note, **changes), note=note, user=user)


def test_initial_values_cover_every_side_panel_field(author, note):
    """An unbound form shows the note's slug, authors, flags and entry-set fields."""
    note.params = {"entrytitle": "Heat", "entryAliases": ["Fourier", "Diffusion"]}
    note.search_hidden = True
    note.save()
    initial = NoteEditorForm.initial_for(note)
    assert initial["slug"] == "heat-equation"
    assert initial["authors"] == author.author.handle
    assert initial["search_hidden"] is True and initial["disable_share"] is False
    assert initial["entry_entry_title"] == "Heat"  # keys match case-insensitively
    assert initial["entry_entry_aliases"] == "Fourier\nDiffusion"
    assert initial["base_version"] == note.version


def test_all_fields_become_note_save_fields(author, other_author, note):
    """A full POST gives note_save every field, converted: lists, slug, ordered handles."""
    second = services.author_for_user(other_author)
    form = _form(
        note,
        author,
        slug="Heat Equation, Revisited!",
        authors=f"@{second.handle}, {author.author.handle}",
        institute="Fourier Lab",
        tags="PDE,  heat  flow , PDE",
        summary="Short.",
        description="Longer.",
        show_title="true",
        promotion="on",
        keywords="heat, diffusion",
        canonical_url="example.org/heat",
        robots_noindex="on",
        entry_entry_title="Heat equation",
        entry_entry_aliases="Diffusion equation\n\nFourier's law\n",
        entry_entry_category="PDEs",
    )
    assert form.is_valid(), form.errors
    fields = form.note_fields()
    assert fields["slug"] == "heat-equation-revisited"
    assert fields["authors"] == [second.handle, author.author.handle]
    assert fields["tags"] == ["PDE", "heat flow"]
    assert fields["keywords"] == ["heat", "diffusion"]
    assert fields["show_title"] is True and fields["promotion"] is True
    assert fields["robots_noindex"] is True and fields["disable_share"] is False
    assert fields["canonical_url"] == "https://example.org/heat"
    assert fields["params"] == {
        "entryTitle": "Heat equation",
        "entryCategory": "PDEs",
        "entryAliases": ["Diffusion equation", "Fourier's law"],
    }


def test_duplicate_slug_is_refused(author, note):
    """A slug another note has is an error that names it; the note's own slug is fine."""
    services.note_create(user=author, title="Wave equation")
    form = _form(note, author, slug="Wave Equation")
    assert not form.is_valid()
    assert "wave-equation" in form.errors["slug"][0]
    assert _form(note, author, slug="heat-equation").is_valid()


def test_blank_slug_keeps_the_current_one_and_symbols_only_is_an_error(author, note):
    """Blank keeps the slug; a slug with nothing to keep after slugify is refused."""
    form = _form(note, author, slug="  ")
    assert form.is_valid() and form.note_fields()["slug"] == "heat-equation"
    form = _form(note, author, slug="!!!")
    assert not form.is_valid() and "letters or digits" in form.errors["slug"][0]


@pytest.mark.parametrize("value", ["2026-13-40T25:00", "next tuesday", ""])
def test_bad_or_missing_date_is_refused(author, note, value):
    """A date that does not parse, or none at all, is a field error."""
    form = _form(note, author, date=value)
    assert not form.is_valid() and "date" in form.errors


def test_unknown_author_handle_is_refused(author, note):
    """Authors are picked from existing handles; an unknown one is named in the error."""
    form = _form(note, author, authors=f"{author.author.handle}, nobody-here")
    assert not form.is_valid()
    assert "nobody-here" in form.errors["authors"][0]
    assert Author.objects.filter(handle="nobody-here").count() == 0


def test_long_tag_is_refused(author, note):
    form = _form(note, author, tags="ok, " + "x" * 101)
    assert not form.is_valid() and "100 characters" in form.errors["tags"][0]


def test_bibliographies_must_be_usable_by_the_user(author, other_author, note):
    """Own and shared files may be attached, in the order written; another author's may not."""
    bibfile_import(name="bib/shared.bib", raw="@misc{a, title={A}}")
    bibfile_import(name="bib/mine.bib", raw="@misc{b, title={B}}", owner=author)
    bibfile_import(name="bib/theirs.bib", raw="@misc{c, title={C}}", owner=other_author)
    form = _form(note, author, bibliographies="bib/mine.bib, bib/shared.bib")
    assert form.is_valid(), form.errors
    assert [f.name for f in form.cleaned_data["bibliographies"]] == [
        "bib/mine.bib",
        "bib/shared.bib",
    ]
    assert form.bibliographies_changed()
    form = _form(note, author, bibliographies="bib/theirs.bib")
    assert not form.is_valid() and "bib/theirs.bib" in form.errors["bibliographies"][0]
    assert BibFile.objects.count() == 3


def test_fields_left_out_of_the_post_are_not_written(author, note):
    """A client posting only the body changes only the body (and the unticked check boxes)."""
    form = NoteEditorForm(
        {"base_version": note.version, "body": "Only this."}, note=note, user=author
    )
    assert form.is_valid(), form.errors
    fields = form.note_fields()
    assert fields["body"] == "Only this."
    assert not {"title", "slug", "date", "authors", "tags", "summary"} & set(fields)
    assert "params" not in fields and not form.bibliographies_changed()


def test_configured_entry_sets_replace_the_fallback(author, note):
    """Each EntrySet gets its four fields, stored under its own front-matter names."""
    EntrySet.objects.create(
        key="math",
        title_field="mathTitle",
        category_field="mathCategory",
        aliases_field="mathAliases",
        summary_field="mathSummary",
    )
    note.params = {"mathtitle": "Old", "other": 1}
    note.save()
    form = _form(note, author, entry_math_title="Softmax shift", entry_math_summary="")
    assert "entry_entry_title" not in form.fields
    assert form.is_valid(), form.errors
    assert form.note_fields()["params"] == {"other": 1, "mathTitle": "Softmax shift"}
    unchanged = _form(note, author)
    assert unchanged.is_valid() and "params" not in unchanged.note_fields()


def test_weight_is_an_editors_field(author, editor_user, note):
    """An Author's form shows the weight but cannot change it (the field is disabled and
    left out of note_save's fields); an Editor's form pins the note."""
    form = _form(note, author, weight="-1000")
    assert form.is_valid(), form.errors
    assert form.fields["weight"].disabled and "weight" not in form.note_fields()
    form = _form(note, editor_user, weight="3")
    assert form.is_valid(), form.errors
    assert form.note_fields()["weight"] == 3
