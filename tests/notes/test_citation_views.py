"""Citation URLs: cite this note, the note's references.bib, and stored .bib files."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from bibliography.parsing import parse_bibtex
from notes.models import Note, NoteCitation

SLUG = "method-citations-two-bibliographies"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("suffix", "content_type", "start"),
    [
        ("cite.bib", "application/x-bibtex", "@online{"),
        ("cite.ris", "application/x-research-info-systems", "TY  - ELEC"),
        ("cite.json", "application/vnd.citationstyles.csl+json", "["),
    ],
)
def test_cite_this_note_in_three_formats(client, demo_loaded, suffix, content_type, start):
    """A published note can be cited as BibTeX, RIS and CSL-JSON, with its public URL."""
    response = client.get(f"/notes/{SLUG}/{suffix}")
    assert response.status_code == 200
    assert response["Content-Type"].startswith(content_type)
    body = response.content.decode()
    assert body.startswith(start)
    assert f"http://testserver/notes/{SLUG}/" in body


@pytest.mark.django_db
def test_drafts_scheduled_and_unknown_formats_are_not_found(client, demo_loaded):
    """Nothing unpublished can be cited; an unknown format is a 404, not an error."""
    draft = Note.objects.get(status="draft")
    scheduled = Note.objects.scheduled().first()
    assert scheduled.date > timezone.now()
    assert client.get(f"/notes/{draft.slug}/cite.bib").status_code == 404
    assert client.get(f"/notes/{scheduled.slug}/cite.ris").status_code == 404
    assert client.get(f"/notes/{SLUG}/cite.pdf").status_code == 404


@pytest.mark.django_db
def test_references_bib_holds_exactly_the_cited_entries(client, demo_loaded):
    """references.bib has every cited key once, in citation order, and parses on its own."""
    response = client.get(f"/notes/{SLUG}/references.bib")
    parsed = parse_bibtex(response.content.decode())
    assert parsed.problems == []
    cited = list(
        dict.fromkeys(NoteCitation.objects.filter(note__slug=SLUG).values_list("key", flat=True))
    )
    assert [entry.key for entry in parsed.entries] == cited
    assert len(cited) >= 20


@pytest.mark.django_db
def test_stored_bib_files_are_served_as_uploaded(client, demo_loaded):
    """/bib/<file> serves the raw text (the theme's address for the file)."""
    from bibliography.models import BibFile

    response = client.get("/bib/foundations.bib")
    assert response.status_code == 200
    assert response.content.decode() == BibFile.objects.get(name="bib/foundations.bib").raw
    assert client.get("/bib/nothing.bib").status_code == 404


@pytest.mark.django_db
def test_citation_rows_follow_the_stored_render(demo_loaded):
    """Each cited key is recorded with its list, number and the file it was found in."""
    rows = NoteCitation.objects.filter(note__slug=SLUG)
    assert {row.bib_name for row in rows} == {"bib/foundations.bib", "bib/computing.bib"}
    assert rows.filter(list_index=0, number=1).get().key == "Metropolis1953-eq"
    missing = NoteCitation.objects.get(key="Nobody1999-xx")
    assert missing.bibfile is None and missing.bib_name == ""


@pytest.mark.django_db
def test_uploading_a_missing_file_re_renders_the_notes_that_name_it(db):
    """A note citing a file that does not exist yet shows the problem; once the file is
    imported the note is re-rendered on the same write path, and the problem is gone."""
    from bibliography.services import bibfile_import
    from hugosite.loading import note_import
    from hugosite.reading import NoteSource

    note, _ = note_import(
        source=NoteSource(
            path="n.md",
            slug="late-bib",
            title="Late",
            date=timezone.now() - dt.timedelta(days=1),
            body='See \\cite{a}.\n\n{{< references bib="bib/late.bib" >}}\n',
        )
    )
    assert [w["code"] for w in note.render_warnings] == ["bib-missing"]
    bibfile_import(name="bib/late.bib", raw="@book{a, title={Arrived}, author={X, Y}, year=2020}")
    note.refresh_from_db()
    assert note.render_warnings == []
    assert "Arrived" in note.rendered_html
    assert NoteCitation.objects.get(note=note).bibfile.name == "bib/late.bib"


@pytest.mark.django_db
def test_references_ris_and_csl_json_hold_the_cited_entries_through_citation_js(
    client, demo_loaded
):
    """references.ris and references.json: the same entries as references.bib, in citation
    order, mapped by citation-js (the mapping the reference lists are formatted from)."""
    import json

    cited = list(
        dict.fromkeys(
            NoteCitation.objects.filter(note__slug=SLUG, bibfile__isnull=False).values_list(
                "key", flat=True
            )
        )
    )
    response = client.get(f"/notes/{SLUG}/references.json")
    assert response["Content-Type"].startswith("application/vnd.citationstyles.csl+json")
    items = json.loads(response.content)
    assert [item["id"] for item in items] == cited
    assert all(item.get("title") and item.get("type") for item in items)
    ris = client.get(f"/notes/{SLUG}/references.ris")
    assert ris["Content-Type"].startswith("application/x-research-info-systems")
    assert ris.content.decode().count("ER  - ") == len(cited)


@pytest.mark.django_db
def test_cite_this_note_follows_the_site_style(client, demo_loaded):
    """The formatted citation is the note in the site's CSL style: Vancouver's `[Internet]`
    by default, APA's `(2026, …)` date when the site chooses APA."""
    from scidraft.site.models import SiteSettings

    page = client.get(f"/notes/{SLUG}/").content.decode()
    assert "[Internet]" in page.split('class="cite-text"')[1].split("</p>")[0]
    from scidraft.site.generation import bump_generation

    SiteSettings.objects.update(citation_style="apa")
    bump_generation()  # a settings write does this; update() bypasses the write path
    page = client.get(f"/notes/{SLUG}/").content.decode()
    text = page.split('class="cite-text"')[1].split("</p>")[0]
    assert "[Internet]" not in text and "http://testserver/notes/" in text


@pytest.mark.django_db
def test_an_entry_stored_past_the_read_bound_is_named_not_read(client):
    """A row a file left before expansion was bounded (a 13 M-character title): the note's
    reference list shows its key and type with a warning, and the page, its Scholar tags,
    references.json and the cite picker never read it whole."""
    from bibliography.models import READ_BOUND_CHARS, BibEntry
    from bibliography.services import bibfile_import
    from hugosite.loading import note_import
    from hugosite.reading import NoteSource

    bibfile = bibfile_import(
        name="bib/old.bib", raw="@book{fine, title={Fine}, author={X, Y}, year=2020}"
    ).bibfile
    BibEntry.objects.create(
        bibfile=bibfile,
        key="bomb",
        entry_type="misc",
        fields={"title": "xx" * 6_500_000},
        scholar="citation_title=" + "x" * 499 + "…",
        position=1,
    )
    assert len("xx" * 6_500_000) > READ_BOUND_CHARS
    note, _ = note_import(
        source=NoteSource(
            path="n.md",
            slug="cites-bomb",
            title="Cites a bomb",
            date=timezone.now() - dt.timedelta(days=1),
            body='See \\cite{fine,bomb}.\n\n{{< references bib="bib/old.bib" >}}\n',
        )
    )
    (warning,) = [w for w in note.render_warnings if w["code"] == "cite-unformatted"]
    assert "reference bomb in bib/old.bib: the entry is 13,000,0" in (warning["message"])
    assert "upload bib/old.bib again" in warning["message"]
    assert len(note.rendered_html) < 20_000
    assert "<code>bomb</code> (misc): </span>" in note.rendered_html
    page = client.get("/notes/cites-bomb/")
    assert page.status_code == 200 and len(page.content) < 100_000
    references = client.get("/notes/cites-bomb/references.json")
    assert references.status_code == 200 and len(references.content) < 10_000
    assert '"fine"' in references.content.decode() and "bomb" not in references.content.decode()
