"""Fixtures shared by the editor's tests."""

from __future__ import annotations

import pytest

from bibliography.models import BibFile
from bibliography.services import bibfile_import
from notes.models import NoteBibliography


@pytest.fixture
def cited_note(note):
    bibfile_import(
        name="bib/main.bib", raw="@book{knuth, title={The Art}, author={Knuth, Donald}, year=1968}"
    )
    NoteBibliography.objects.create(note=note, bibfile=BibFile.objects.get(name="bib/main.bib"))
    return note
