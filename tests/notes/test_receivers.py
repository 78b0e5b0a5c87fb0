"""notes.receivers: stored renders follow the site settings they were made with."""

from __future__ import annotations

import pytest

from bibliography.formatting import format_cache_clear
from notes.models import Note
from scidraft.site.models import SiteSettings
from tests.factories import note_row, site_bib_file

pytestmark = pytest.mark.django_db

BIB = b"""@article{metropolis53,
  author = {Metropolis, Nicholas and Rosenbluth, Arianna W. and Teller, Edward},
  title = {Equation of State Calculations by Fast Computing Machines},
  journal = {The Journal of Chemical Physics},
  year = {1953}, volume = {21}, number = {6}, pages = {1087--1092},
}
"""


@pytest.fixture
def citing_note():
    format_cache_clear()
    site_bib_file("bib/physics.bib", BIB)
    note = note_row(
        "sampling",
        'Random walks \\cite{metropolis53}.\n\n{{< references bib="bib/physics.bib" >}}\n',
        title="Sampling",
        rendered=True,
    )
    note.refresh_from_db()
    return note


def test_a_new_site_citation_style_restyles_the_notes_on_their_next_read(citing_note, client):
    """The stored page still holds Vancouver's list when the site turns to APA: it is marked
    stale on the settings' save and rendered again, in APA, when next read."""
    assert "Metropolis N, Rosenbluth AW, Teller E." in citing_note.rendered_html
    site = SiteSettings.objects.current()
    site.title = "Another title"  # a setting no render reads: the renders stay
    site.save()
    assert Note.objects.get(pk=citing_note.pk).source_hash == citing_note.source_hash

    site.citation_style = "apa"
    site.save()
    assert Note.objects.get(pk=citing_note.pk).source_hash == ""
    page = client.get(f"/notes/{citing_note.slug}/").content.decode()
    assert ">Metropolis et al., 1953</a>)</span>" in page
    assert "Metropolis, N., Rosenbluth, A. W., &amp; Teller, E. (1953)." in page
    stored = Note.objects.get(pk=citing_note.pk)
    assert stored.source_hash and "Metropolis, N., Rosenbluth" in stored.rendered_html


def test_a_new_site_language_restyles_the_notes_too(citing_note):
    """The language is the style's locale: "and" becomes "und"."""
    site = SiteSettings.objects.current()
    site.language_code = "de"
    site.save()
    assert Note.objects.get(pk=citing_note.pk).source_hash == ""
