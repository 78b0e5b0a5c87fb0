"""backup and restore on the test database: engine changes, damaged and foreign backups."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from notes.models import Note


@pytest.fixture
def backup_dir(demo_loaded, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    (tmp_path / "media" / "img").mkdir(parents=True)
    (tmp_path / "media" / "img" / "a.png").write_bytes(b"png bytes")
    out = tmp_path / "backup"
    call_command("backup", str(out), stdout=io.StringIO())
    return out


@pytest.mark.django_db
def test_restore_rerenders_when_the_backup_came_from_another_engine(backup_dir):
    """A manifest naming another engine version makes restore run `rerender`."""
    manifest = json.loads((backup_dir / "manifest.json").read_text())
    manifest["versions"]["engine"] = "0"
    (backup_dir / "manifest.json").write_text(json.dumps(manifest))
    before = dict(Note.objects.values_list("slug", "rendered_html"))
    out = io.StringIO()
    call_command("restore", str(backup_dir), "--force", stdout=out)
    assert "engine 0" in out.getvalue()
    assert "running rerender" in out.getvalue()
    assert dict(Note.objects.values_list("slug", "rendered_html")) == before


@pytest.mark.django_db
def test_restore_of_the_same_engine_does_not_rerender(backup_dir):
    """Rendered HTML is data: the same engine version restores it as it is."""
    out = io.StringIO()
    call_command("restore", str(backup_dir), "--force", stdout=out)
    assert "rerender" not in out.getvalue()
    assert Note.objects.count() == 29


@pytest.mark.django_db
def test_restore_refuses_a_damaged_backup(backup_dir):
    """A file whose sha256 no longer matches the manifest stops the restore before loading."""
    (backup_dir / "media" / "img" / "a.png").write_bytes(b"tampered")
    with pytest.raises(CommandError, match="damaged: media/img/a.png"):
        call_command("restore", str(backup_dir), "--force")


@pytest.mark.django_db
def test_restore_refuses_a_database_with_content_without_force(backup_dir):
    """Notes present and no --force: a clear error, nothing changed."""
    with pytest.raises(CommandError, match="already holds content .*--force"):
        call_command("restore", str(backup_dir))


@pytest.mark.django_db
def test_backup_refuses_to_overwrite(backup_dir, tmp_path):
    """A non-empty folder or an existing archive is never overwritten."""
    with pytest.raises(CommandError, match="not an empty folder"):
        call_command("backup", str(backup_dir))
    archive = tmp_path / "x.tar.gz"
    archive.write_bytes(b"")
    with pytest.raises(CommandError, match="exists"):
        call_command("backup", str(archive))


def test_restore_rejects_something_that_is_not_a_backup(tmp_path):
    """A folder without manifest.json is not taken for a backup."""
    with pytest.raises(CommandError, match="not a SciDraft backup"):
        call_command("restore", str(tmp_path))
