"""Math macros from the database: the site's and the note's preambles reach the render, change
the source hash, mark stored renders stale when the site's change, and are validated in the
admin."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.urls import reverse

from notes.models import Note, Page
from notes.rendering import NOTE_MACROS, SITE_MACROS, context_for, source_hash
from notes.services import note_render_store
from scidraft.site.models import SiteSettings, validate_math_macros
from tests.factories import note_row
from tests.site.test_admin_settings import _post_data


@pytest.fixture
def site_macros(db):
    site = SiteSettings.objects.current()
    site.math_macros = "\\newcommand{\\R}{\\mathbb{R}}\n\\newcommand{\\E}{E}"
    site.save()
    return site


@pytest.mark.django_db
def test_the_render_context_carries_the_site_then_the_note_preamble(site_macros):
    """context_for gives the site's preamble, then the note's; a note without its own gets the
    site's alone, and so does a page."""
    note = note_row("macros", "$x$", title="Macros", math_macros="\\renewcommand{\\E}{\\mathbb{E}}")
    preambles = context_for(note).math_macros
    assert [(p.where, p.tex) for p in preambles] == [
        (SITE_MACROS, site_macros.math_macros),
        (NOTE_MACROS, "\\renewcommand{\\E}{\\mathbb{E}}"),
    ]
    assert [p.where for p in context_for(None).math_macros] == [SITE_MACROS]


@pytest.mark.django_db
def test_a_stored_render_uses_both_preambles(site_macros):
    """A note saved and rendered typesets the site's \\R and its own \\E, with no warning."""
    note = note_row(
        "macros",
        "$\\E[X] \\in \\R$",
        title="Macros",
        math_macros="\\renewcommand{\\E}{\\mathbb{E}}",
    )
    note_render_store(note=note, force=True)
    note.refresh_from_db()
    assert note.render_warnings == []
    assert note.rendered_html.count('mathvariant="double-struck"') == 2


@pytest.mark.django_db
def test_the_source_hash_follows_the_macros(site_macros):
    """The source hash changes with the site's or the note's macros (a stored render made under
    other macros is stale); with no macros anywhere it is what it was before macros existed."""
    note = note_row("macros", "$\\R$", title="Macros")
    with_site = source_hash(note.body, context_for(note))
    note.math_macros = "\\newcommand{\\Q}{q}"
    assert source_hash(note.body, context_for(note)) != with_site
    note.math_macros = ""
    site_macros.math_macros = ""
    site_macros.save()
    plain = context_for(note)
    assert plain.math_macros == ()
    assert source_hash(note.body, plain) != with_site


@pytest.mark.django_db
def test_changing_the_site_macros_marks_stored_renders_stale(site_macros):
    """Saving new site macros empties every stored source hash (renders refresh on their next
    read); saving the settings with the same macros leaves them."""
    note = note_row("macros", "$\\R$", title="Macros")
    page = Page.objects.create(slug="p", title="P", body="$\\R$")
    note_render_store(note=note, force=True)
    page.source_hash = "x"
    page.save()
    site_macros.title = "Another title"
    site_macros.save()
    assert Note.objects.get(pk=note.pk).source_hash
    site_macros.math_macros += "\n\\newcommand{\\C}{\\mathbb{C}}"
    site_macros.save()
    assert Note.objects.get(pk=note.pk).source_hash == ""
    assert Page.objects.get(pk=page.pk).source_hash == ""


def test_the_validator_names_what_would_not_be_used():
    """A preamble with a line that is no definition, or a definition KaTeX refuses, is refused
    by the form with the line; definitions alone pass."""
    validate_math_macros("\\newcommand{\\R}{\\mathbb{R}}\n\\DeclareMathOperator{\\tr}{tr}")
    with pytest.raises(ValidationError) as refused:
        validate_math_macros("\\newcommand{\\R}{r}\n\\def\\b#2{}\nstray text")
    messages = refused.value.messages
    assert any("line 3" in message and "stray text" in message for message in messages)
    assert any("line 2" in message and "\\def\\b" in message for message in messages)


@pytest.mark.django_db
def test_the_admin_saves_site_macros_and_refuses_broken_ones(client):
    """The site settings form has the macros field; a broken definition is an error on it."""
    root = User.objects.create_superuser("root", "root@example.org", "correct horse battery")
    client.force_login(root)
    url = reverse("admin:site_sitesettings_change", args=[SiteSettings.objects.current().pk])
    data = _post_data(client.get(url).context["adminform"].form)
    data["math_macros"] = "\\def\\b#2{}"
    response = client.post(url, data)
    assert response.status_code == 200
    assert "math_macros" in response.context["adminform"].form.errors
    data["math_macros"] = "\\newcommand{\\R}{\\mathbb{R}}"
    assert client.post(url, data).status_code == 302
    assert SiteSettings.objects.current().math_macros == "\\newcommand{\\R}{\\mathbb{R}}"
