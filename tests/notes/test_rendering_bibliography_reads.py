"""What rendering a citing note reads of its bibliography file: never the raw text."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from notes.rendering import context_for
from notes.services import note_render_store
from tests.factories import note_row, site_bib_file

BIB = "".join(
    f"@article{{key{n},\n  author = {{Author, A{n}}},\n  title = {{Paper {n}}},\n"
    f"  journal = {{J}},\n  year = {{{2000 + n % 25}}}\n}}\n"
    for n in range(40)
)
BODY = 'See \\cite{key3} and \\cite{key7}.\n\n{{< references bib="bib/big.bib" >}}\n'


@pytest.mark.django_db
def test_a_citing_render_never_selects_the_raw_text_of_its_file():
    """The render of a note citing two entries of a file reads the file's name and owner and
    the two entries by key: no query selects the file's raw text or parse report, and the
    reference list still lists both entries."""
    site_bib_file("bib/big.bib", BIB)
    note = note_row("citing", BODY)
    with CaptureQueriesContext(connection) as queries:
        note_render_store(note=note, force=True)
    reads = [query["sql"] for query in queries if "bibliography_bibfile" in query["sql"]]
    assert reads, "the render looked the file up"
    for sql in reads:
        selected = sql.split(" FROM ")[0]
        assert '"raw"' not in selected and "parse_report" not in selected, sql
    assert "Paper 3" in note.rendered_html and "Paper 7" in note.rendered_html


@pytest.mark.django_db
def test_the_file_a_render_resolves_has_no_raw_text_loaded():
    """The bibliography a context resolves holds a BibFile whose raw text is deferred."""
    site_bib_file("bib/big.bib", BIB)
    found = context_for(None).resolve_bibliography("bib/big.bib")
    assert "raw" in found.bibfile.get_deferred_fields()
    assert found.known(["key1", "nokey"]) == ["key1"]
