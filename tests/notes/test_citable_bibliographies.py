"""Which files `{{< references bib=… >}}` may name in a note.

Any note could name any uploaded file and show its entries, so an Author could read another
Author's private upload through the preview and publish it. A note may name its default
bibliographies, shared files (imported by a command), public files and its creator's own
uploads; any other file gives a warning on the list's line and no entries, in the preview,
the saved render, the review page and an import alike.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

from bibliography.models import BibFile
from bibliography.services import bibfile_import, bibfile_set_public
from notes import services
from notes.models import Note, NoteAuthor, NoteCitation
from notes.rendering import batch_context, context_for, context_with_bibliographies
from scidraft.markup import render
from tests.factories import bib_file, write

KNUTH = "@book{knuth, title={The Art of Computer Programming}, author={Knuth, Donald}}\n"
BODY = 'Intro.\n\nSee \\cite{knuth}.\n\n{{< references bib="bib/ada.bib" >}}\n'
LIST_LINE = 5
ENTRY = "The Art of Computer Programming"


def refused(note: Note) -> bool:
    """The stored render warns on the list's line and shows no entry of the file."""
    note.refresh_from_db()
    warnings = [(w["line"], w["code"]) for w in note.render_warnings]
    if (LIST_LINE, "bib-private") not in warnings:
        assert ENTRY in note.rendered_html, warnings
        return False
    assert ENTRY not in note.rendered_html
    assert "bibliography not available to this note: bib/ada.bib" in note.rendered_html
    assert not NoteCitation.objects.filter(note=note, bibfile__isnull=False).exists()
    return True


@pytest.fixture
def ada_bib(author) -> BibFile:
    return bib_file(author, "bib/ada.bib", KNUTH)


@pytest.mark.django_db
def test_the_creator_may_name_their_own_upload(author, note, ada_bib):
    """Ada's note names Ada's file: entries, no warning."""
    assert not refused(write(note, author, body=BODY))


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["other_author", "editor", "admin"])
def test_a_note_may_not_name_a_private_file_of_someone_else(
    request, role, ada_bib, other_author, editor_user, admin_user
):
    """Notes created by Bert, by an Editor or by an Admin naming Ada's private upload get the
    warning: the rights of a note's creator to attach any file count only once it is
    attached, so a co-author the creator let in cannot read private files through it."""
    user = {"other_author": other_author, "editor": editor_user, "admin": admin_user}[role]
    note = services.note_create(user=user, title="Naming a file")
    note = write(note, user, body=BODY)
    assert refused(note)
    message = next(w["message"] for w in note.render_warnings if w["code"] == "bib-private")
    assert message.startswith("bibliography file bib/ada.bib is private")
    assert "Attach it to this note" in message


@pytest.mark.django_db
def test_shared_and_public_files_may_be_named_by_any_note(
    other_author, others_note, editor_user, ada_bib
):
    """A file with no owner (imported by a command) and a file an Editor made public are
    usable everywhere; making Ada's file public renders Bert's note again at once."""
    bibfile_import(name="bib/shared.bib", raw=KNUTH)
    shared = write(others_note, other_author, body=BODY.replace("bib/ada.bib", "bib/shared.bib"))
    assert not [w for w in shared.render_warnings if w["code"].startswith("bib-")]
    assert ENTRY in shared.rendered_html

    named = write(others_note, other_author, body=BODY)
    assert refused(named)
    bibfile_set_public(user=editor_user, bibfile_id=ada_bib.pk, public=True)
    assert not refused(named)
    bibfile_set_public(user=editor_user, bibfile_id=ada_bib.pk, public=False)
    assert refused(named)


@pytest.mark.django_db
def test_a_file_attached_to_the_note_may_be_named(
    author, other_author, others_note, editor_user, ada_bib
):
    """Attaching is what the owner or an Editor does to let a note use a file: an Editor
    attaches Ada's file to Bert's note (Bert may not: it is not usable by him)."""
    note = write(others_note, other_author, body=BODY)
    assert refused(note)
    with pytest.raises(PermissionDenied):
        services.note_bibliographies_set(
            note_id=note.pk, user=other_author, bibfile_ids=[ada_bib.pk]
        )
    services.note_bibliographies_set(note_id=note.pk, user=editor_user, bibfile_ids=[ada_bib.pk])
    assert not refused(note)


@pytest.mark.django_db
def test_a_coauthor_attaches_their_own_file_to_name_it(author, other_author, others_note, ada_bib):
    """Ada co-authors Bert's note: her private file is refused until she attaches it (adding
    a co-author is one-sided, so it must not lend their files to the note)."""
    NoteAuthor.objects.create(note=others_note, author=services.author_for_user(author), position=1)
    note = write(others_note, author, body=BODY)
    assert refused(note)
    services.note_bibliographies_set(note_id=note.pk, user=author, bibfile_ids=[ada_bib.pk])
    assert not refused(note)


@pytest.mark.django_db
def test_the_preview_and_the_review_page_apply_the_same_rule(
    client, other_author, others_note, editor_user, ada_bib
):
    """Bert's live preview shows the warning's line and no entry; so does the Editor's review
    page of his note (the rule belongs to the note, not to whoever looks at it)."""
    client.force_login(other_author)
    preview = client.post(f"/write/{others_note.pk}/preview/", {"content": BODY})
    text = preview.content.decode()
    assert preview.status_code == 200
    assert f'data-line="{LIST_LINE}"' in text and "bib/ada.bib is private" in text
    assert ENTRY not in text

    write(others_note, other_author, body=BODY)
    reviewer = Client()
    reviewer.force_login(editor_user)
    page = reviewer.get(f"/write/review/{others_note.pk}/").content.decode()
    assert "bib/ada.bib is private" in page and ENTRY not in page


@pytest.mark.django_db
def test_publishing_with_a_private_file_asks_for_confirmation(
    client, other_author, others_note, ada_bib
):
    """bib-private is a publish blocker: the Author is shown the problem before publishing."""
    client.force_login(other_author)
    others_note.refresh_from_db()
    response = client.post(
        f"/write/{others_note.pk}/",
        {
            "base_version": others_note.version, "title": others_note.title, "body": BODY,
            "summary": "", "tags": "", "show_title": "unknown", "action": "publish",
            "date": others_note.date.strftime("%Y-%m-%dT%H:%M"),
        },
    )  # fmt: skip
    assert response.status_code == 200
    assert "bib/ada.bib is private" in response.content.decode()
    assert not Note.objects.published().filter(pk=others_note.pk).exists()


@pytest.mark.django_db
def test_imports_apply_the_rule_too(other_author, others_note, ada_bib):
    """An import's shared context (batch_context) is limited per note as well."""
    others_note.refresh_from_db()
    context = context_with_bibliographies(batch_context(), (), note=others_note)
    rendered = render(BODY, context)
    assert [(w.line, w.code) for w in rendered.warnings] == [(LIST_LINE, "bib-private")]
    attached = context_with_bibliographies(batch_context(), ("bib/ada.bib",), note=others_note)
    assert ENTRY in render(BODY, attached).html
    # Pages (edited by Editors in the admin) and the site-wide base are not limited.
    assert ENTRY in render(BODY, context_for(None)).html


@pytest.mark.django_db
def test_a_working_copys_attachment_counts_for_the_copy_until_published(
    other_author, others_note, editor_user, ada_bib
):
    """On a published note, an Editor's attachment goes to the working copy: the copy (what
    Bert previews) may name the file, the live version still may not and /bib/ does not serve
    it; publishing the changes makes both true."""
    note = write(others_note, other_author, body=BODY)
    note = services.note_publish(note_id=note.pk, user=other_author, base_version=note.version).note
    services.note_bibliographies_set(note_id=note.pk, user=editor_user, bibfile_ids=[ada_bib.pk])
    note = Note.objects.get(pk=note.pk)
    assert note.working is not None
    assert ENTRY in note.working.rendered_html
    preview = render(BODY, services.working_context(note))
    assert ENTRY in preview.html and not preview.warnings
    assert refused(note)
    assert Client().get("/bib/ada.bib").status_code == 404

    services.note_publish(note_id=note.pk, user=other_author, base_version=note.version)
    assert not refused(note)
    assert Client().get("/bib/ada.bib").status_code == 200
