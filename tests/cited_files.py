"""A bibliography file and a published note citing it, for the tests of what readers see of
a note's references when the file changes (notes.live_references and the editor's pages)."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from bibliography import services as bib_services
from notes.models import Status
from scidraft.site.caching import local_pages
from scidraft.site.models import SiteSettings
from tests.factories import bib_file, publish, write

BIB = """@string{jml = "Journal of Old Names"}

@article{knuth84,
  author = {Knuth, Donald E.},
  title = {%s},
  journal = jml,
  year = {1984}
}

@book{lamport94,
  author = {Lamport, Leslie},
  title = {LaTeX: A Document Preparation System},
  year = {1994}
}
"""
BODY = 'Literate programming \\cite{knuth84}.\n\n{{< references bib="bib/refs.bib" >}}\n'


def require_review(on: bool = True) -> None:
    site = SiteSettings.objects.current()
    site.require_review = on
    site.save()


@pytest.fixture
def bibfile(author):
    return bib_file(author, "bib/refs.bib", BIB % "Literate Programming")


@pytest.fixture
def published(author, editor_user, note, bibfile):
    """The author's note citing knuth84 from their file, published by an Editor."""
    published = publish(write(note, author, body=BODY), editor_user)
    assert published.status == Status.PUBLISHED
    return published


def replace_title(author, bibfile, title: str) -> None:
    bib_services.bibfile_replace(user=author, bibfile_id=bibfile.pk, raw=BIB % title)


def public_text(client, path: str) -> str:
    """`path` as an anonymous reader gets it, rendered anew (no cached page)."""
    cache.clear()
    local_pages.clear()
    client.logout()
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def public_exports(client, slug: str) -> str:
    return "".join(
        public_text(client, f"/notes/{slug}/references.{suffix}")
        for suffix in ("bib", "ris", "json")
    )
