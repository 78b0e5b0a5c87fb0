"""manage.py backup and restore: a full round trip between two fresh PostgreSQL databases."""

from __future__ import annotations

import difflib
import json
import tarfile

import pytest

from tests.ops.helpers import createdb, dropdb, manage, postgres_available, postgres_url, shell

pytestmark = pytest.mark.skipif(
    not postgres_available(), reason="no PostgreSQL answers pg_isready at 127.0.0.1:5432"
)

SEED = """
from django.contrib.auth.models import Group, User
from notes.models import Note, NoteRevision
from notes.services import revision_record
alice = User.objects.create_user("alice", "alice@example.org", "correct horse battery 9")
alice.groups.add(Group.objects.get(name="Editor"))
User.objects.create_superuser("root", "root@example.org", "another long passphrase 7")
note = Note.objects.order_by("slug").first()
revision_record(note=note, kind=NoteRevision.Kind.SAVE, user=alice, message="backup test")
print(note.slug)
"""

# Everything a reader or an author could tell apart, printed as JSON in either database.
SNAPSHOT = """
import json, re
from django.apps import apps
from django.contrib.auth.models import Group, User
from django.test import Client
names = dict(User.objects.values_list("pk", "username"))
def rows(label):
    model = apps.get_model(label)
    users = {f.attname for f in model._meta.concrete_fields
             if f.is_relation and f.related_model is User}
    out = []
    for row in model._base_manager.order_by("pk").values():
        out.append({k: (names.get(v) if k in users else v) for k, v in row.items()})
    return out
labels = ["notes.note", "notes.noterevision", "notes.page", "notes.tag", "notes.author",
          "notes.noteauthor", "notes.notebibliography", "notes.notecitation",
          "notes.environment", "bibliography.bibfile", "bibliography.bibentry",
          "site.sitesettings", "site.menuitem", "site.entryset", "site.contentgeneration"]
data = {label: rows(label) for label in labels}
data["note_tags"] = sorted(apps.get_model("notes.note").tags.through.objects.values_list(
    "note_id", "tag_id"))
data["users"] = [
    {**{k: v for k, v in u.items() if k != "id"},
     "groups": sorted(User.objects.get(pk=u["id"]).groups.values_list("name", flat=True))}
    for u in User.objects.order_by("username").values()]
data["groups"] = {g.name: sorted(g.permissions.values_list("codename", flat=True))
                  for g in Group.objects.all()}
client = Client()
slug = apps.get_model("notes.note").objects.order_by("slug").first().slug
pages = {}
for url in ["/", "/tags/", "/about/", f"/notes/{slug}/", "/index.xml", "/search/?q=proof"]:
    response = client.get(url)
    pages[url] = [response.status_code, re.sub(
        r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())]
data["pages"] = pages
data["generation_after"] = rows("site.contentgeneration")
print(json.dumps(data, default=str, sort_keys=True))
"""


def _snapshot(env: dict[str, str]) -> dict:
    result = shell(SNAPSHOT, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def _first_difference(left, right):
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for a, b in zip(left, right, strict=True):
            if a != b:
                if isinstance(a, dict) and isinstance(b, dict):
                    return {k: (a.get(k), b.get(k)) for k in a.keys() | b.keys() if a[k] != b[k]}
                return _first_difference(a, b)
    if isinstance(left, dict) and isinstance(right, dict):
        for key in left.keys() | right.keys():
            if left.get(key) != right.get(key):
                return key, _first_difference(left.get(key), right.get(key))
    if isinstance(left, str) and isinstance(right, str):
        lines = difflib.unified_diff(left.splitlines(), right.splitlines(), lineterm="", n=0)
        return "\n".join(list(lines)[:12])
    return f"{left!r:.200} against {right!r:.200}"


def _files(root) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.mark.slow
def test_backup_then_restore_into_a_fresh_database_gives_the_same_site(tmp_path):
    """Notes, revisions, bibliographies, users, media and rendered pages survive a round trip."""
    source_media = tmp_path / "media-source"
    target_media = tmp_path / "media-target"
    (source_media / "uploads").mkdir(parents=True)
    (source_media / "uploads" / "figure.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    (source_media / "notes.txt").write_text("a media file at the top level\n")
    archive = tmp_path / "site.tar.gz"
    source = target = None
    try:
        source = createdb()
        target = createdb()
        env_source = {"DEBUG": "1", "DATABASE_URL": postgres_url(source)}
        env_source["MEDIA_ROOT"] = str(source_media)
        env_target = {
            "DEBUG": "1",
            "DATABASE_URL": postgres_url(target),
            "MEDIA_ROOT": str(target_media),
        }
        for env in (env_source, env_target):
            migrated = manage("migrate", "--noinput", env=env)
            assert migrated.returncode == 0, migrated.stderr
        seeded = manage("seed_demo", env=env_source)
        assert seeded.returncode == 0, seeded.stderr
        extra = shell(SEED, env=env_source)
        assert extra.returncode == 0, extra.stderr

        made = manage("backup", str(archive), env=env_source)
        assert made.returncode == 0, made.stderr
        with tarfile.open(archive) as opened:
            names = set(opened.getnames())
            manifest = json.load(opened.extractfile("manifest.json"))
        assert {"manifest.json", "data.json", "media/uploads/figure.png"} <= names
        assert manifest["counts"]["notes.note"] == 29
        assert manifest["counts"]["auth.user"] == 2
        assert manifest["counts"]["notes.noterevision"] >= 1
        assert any(name.startswith("bibliography/") for name in manifest["files"])
        assert all(len(entry["sha256"]) == 64 for entry in manifest["files"].values())

        restored = manage("restore", str(archive), env=env_target)
        assert restored.returncode == 0, restored.stdout + restored.stderr

        before, after = _snapshot(env_source), _snapshot(env_target)
        assert before.keys() == after.keys()
        for key in before:
            assert before[key] == after[key], (key, _first_difference(before[key], after[key]))
        assert len(after["notes.note"]) == 29
        assert [user["username"] for user in after["users"]] == ["alice", "root"]
        assert all(status == 200 for status, _ in after["pages"].values())
        assert _files(target_media) == _files(source_media)

        again = manage("restore", str(archive), env=env_target)
        assert again.returncode != 0
        assert "already holds content (29 notes" in again.stderr
        assert "--force" in again.stderr
        forced = manage("restore", "--force", str(archive), env=env_target)
        assert forced.returncode == 0, forced.stderr
        # Replacing content that readers may have cached moves to a new generation, which
        # also reseeds the recommendations: everything else is the backup's again.
        replaced = _snapshot(env_target)
        seeded = {"pages", "generation_after", "site.contentgeneration"}
        for key in before.keys() - seeded:
            assert replaced[key] == before[key], (
                key,
                _first_difference(before[key], replaced[key]),
            )
        assert (
            replaced["site.contentgeneration"][0]["value"] > before["generation_after"][0]["value"]
        )
    finally:
        for name in (source, target):
            if name:
                dropdb(name)
