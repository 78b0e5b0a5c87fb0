"""A site folder's files: links out of the site are never read, and are named in the report."""

from __future__ import annotations

import os
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from bibliography.models import BibFile
from hugosite.models import DataFile, HugoAsset
from hugosite.tree import site_files
from notes.models import Note, Page

SECRET = "SECRET_KEY = 'do-not-publish-me'\n"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def linked_site(tmp_path: Path) -> Path:
    """A site whose folders hold links out of it (absolute and relative, to files and to
    folders) beside links that stay inside it."""
    outside = tmp_path / "outside"
    (outside / "notes").mkdir(parents=True)
    (outside / "secret.txt").write_text(SECRET)
    (outside / "notes/stolen.md").write_text(
        '+++\ntitle = "Stolen"\ndate = 2026-01-02\n+++\nNot part of the site.\n'
    )
    site = tmp_path / "site"
    for folder in ("content/notes", "static/img", "data", "assets/bib", "shared/notes"):
        (site / folder).mkdir(parents=True)
    (site / "hugo.toml").write_text('title = "Linked"\n')
    (site / "static/img/x.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 32)
    (site / "shared/notes/kept.md").write_text(
        '+++\ntitle = "Kept"\ndate = 2026-01-02\n+++\nShared inside the site.\n'
    )
    (site / "content/notes/own.md").write_text(
        '+++\ntitle = "Own"\ndate = 2026-01-02\n+++\nThe site\'s own note.\n'
    )
    # Out of the site: a file by absolute and by relative path, folders likewise.
    os.symlink(outside / "secret.txt", site / "static/leak.txt")
    os.symlink("../../../outside/secret.txt", site / "static/img/relative-leak.png")
    os.symlink(outside / "notes", site / "content/notes/elsewhere")
    os.symlink("../../outside", site / "static/mirror")
    os.symlink(outside / "secret.txt", site / "data/leak.yaml")
    os.symlink("../../../outside/secret.txt", site / "assets/bib/leak.bib")
    # Inside the site: followed.
    os.symlink("x.png", site / "static/img/alias.png")
    os.symlink("../../shared/notes", site / "content/notes/shared")
    return site


OUT_OF_SITE = [
    "assets/bib/leak.bib",
    "content/notes/elsewhere",
    "data/leak.yaml",
    "static/img/relative-leak.png",
    "static/leak.txt",
    "static/mirror",
]


def test_listing_keeps_links_inside_and_sets_apart_links_out(tmp_path):
    """site_files lists files reached through links within the site, and every file or
    folder link whose real path leaves it apart, unread."""
    site = linked_site(tmp_path)
    static = site_files(site, site / "static")
    assert [p.relative_to(site).as_posix() for p in static.files] == [
        "static/img/alias.png",
        "static/img/x.png",
    ]
    assert [p.relative_to(site).as_posix() for p in static.outside] == [
        "static/img/relative-leak.png",
        "static/leak.txt",
        "static/mirror",
    ]
    notes = site_files(site, site / "content/notes")
    assert [p.relative_to(site).as_posix() for p in notes.files] == [
        "content/notes/own.md",
        "content/notes/shared/kept.md",
    ]
    assert [p.relative_to(site).as_posix() for p in notes.outside] == ["content/notes/elsewhere"]


def test_a_site_folder_that_is_a_link_out_is_not_walked(tmp_path):
    """static/ itself linking out of the site is skipped whole."""
    site = tmp_path / "site"
    site.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside/secret.txt").write_text(SECRET)
    os.symlink(tmp_path / "outside", site / "static")
    listing = site_files(site, site / "static")
    assert listing.files == [] and listing.outside == [site / "static"]


@pytest.mark.django_db
def test_import_reads_nothing_outside_the_site(tmp_path, media):
    """import_hugo copies, stores and publishes no file whose real path is outside the site,
    names each skipped link in its report, and imports what links inside the site reach."""
    site = linked_site(tmp_path)
    out = StringIO()
    call_command("import_hugo", str(site), stdout=out)
    report = out.getvalue()
    for relative in OUT_OF_SITE:
        assert f"{relative}: skipped: a link to outside the site folder" in report
    assert set(Note.objects.values_list("slug", flat=True)) == {"own", "kept"}
    assert set(HugoAsset.objects.values_list("path", flat=True)) == {"img/x.png", "img/alias.png"}
    assert not DataFile.objects.exists() and not BibFile.objects.exists()
    copied = [path.read_bytes() for path in Path(media).rglob("*") if path.is_file()]
    assert copied and not any(b"SECRET_KEY" in data for data in copied)
    assert not Page.objects.filter(body__contains="SECRET_KEY").exists()


@pytest.mark.django_db
def test_a_config_file_linking_out_is_not_read(tmp_path):
    """hugo.toml linking out of the site is reported, not parsed."""
    site = tmp_path / "site"
    (site / "content/notes").mkdir(parents=True)
    (tmp_path / "hugo.toml").write_text('title = "Elsewhere"\n')
    os.symlink(tmp_path / "hugo.toml", site / "hugo.toml")
    out = StringIO()
    call_command("import_hugo", str(site), stdout=out)
    assert "hugo.toml: skipped: a link to outside the site folder" in out.getvalue()
