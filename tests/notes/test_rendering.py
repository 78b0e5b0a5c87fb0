"""Notes rendered from the database: stored renders, contexts, cross-note references."""

from __future__ import annotations

import pytest

from notes.models import Environment, Note, Page
from notes.rendering import context_for, source_hash
from notes.services import note_render_store
from scidraft.markup import ENGINE_VERSION


@pytest.mark.django_db
def test_loading_the_demo_stores_a_render_for_every_note(demo_loaded):
    """Every note has HTML, card HTML, text, flags and the engine version after seed_demo."""
    for note in Note.objects.all():
        assert note.rendered_html and note.rendered_card_html and note.rendered_text, note.slug
        assert note.render_version == ENGINE_VERSION
        assert note.source_hash == source_hash(note.body, context_for(note))


@pytest.mark.django_db
def test_demo_notes_render_with_only_the_intentional_warning(demo_loaded):
    """The demo's only warning is its deliberately missing citation key."""
    warnings = [
        (note.slug, warning["code"])
        for note in Note.objects.all()
        for warning in note.render_warnings
    ]
    assert warnings == [("method-citations-reference-heading", "cite-missing")]


@pytest.mark.django_db
def test_cross_note_reference_links_to_the_other_note(demo_loaded):
    """\\ref{other-slug:label} becomes a link to the label's anchor on the other note."""
    note = Note.objects.get(slug="result-lemma-dobrushin-contraction")
    assert (
        'href="/notes/result-theorem-doeblin-convergence/#thm-doeblin">Theorem'
        in note.rendered_html
    )


@pytest.mark.django_db
def test_citations_resolve_against_stored_bibliographies(demo_loaded):
    """Reference lists format entries from BibEntry rows; both lists number from 1."""
    note = Note.objects.get(slug="method-citations-two-bibliographies")
    assert [entry["bib"] for entry in note.render_citations] == [
        ["bib/foundations.bib"],
        ["bib/computing.bib"],
    ]
    assert all(not entry["missing"] for entry in note.render_citations)
    assert note.rendered_html.count('<span class="ref-num">[1]</span>') == 2
    assert "Metropolis" in note.rendered_html


@pytest.mark.django_db
def test_entry_index_pages_list_the_sets_members(demo_loaded):
    """The A–Z and category pages list every published member of their set."""
    page = Page.objects.get(slug="results-a-to-z")
    published = [note for note in Note.objects.published() if "resultTitle" in note.params]
    assert page.rendered_html.count('class="entry-item"') == len(published) == 14
    assert f"{len(published)} Results Covered" in page.rendered_html
    categories = Page.objects.get(slug="methods-categories").rendered_html
    assert "Methods Covered in" in categories and 'class="entry-letter"' in categories


@pytest.mark.django_db
def test_an_unchanged_note_is_not_rendered_again(demo_loaded):
    """The stored render is reused while body, engine, kinds and style are unchanged."""
    note = Note.objects.get(slug="result-theorem-gronwall-inequality")
    assert note_render_store(note=note) is False


@pytest.mark.django_db
def test_changing_an_environment_kind_makes_stored_renders_stale(demo_loaded):
    """Renaming a kind changes the hash, so the note renders again with the new word."""
    note = Note.objects.get(slug="result-theorem-gronwall-inequality")
    Environment.objects.filter(key="theorem").update(label="Satz")
    assert note.source_hash != source_hash(note.body, context_for(note))
    assert note_render_store(note=note) is True
    note.refresh_from_db()
    assert "Satz 1" in note.rendered_html


@pytest.mark.django_db
def test_an_empty_environment_table_falls_back_to_the_built_in_kinds():
    """With no Environment rows (a flushed database), theorems are still numbered."""
    from notes.rendering import environment_kinds
    from scidraft.markup import DEFAULT_ENVIRONMENTS

    Environment.objects.all().delete()
    assert environment_kinds() == DEFAULT_ENVIRONMENTS
