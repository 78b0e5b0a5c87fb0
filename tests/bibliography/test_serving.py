"""/bib/<name> serves only public files.

Every uploaded .bib used to be served, private unattached uploads included. Readers now get a
file only while a published note uses it (as a default bibliography, or as the file a cited
entry came from) or once an Editor marked it public; its owner and Editors always may. Each
case is checked for every role: anonymous, the owner (Ada), another Author (Bert), an Editor,
an Admin.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from bibliography.models import BibFile
from bibliography.services import bibfile_import, bibfile_set_public
from notes import services
from notes.models import Note
from tests.factories import bib_file, publish, unpublish, write

ROLES = ("anonymous", "author", "other_author", "editor", "admin")
KNUTH = "@book{knuth, title={The Art of Computer Programming}, author={Knuth, Donald}}\n"
URL = "/bib/ada.bib"

# role → status of /bib/ada.bib for a private file and for a public one.
PRIVATE = {"anonymous": 404, "author": 200, "other_author": 404, "editor": 200, "admin": 200}
PUBLIC = dict.fromkeys(ROLES, 200)


@pytest.fixture
def users(author, other_author, editor_user, admin_user) -> dict:
    return {
        "author": author,
        "other_author": other_author,
        "editor": editor_user,
        "admin": admin_user,
    }


def statuses(users: dict, url: str = URL) -> dict[str, int]:
    """The status of `url` for each role, each with a client of its own."""
    found = {}
    for role in ROLES:
        client = Client()
        if role != "anonymous":
            client.force_login(users[role])
        response = client.get(url)
        if response.status_code == 200:
            assert response.content.decode() == BibFile.objects.get(name="bib/ada.bib").raw
        found[role] = response.status_code
    return found


@pytest.fixture
def ada_bib(author) -> BibFile:
    return bib_file(author, "bib/ada.bib", KNUTH)


@pytest.mark.django_db
def test_a_private_unattached_upload_is_not_served(users, ada_bib):
    """Only its owner, Editors and Admins download it; readers and other Authors get 404."""
    assert statuses(users) == PRIVATE


@pytest.mark.django_db
def test_a_default_bibliography_of_a_published_note_is_served_to_everyone(
    users, author, note, ada_bib
):
    """Attached to a draft it stays private; once the note is published it is served; once
    unpublished again it is private again (the cached copy is not served either)."""
    services.note_bibliographies_set(note_id=note.pk, user=author, bibfile_ids=[ada_bib.pk])
    write(note, author, body="Text \\cite{knuth}.\n\n{{< references >}}\n")
    assert statuses(users) == PRIVATE
    publish(note, author)
    assert statuses(users) == PUBLIC
    assert Client().get(URL)["X-Cache"] == "hit"
    unpublish(note, author)
    assert statuses(users) == PRIVATE


@pytest.mark.django_db
def test_a_file_a_published_render_cited_from_is_served(users, author, note, ada_bib):
    """Named with bib= (not attached) by its owner's published note: the render took an entry
    from it, so readers may download it."""
    write(note, author, body='See \\cite{knuth}.\n\n{{< references bib="bib/ada.bib" >}}\n')
    assert statuses(users) == PRIVATE
    publish(note, author)
    assert statuses(users) == PUBLIC


@pytest.mark.django_db
def test_a_scheduled_note_does_not_make_its_files_public(users, author, note, ada_bib):
    """Published with a future date is not published yet."""
    soon = timezone.now() + dt.timedelta(days=1)
    write(note, author, body='\\cite{knuth}\n\n{{< references bib="bib/ada.bib" >}}\n', date=soon)
    publish(note, author)
    assert statuses(users) == PRIVATE


@pytest.mark.django_db
def test_naming_someone_elses_private_file_does_not_publish_it(
    users, other_author, others_note, ada_bib
):
    """Bert's published note names Ada's private upload: the render refuses it, so it takes no
    entry from it and /bib/ still does not serve it."""
    write(
        others_note,
        other_author,
        body='\\cite{knuth}\n\n{{< references bib="bib/ada.bib" >}}\n',
    )
    publish(others_note, other_author)
    assert Note.objects.published().filter(pk=others_note.pk).exists()
    assert statuses(users) == PRIVATE


@pytest.mark.django_db
def test_a_file_an_editor_marks_public_is_served_until_made_private(users, editor_user, ada_bib):
    """Public is the Editor's decision, and serves the file with no note using it."""
    bibfile_set_public(user=editor_user, bibfile_id=ada_bib.pk, public=True)
    assert statuses(users) == PUBLIC
    bibfile_set_public(user=editor_user, bibfile_id=ada_bib.pk, public=False)
    assert statuses(users) == PRIVATE


@pytest.mark.django_db
def test_a_shared_file_no_note_uses_is_not_served(users):
    """A file imported by a command (no owner) is served like any other: once used or public."""
    bibfile_import(name="bib/ada.bib", raw=KNUTH)
    assert statuses(users) == {**PRIVATE, "author": 404}


@pytest.mark.django_db
def test_the_served_file_query_is_constant(ada_bib, author, django_assert_num_queries):
    """One query decides and reads the file, however many notes use it."""
    for index in range(4):
        extra = services.note_create(user=author, title=f"User {index}")
        write(extra, author, body='\\cite{knuth}\n\n{{< references bib="bib/ada.bib" >}}\n')
        publish(extra, author)
    client = Client()
    with django_assert_num_queries(3):  # the generation (value, next due date), then the file
        assert client.get(URL).status_code == 200
