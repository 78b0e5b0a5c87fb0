"""Bibliography files in the admin: upload or paste, the parse report, "cited by"."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from bibliography.models import BibEntry, BibFile


@pytest.fixture
def admin_client(client, db):
    user = User.objects.create_superuser("root", "root@example.org", "correct horse battery")
    client.force_login(user)
    return client


def test_uploading_a_file_imports_its_entries_and_shows_the_report(admin_client):
    """An upload goes through the import service; the page then lists what failed."""
    upload = SimpleUploadedFile(
        "refs.bib", b"@book{good, title={Kept}, year=2001}\n@article{broken, title={x}\n"
    )
    response = admin_client.post(
        reverse("admin:bibliography_bibfile_add"),
        {"name": "bib/refs.bib", "description": "", "raw": "", "upload": upload},
        follow=True,
    )
    assert response.status_code == 200
    bibfile = BibFile.objects.get(name="bib/refs.bib")
    assert list(bibfile.entries.values_list("key", flat=True)) == ["good"]
    content = response.content.decode()
    assert "1 entries kept (created); 1 block(s) could not be read" in content
    assert "unbalanced braces" in content


def test_pasting_text_imports_it(admin_client):
    """Pasted BibTeX is imported like an upload."""
    admin_client.post(
        reverse("admin:bibliography_bibfile_add"),
        {"name": "bib/pasted.bib", "description": "d", "raw": "@misc{p, title={Pasted}}"},
    )
    assert BibEntry.objects.get(key="p").bibfile.description == "d"


def test_a_file_that_is_not_utf8_is_refused_with_a_clear_message(admin_client):
    """Latin-1 bytes are refused on the form; nothing is stored."""
    upload = SimpleUploadedFile("x.bib", "@book{k, title={Café}}".encode("latin-1"))
    response = admin_client.post(
        reverse("admin:bibliography_bibfile_add"),
        {"name": "bib/x.bib", "description": "", "raw": "", "upload": upload},
    )
    assert response.status_code == 200
    assert "not UTF-8" in response.content.decode()
    assert not BibFile.objects.exists()


def test_entry_page_lists_the_notes_that_cite_it(admin_client, demo_loaded):
    """An entry's page says which notes cite it, with links to them."""
    entry = BibEntry.objects.get(key="Metropolis1953-eq")
    response = admin_client.get(reverse("admin:bibliography_bibentry_change", args=[entry.pk]))
    assert "A Calibration Study Cited from Two Bibliographies" in response.content.decode()


def test_the_admin_sets_a_file_public(admin_client, client):
    """The admin's "public" box goes through bibfile_set_public: the file is then served."""
    admin_client.post(
        reverse("admin:bibliography_bibfile_add"),
        {"name": "bib/refs.bib", "description": "", "raw": "@book{good, title={Kept}}\n"},
    )
    bibfile = BibFile.objects.get(name="bib/refs.bib")
    assert not bibfile.is_public
    response = admin_client.post(
        reverse("admin:bibliography_bibfile_change", args=[bibfile.pk]),
        {"name": "bib/refs.bib", "description": "", "is_public": "on", "raw": bibfile.raw},
    )
    assert response.status_code == 302
    assert BibFile.objects.get(pk=bibfile.pk).is_public
    from django.test import Client

    assert Client().get("/bib/refs.bib").status_code == 200
