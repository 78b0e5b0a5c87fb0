"""What readers see of a published note's references under "require review": the entries kept
when its live version went live, in its page, its reference exports and its Scholar tags, until
a change to a cited file is published through review; without review, the files at once."""

from __future__ import annotations

import re

from django.urls import reverse

from bibliography import services as bib_services
from notes import services
from notes.live_references import reference_changes
from notes.models import LiveBibliography, Note, Status
from notes.services.references import references_waiting
from tests.cited_files import (
    BIB,
    BODY,
    bibfile,
    public_exports,
    public_text,
    published,
    replace_title,
    require_review,
)
from tests.factories import write

__all__ = ["bibfile", "published"]  # fixtures


def test_replacing_a_cited_file_leaves_the_public_references_until_review(
    client, author, editor_user, published, bibfile
):
    """Under require review, a changed entry title stays off the public page, its exports and
    its Scholar tags; the author's preview shows it; once submitted and approved it is public."""
    require_review()
    replace_title(author, bibfile, "Literate Programming Revisited")
    page = public_text(client, f"/notes/{published.slug}/")
    assert "Literate Programming" in page and "Revisited" not in page
    assert 'name="citation_reference" content="citation_title=Literate Programming;' in page
    exports = public_exports(client, published.slug)
    assert "Literate Programming" in exports and "Revisited" not in exports
    assert "Journal of Old Names" in exports  # the @string the kept entry uses

    client.force_login(author)
    preview = client.post(
        reverse("editor:preview", args=[published.pk]),
        {"content": BODY},
        HTTP_ACCEPT="application/json",
    ).json()
    assert "Literate Programming Revisited" in preview["html"]

    note = Note.objects.get(pk=published.pk)
    result = services.note_publish(note_id=note.pk, user=author, base_version=note.version)
    assert services.awaiting_review(result.note)
    assert "Revisited" not in public_text(client, f"/notes/{published.slug}/")

    note = Note.objects.get(pk=published.pk)
    services.note_review_approve(note_id=note.pk, user=editor_user, base_version=note.version)
    page = public_text(client, f"/notes/{published.slug}/")
    assert "Literate Programming Revisited" in page
    assert "Revisited" in public_exports(client, published.slug)
    assert not LiveBibliography.objects.get(note=published).changed


def test_without_review_a_file_change_reaches_readers_at_once(client, author, published, bibfile):
    """Without require review, the public reference list and exports follow the file."""
    replace_title(author, bibfile, "Literate Programming Revisited")
    assert "Literate Programming Revisited" in public_text(client, f"/notes/{published.slug}/")
    assert "Revisited" in public_exports(client, published.slug)
    assert not LiveBibliography.objects.filter(note=published).exists()


def test_a_note_published_before_review_was_required_keeps_what_readers_saw(
    client, author, published, bibfile
):
    """A live version with no kept entries (published earlier, or imported) keeps the entries
    it showed when a file it cites changes under require review."""
    LiveBibliography.objects.filter(note=published).delete()
    require_review()
    replace_title(author, bibfile, "Literate Programming Revisited")
    assert "Revisited" not in public_text(client, f"/notes/{published.slug}/")
    changes = reference_changes(Note.objects.get(pk=published.pk))
    assert [(change.key, change.kind) for change in changes] == [("knuth84", "changed")]
    assert changes[0].fields[0].after == "Literate Programming Revisited"


def test_no_longer_requiring_review_publishes_the_files_as_they_are(
    client, author, published, bibfile
):
    """Turning review off makes every live version read the files as they are."""
    require_review()
    replace_title(author, bibfile, "Literate Programming Revisited")
    require_review(False)
    assert "Literate Programming Revisited" in public_text(client, f"/notes/{published.slug}/")


def test_removed_and_added_entries_are_listed(author, editor_user, note, bibfile):
    """An entry removed from the file, and a key missing at publication that the file now
    has, are told apart from changed ones."""
    body = BODY.replace("\\cite{knuth84}", "\\cite{knuth84,turing36}")
    result = services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": body}
    )
    services.note_publish(note_id=note.pk, user=editor_user, base_version=result.note.version)
    require_review()
    turing = "@article{turing36, author = {Turing, Alan}, title = {On Computable Numbers}}\n"
    text = (BIB % "x").split("@article{knuth84")[0] + turing
    bib_services.bibfile_replace(user=author, bibfile_id=bibfile.pk, raw=text)
    changes = reference_changes(Note.objects.get(pk=note.pk))
    assert [(change.key, change.kind) for change in changes] == [
        ("knuth84", "removed"),
        ("turing36", "added"),
    ]
    assert changes[1].after.endswith("On Computable Numbers")


def test_an_unrelated_file_change_marks_nothing(author, published, bibfile):
    """A change to an entry the note does not cite leaves its live version unmarked."""
    require_review()
    raw = (BIB % "Literate Programming").replace("Preparation System", "Preparation Tool")
    bib_services.bibfile_replace(user=author, bibfile_id=bibfile.pk, raw=raw)
    assert not LiveBibliography.objects.get(note=published).changed
    assert not references_waiting(Note.objects.get(pk=published.pk))


def test_references_bib_keeps_the_string_definitions_readers_saw(
    client, author, published, bibfile
):
    """A changed @string definition reaches references.bib only through review: the kept
    entry is written after the definition it was published with, and the file parses."""
    from bibliography.parsing import parse_bibtex

    require_review()
    raw = (BIB % "Literate Programming").replace("Journal of Old Names", "Journal of New Names")
    bib_services.bibfile_replace(user=author, bibfile_id=bibfile.pk, raw=raw)
    text = public_text(client, f"/notes/{published.slug}/references.bib")
    assert '@string{jml = "Journal of Old Names"}' in text and "New Names" not in text
    parsed = parse_bibtex(text)
    assert parsed.problems == [] and parsed.entries[0].fields["journal"] == "Journal of Old Names"
    changes = reference_changes(Note.objects.get(pk=published.pk))
    assert [(field.name, field.after) for field in changes[0].fields] == [
        ("journal", "Journal of New Names")
    ]


def test_an_entry_from_a_file_the_note_may_not_name_is_not_shown(
    client, author, other_author, editor_user, note, bibfile
):
    """A key missing at publication that appears in another author's private file, which the
    note may not name, is no change: the comparison shows nothing the preview would not; once
    an Editor makes the file public, it is an added entry."""
    body = BODY.replace(
        '{{< references bib="bib/refs.bib" >}}',
        '\\cite{secret1}\n\n{{< references bib="bib/refs.bib,bib/secret.bib" >}}',
    )
    result = services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": body}
    )
    services.note_publish(note_id=note.pk, user=editor_user, base_version=result.note.version)
    require_review()
    secret = bib_services.bibfile_create(
        user=other_author, name="bib/secret.bib", raw="@misc{secret1, title = {Hidden Title}}"
    ).bibfile
    assert reference_changes(Note.objects.get(pk=note.pk)) == []
    assert not LiveBibliography.objects.get(note=note).changed
    # Made public, the file may be named: its entry would now be added.
    bib_services.bibfile_set_public(user=editor_user, bibfile_id=secret.pk, public=True)
    changes = reference_changes(Note.objects.get(pk=note.pk))
    assert [(change.key, change.kind, change.after) for change in changes] == [
        ("secret1", "added", "Hidden Title")
    ]
    assert LiveBibliography.objects.get(note=note).changed
    assert "Hidden Title" not in public_text(client, f"/notes/{note.slug}/")


def test_publishing_again_reads_a_cited_files_text_once_per_version(
    author, editor_user, published, bibfile
):
    """Keeping the live entries reads a cited file's whole text for its @string definitions
    once per version of the file, not at every publish; a new version's definitions are the
    ones kept."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    require_review()

    publishes = iter(range(1, 10))

    def publish_again() -> list[str]:
        note = Note.objects.get(pk=published.pk)
        write(note, author, body=f"{BODY}\n\nPublished again ({next(publishes)}).")
        note = Note.objects.get(pk=published.pk)
        with CaptureQueriesContext(connection) as queries:
            result = services.note_publish(
                note_id=note.pk, user=editor_user, base_version=note.version
            )
        assert result.note.status == Status.PUBLISHED and not services.awaiting_review(result.note)
        return [
            q["sql"] for q in queries if re.match(r'SELECT "bibliography_bibfile"\."raw"', q["sql"])
        ]

    publish_again()
    assert publish_again() == []
    raw = (BIB % "Literate Programming").replace("Journal of Old Names", "Journal of New Names")
    bib_services.bibfile_replace(user=author, bibfile_id=bibfile.pk, raw=raw)
    publish_again()
    assert LiveBibliography.objects.get(note=published).macros == {
        "bib/refs.bib": ['@string{jml = "Journal of New Names"}']
    }
