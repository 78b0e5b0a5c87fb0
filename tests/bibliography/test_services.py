"""Importing bibliography files into the database."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from bibliography.models import BibEntry, BibFile
from bibliography.services import bib_name_for, bibfile_create, bibfile_import, bibfile_replace
from tests.people import user_in_group

ONE = "@article{a, title={First}, year=2001}\n@book{b, title={Second}, year=2002}\n"


@pytest.mark.django_db
def test_import_creates_the_file_and_its_entries():
    """A new file stores its raw text, entries in file order, and an empty report."""
    result = bibfile_import(name="bib/refs.bib", raw=ONE)
    assert result.outcome == "created"
    bibfile = BibFile.objects.get(name="bib/refs.bib")
    assert bibfile.raw == ONE and bibfile.entry_count == 2 and bibfile.parse_report == []
    assert list(bibfile.entries.values_list("key", "position")) == [("a", 0), ("b", 1)]


@pytest.mark.django_db
def test_importing_the_same_text_again_changes_nothing():
    """Same text, same rows: the second import is "unchanged"."""
    bibfile_import(name="bib/refs.bib", raw=ONE)
    before = list(BibEntry.objects.values_list("pk", "key"))
    assert bibfile_import(name="bib/refs.bib", raw=ONE).outcome == "unchanged"
    assert list(BibEntry.objects.values_list("pk", "key")) == before


@pytest.mark.django_db
def test_reimport_updates_entries_in_place_by_key():
    """A changed file keeps the rows of surviving keys (same primary key), updates their
    fields, adds new keys and removes dropped ones."""
    bibfile_import(name="bib/refs.bib", raw=ONE)
    kept_pk = BibEntry.objects.get(key="a").pk
    result = bibfile_import(
        name="bib/refs.bib", raw="@article{a, title={First, revised}}\n@misc{c, note={n}}\n"
    )
    assert result.outcome == "updated"
    entry = BibEntry.objects.get(key="a")
    assert entry.pk == kept_pk and entry.fields["title"] == "First, revised"
    assert set(BibEntry.objects.values_list("key", flat=True)) == {"a", "c"}


@pytest.mark.django_db
def test_parse_report_is_stored_with_the_file():
    """Blocks that fail are stored in parse_report with line, key and reason."""
    result = bibfile_import(name="bib/x.bib", raw="@article{a, title={x}\n@book{b, title={y}}\n")
    assert result.bibfile.entry_count == 1
    assert result.bibfile.parse_report == [
        {
            "line": 1,
            "key": "a",
            "reason": "unbalanced braces: the entry is never closed before the next @",
        }
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"@article{a, title={caf\xe9}}", "not UTF-8"),
        ("@article{a, title={x\x00}}", "binary data"),
    ],
)
def test_undecodable_or_binary_input_is_refused_clearly(raw, message):
    """Bytes that are not UTF-8 text are refused with a message saying so; nothing is stored."""
    with pytest.raises(ValidationError, match=message):
        bibfile_import(name="bib/x.bib", raw=raw)
    assert not BibFile.objects.exists()


@pytest.mark.django_db
def test_files_over_the_size_limit_are_refused(settings):
    """The configurable limit (SCIDRAFT_BIB_MAX_BYTES) is enforced before parsing."""
    settings.SCIDRAFT_BIB_MAX_BYTES = 1000
    with pytest.raises(ValidationError, match="the limit is"):
        bibfile_import(name="bib/big.bib", raw="%" * 1001)


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["refs.txt", "/etc/refs.bib", "bib/../x.bib", "bib//x.bib"])
def test_names_must_be_relative_bib_paths(name):
    """Names are paths like bib/refs.bib: no absolute paths, `..` or other extensions."""
    with pytest.raises(ValidationError):
        bibfile_import(name=name, raw=ONE)


# --- Files added and replaced by users (the editor's bibliography pages) -----------------------


@pytest.mark.parametrize(
    ("typed", "name"),
    [
        ("refs", "bib/refs.bib"),
        ("refs.bib", "bib/refs.bib"),
        (" bib/a-b_c.2.bib ", "bib/a-b_c.2.bib"),
    ],
)
def test_bib_name_for_accepts_a_plain_name_in_any_spelling(typed, name):
    assert bib_name_for(typed) == name


@pytest.mark.parametrize("typed", ["", "../x", "a/b", ".hidden", "sp ace", "x" * 102, "é"])
def test_bib_name_for_refuses_paths_and_odd_characters(typed):
    with pytest.raises(ValidationError, match="Name the file with letters"):
        bib_name_for(typed)


@pytest.mark.django_db
def test_bibfile_create_makes_the_user_the_owner():
    ada = user_in_group("ada", "Author")
    result = bibfile_create(user=ada, name="bib/refs.bib", raw=ONE)
    assert (result.outcome, result.bibfile.owner, result.entries_kept) == ("created", ada, 2)


@pytest.mark.django_db
def test_bibfile_create_never_overwrites_an_existing_file():
    """Even an Editor adding a file under a taken name gets an error; the file stays as it was."""
    bibfile_import(name="bib/refs.bib", raw=ONE)
    with pytest.raises(ValidationError, match="already exists"):
        bibfile_create(
            user=user_in_group("eve", "Editor"), name="bib/refs.bib", raw="@misc{z, t={u}}"
        )
    assert BibFile.objects.get().raw == ONE


@pytest.mark.django_db
def test_bibfile_create_needs_the_add_permission():
    """A user in no group may not add files."""
    with pytest.raises(PermissionDenied):
        bibfile_create(user=user_in_group("nobody"), name="bib/refs.bib", raw=ONE)
    assert not BibFile.objects.exists()


@pytest.mark.django_db
def test_bibfile_replace_is_for_files_the_user_may_edit():
    """The owner and an Editor may replace the text (entries in place, owner kept); another
    Author may not, and nothing changes."""
    ada, bert, eve = (
        user_in_group("ada", "Author"),
        user_in_group("bert", "Author"),
        user_in_group("eve", "Editor"),
    )
    bibfile = bibfile_create(user=ada, name="bib/refs.bib", raw=ONE).bibfile
    kept = BibEntry.objects.get(key="a").pk
    with pytest.raises(PermissionDenied):
        bibfile_replace(user=bert, bibfile_id=bibfile.pk, raw="@misc{a, title={Bert's}}")
    assert bibfile_replace(user=ada, bibfile_id=bibfile.pk, raw=ONE + "@misc{c}").outcome == (
        "updated"
    )
    result = bibfile_replace(user=eve, bibfile_id=bibfile.pk, raw="@misc{a, title={Eve's}}")
    assert result.outcome == "updated" and result.bibfile.owner == ada
    assert BibEntry.objects.get(key="a").pk == kept
    assert BibEntry.objects.get(key="a").title == "Eve's"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("role", "allowed"),
    [("anonymous", False), ("author", False), ("other_author", False), ("editor", True),
     ("admin", True)],
)  # fmt: skip
def test_only_editors_and_admins_set_a_file_public(request, role, allowed, author):
    """bibfile_set_public: Editors and Admins only, the file's owner included in the refusal;
    a refused call changes nothing."""
    from django.contrib.auth.models import AnonymousUser

    from bibliography.services import bibfile_set_public

    bibfile = bibfile_create(user=author, name="bib/mine.bib", raw="@misc{k, title={T}}").bibfile
    fixture = {"author": "author", "other_author": "other_author", "editor": "editor_user",
               "admin": "admin_user"}.get(role)  # fmt: skip
    user = request.getfixturevalue(fixture) if fixture else AnonymousUser()
    if allowed:
        assert bibfile_set_public(user=user, bibfile_id=bibfile.pk, public=True).is_public
    else:
        with pytest.raises(PermissionDenied):
            bibfile_set_public(user=user, bibfile_id=bibfile.pk, public=True)
    assert BibFile.objects.get(pk=bibfile.pk).is_public is allowed
