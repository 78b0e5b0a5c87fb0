"""Who may edit and use which bibliography file (ARCHITECTURE "Roles"), and entry search."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser

from bibliography.models import BibEntry, BibFile
from bibliography.services import bibfile_import
from notes.models import Note, NoteBibliography
from tests.people import user_in_group


@pytest.fixture
def files(db):
    """ada's file, bert's file and a site file (no owner, as imported by a command)."""
    ada, bert = user_in_group("ada", "Author"), user_in_group("bert", "Author")
    made = {}
    for name, owner in (("ada", ada), ("bert", bert), ("site", None)):
        made[name] = bibfile_import(name=f"bib/{name}.bib", raw="@misc{k, title={T}}", owner=owner)
    return ada, bert, {name: result.bibfile for name, result in made.items()}


def _names(queryset) -> set[str]:
    return set(queryset.values_list("name", flat=True))


def test_authors_edit_only_their_own_files(files):
    ada, _, _ = files
    assert _names(BibFile.objects.editable_by(ada)) == {"bib/ada.bib"}


def test_editors_and_superusers_edit_every_file(files):
    """The Editor group holds bibliography.edit_any_bibfile; superusers hold everything."""
    for user in (user_in_group("eve", "Editor"), user_in_group("root", is_superuser=True)):
        assert _names(BibFile.objects.editable_by(user)) == {
            "bib/ada.bib",
            "bib/bert.bib",
            "bib/site.bib",
        }
        assert _names(BibFile.objects.usable_by(user)) == _names(BibFile.objects.all())


def test_anonymous_and_inactive_users_get_nothing(files):
    ada, _, _ = files
    ada.is_active = False
    for user in (AnonymousUser(), ada):
        assert not BibFile.objects.editable_by(user).exists()
        assert not BibFile.objects.usable_by(user).exists()


def test_authors_use_their_own_and_the_sites_shared_files(files):
    """Usable, not editable: ownerless site files may be attached and cited from."""
    ada, _, _ = files
    assert _names(BibFile.objects.usable_by(ada)) == {"bib/ada.bib", "bib/site.bib"}


def test_files_attached_to_the_note_stay_usable_for_its_co_authors(files):
    """bert's file attached to a note keeps being a choice for ada editing that note, once."""
    ada, _, made = files
    note = Note.objects.create(slug="shared", created_by=ada)
    NoteBibliography.objects.create(note=note, bibfile=made["bert"], position=0)
    usable = BibFile.objects.usable_by(ada, note=note)
    assert _names(usable) == {"bib/ada.bib", "bib/bert.bib", "bib/site.bib"}
    assert usable.count() == 3
    assert "bib/bert.bib" not in _names(BibFile.objects.usable_by(ada))


@pytest.mark.django_db
def test_entries_match_every_word_in_key_title_authors_editors_or_year():
    bibfile_import(
        name="bib/s.bib",
        raw="@book{knuth, title={The Art}, author={Knuth, Donald}, year=1968}\n"
        "@book{proc, title={Proceedings}, editor={Lamport, Leslie}, year=1986}\n"
        "@misc{other, title={Unrelated}}\n",
    )

    def keys(query: str) -> list[str]:
        return list(BibEntry.objects.matching(query).values_list("key", flat=True))

    assert keys("KNUTH") == ["knuth"]
    assert keys("art 1968") == ["knuth"]
    assert keys("lamport") == ["proc"]
    assert keys("art 1986") == []
    assert keys("") == ["knuth", "proc", "other"]
