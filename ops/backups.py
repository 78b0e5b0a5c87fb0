"""Backups of a whole site: the database as JSON with natural keys, media files, a manifest.

A backup is a folder (or the same folder as a .tar.gz):

    manifest.json        versions, applied migrations, rows per model, sha256 of every file
    data.json            `dumpdata --all --natural-foreign --natural-primary`, every app's rows
                         except those `migrate` recreates (content types, permissions) and
                         sessions; read in one REPEATABLE READ transaction on PostgreSQL
    media/…              the files of the default storage (MEDIA_ROOT or the bucket)
    bibliography/…       each .bib file as uploaded, for reading: restore takes them from data.json

Restore loads data.json into a migrated database that holds no content (or replaces the
content with --force), copies the media back, bumps the content generation so no cached page
of the old content is served, and re-renders if the rendering engine has changed since.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import platform
import shutil
import tarfile
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

import django
from django.apps import apps
from django.core import serializers
from django.core.cache import cache
from django.core.files import File
from django.core.files.storage import Storage, default_storage
from django.core.management import call_command
from django.core.management.base import CommandError
from django.core.management.color import no_style
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

from scidraft.markup import ENGINE_VERSION

from .views import version

FORMAT = "scidraft-backup"
FORMAT_VERSION = 1
# Rows `migrate` creates itself (matched by natural key when referenced) and transient rows
# (sessions, the rate limits' counts).
EXCLUDED = ["contenttypes", "auth.permission", "sessions", "accounts.ratelimitevent"]
CHUNK = 1024 * 1024
# dumpdata's JSON with full-precision times (ops/serializers.py).
SERIALIZER = "json-exact"

logger = logging.getLogger(__name__)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _safe_relative(name: str) -> PurePosixPath | None:
    path = PurePosixPath(name)
    if path.is_absolute() or not path.parts or any(part in ("..", "") for part in path.parts):
        return None
    return path


def storage_files(storage: Storage, prefix: str = "") -> Iterator[str]:
    """Every file name in a storage, recursively (an absent MEDIA_ROOT holds nothing)."""
    try:
        folders, files = storage.listdir(prefix)
    except FileNotFoundError:
        return
    for name in sorted(files):
        yield f"{prefix}/{name}" if prefix else name
    for folder in sorted(folders):
        yield from storage_files(storage, f"{prefix}/{folder}" if prefix else folder)


@contextmanager
def snapshot_transaction(using: str = DEFAULT_DB_ALIAS):
    """One read transaction: on PostgreSQL REPEATABLE READ, so every table is read as of the
    same moment while the site keeps writing. (SQLite's read transaction is a snapshot too.)"""
    connection = connections[using]
    outermost = not connection.in_atomic_block
    with transaction.atomic(using=using):
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield connection


def _applied_migrations(using: str = DEFAULT_DB_ALIAS) -> list[str]:
    recorder = MigrationRecorder(connections[using])
    return sorted(f"{app}.{name}" for app, name in recorder.applied_migrations())


def write_backup(stage: Path, *, storage: Storage | None = None) -> dict:
    """Write a backup into the empty folder `stage`; return its manifest."""
    storage = storage or default_storage
    data = stage / "data.json"
    serializers.register_serializer(SERIALIZER, "ops.serializers")
    with snapshot_transaction() as connection:
        call_command(
            "dumpdata",
            format=SERIALIZER,
            all=True,
            natural_foreign=True,
            natural_primary=True,
            exclude=EXCLUDED,
            output=str(data),
            verbosity=0,
        )
        migrations = _applied_migrations()
        database = connection.vendor
        if connection.vendor == "postgresql":
            database += f" {connection.pg_version}"
    rows = json.loads(data.read_text(encoding="utf-8"))
    counts = dict(sorted(Counter(row["model"] for row in rows).items()))

    files: dict[str, dict] = {}

    def record(path: Path) -> None:
        files[path.relative_to(stage).as_posix()] = {
            "sha256": sha256_file(path),
            "size": path.stat().st_size,
        }

    record(data)
    for row in rows:
        if row["model"] == "bibliography.bibfile":
            name = _safe_relative(row["fields"]["name"]) or PurePosixPath(f"{row['pk']}.bib")
            target = stage / "bibliography" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(row["fields"]["raw"], encoding="utf-8")
            record(target)
    for name in storage_files(storage):
        relative = _safe_relative(name)
        if relative is None:
            continue
        target = stage / "media" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        with storage.open(name, "rb") as source, target.open("wb") as out:
            shutil.copyfileobj(source, out, CHUNK)
        record(target)

    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "versions": {
            "scidraft": version(),
            "engine": ENGINE_VERSION,
            "django": django.get_version(),
            "python": platform.python_version(),
            "database": database,
        },
        "migrations": migrations,
        "counts": counts,
        "files": dict(sorted(files.items())),
    }
    (stage / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def is_archive(path: Path) -> bool:
    return path.name.endswith((".tar.gz", ".tgz"))


def backup(out: Path) -> dict:
    """Back up to a folder (created; must be empty) or to a .tar.gz (must not exist)."""
    if is_archive(out):
        if out.exists():
            raise CommandError(f"{out} exists; choose a new file name.")
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="scidraft-backup-") as tmp:
            manifest = write_backup(Path(tmp))
            partial = out.with_name(out.name + ".partial")
            with tarfile.open(partial, "w:gz") as archive:
                for path in sorted(Path(tmp).rglob("*")):
                    archive.add(path, arcname=path.relative_to(tmp).as_posix(), recursive=False)
            partial.rename(out)
        return manifest
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CommandError(f"{out} exists and is not an empty folder.")
    out.mkdir(parents=True, exist_ok=True)
    return write_backup(out)


@contextmanager
def opened(source: Path) -> Iterator[Path]:
    """The backup folder: `source` itself, or a .tar.gz unpacked to a temporary folder."""
    if source.is_dir():
        yield source
        return
    if not source.is_file():
        raise CommandError(f"{source} is neither a backup folder nor a .tar.gz file.")
    with tempfile.TemporaryDirectory(prefix="scidraft-restore-") as tmp:
        try:
            with tarfile.open(source, "r:*") as archive:
                archive.extractall(tmp, filter="data")  # no links out, no absolute paths
        except (tarfile.TarError, OSError) as exc:
            raise CommandError(f"{source} is not a readable .tar.gz: {exc}") from exc
        yield Path(tmp)


def read_manifest(folder: Path) -> dict:
    path = folder / "manifest.json"
    if not path.is_file():
        raise CommandError(f"No manifest.json in {folder}: not a SciDraft backup.")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT or manifest.get("format_version") != FORMAT_VERSION:
        raise CommandError(f"{path} is not a SciDraft backup of format version {FORMAT_VERSION}.")
    for name, expected in manifest["files"].items():
        relative = _safe_relative(name)
        file = folder / relative if relative else None
        if file is None or not file.is_file():
            raise CommandError(f"The backup is incomplete: {name} is missing.")
        if sha256_file(file) != expected["sha256"]:
            raise CommandError(f"The backup is damaged: {name} does not match its sha256.")
    return manifest


def content_counts() -> dict[str, int]:
    from bibliography.models import BibFile
    from notes.models import Note, Page

    return {
        "notes": Note._base_manager.count(),
        "pages": Page._base_manager.count(),
        "bibliography files": BibFile._base_manager.count(),
    }


def dumped_generation(data: Path) -> tuple[int, dt.datetime | None]:
    for row in json.loads(data.read_text(encoding="utf-8")):
        if row["model"] == "site.contentgeneration":
            return int(row["fields"]["value"]), dt.datetime.fromisoformat(
                row["fields"]["changed_at"]
            )
    return 0, None


def _excluded(meta) -> bool:
    return meta.app_label in EXCLUDED or meta.label_lower in EXCLUDED


def _replaced_tables() -> list[str]:
    """Tables emptied before loading: those of every backed-up model without a natural key,
    whether or not the backup has rows for it (the rows `migrate` created there, such as the
    built-in kinds, come back from the backup with their primary keys). Rows with natural
    keys (users, groups) are matched by that key instead, and updated."""
    tables: list[str] = []
    for model in apps.get_models(include_auto_created=True):
        meta = model._meta
        if meta.proxy or not meta.managed:
            continue
        owner = meta.auto_created._meta if meta.auto_created else meta
        if _excluded(owner) or hasattr(owner.model, "natural_key"):
            continue
        tables.append(meta.db_table)
    return tables


def restore(source: Path, *, force: bool = False, stdout=None) -> dict:
    """Restore a backup into this database (migrated; without content unless `force`)."""
    from scidraft.site.dependencies import SITE
    from scidraft.site.generation import GENERATION_KEY, publish_generation, tags_pending
    from scidraft.site.models import ContentGeneration

    def forget_generation() -> None:
        try:
            cache.delete(GENERATION_KEY)
        except Exception:  # a cache outage: the number expires by itself
            logger.warning("could not forget the cached content generation", exc_info=True)

    def say(message: str) -> None:
        if stdout is not None:
            stdout.write(message)

    with opened(source) as folder:
        manifest = read_manifest(folder)
        missing = sorted(set(manifest["migrations"]) - set(_applied_migrations()))
        if missing:
            raise CommandError(
                "This database lacks migrations the backup was made with: "
                f"{', '.join(missing[:10])}. Install the same or a newer SciDraft and run "
                "`manage.py migrate` first."
            )
        existing = content_counts()
        if any(existing.values()) and not force:
            held = ", ".join(f"{count} {what}" for what, count in existing.items() if count)
            raise CommandError(
                f"This database already holds content ({held}). Restore into an empty, "
                "migrated database, or pass --force to replace its content with the backup's."
            )
        connection = connections[DEFAULT_DB_ALIAS]
        with transaction.atomic():
            before = ContentGeneration.objects.filter(pk=1).values_list("value", flat=True)
            before = before.first() or 0
            tables = _replaced_tables()
            postgresql = connection.vendor == "postgresql"
            if postgresql:  # TRUNCATE refuses tables with deferred checks still pending
                with connection.cursor() as cursor:
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            connection.ops.execute_sql_flush(
                connection.ops.sql_flush(
                    no_style(), tables, reset_sequences=False, allow_cascade=True
                )
            )
            if postgresql:  # loaddata relies on deferred foreign keys
                with connection.cursor() as cursor:
                    cursor.execute("SET CONSTRAINTS ALL DEFERRED")
            call_command("loaddata", str(folder / "data.json"), verbosity=0)
            # (Read from the file: loading bumps the row as it sets many-to-many relations.)
            loaded, changed_at = dumped_generation(folder / "data.json")
            # Pages are cached under the generation number (and seeded by it): keep the
            # backup's number, so pages come out identical, unless this database has used it
            # already, when a page of the replaced content may still be cached under it.
            if loaded > before:
                row = {"value": loaded, "changed_at": changed_at or timezone.now()}
            else:
                row = {"value": before + 1, "changed_at": timezone.now()}
            if not ContentGeneration.objects.filter(pk=1).update(**row):
                ContentGeneration.objects.create(pk=1, **row)
            forget_generation()
            tags_pending([SITE])  # every page: the content was replaced
            transaction.on_commit(publish_generation)
            short = {
                label: (count, apps.get_model(label)._base_manager.count())
                for label, count in manifest["counts"].items()
            }
            short = {label: pair for label, pair in short.items() if pair[1] < pair[0]}
            if short:
                raise CommandError(f"Rows missing after loading (expected, found): {short}")
        say(f"Loaded {sum(manifest['counts'].values())} rows.")

        copied = 0
        for name in manifest["files"]:
            if not name.startswith("media/"):
                continue
            stored = name.removeprefix("media/")
            if default_storage.exists(stored):
                default_storage.delete(stored)
            with (folder / name).open("rb") as handle:
                saved = default_storage.save(stored, File(handle, name=stored))
            if saved != stored:
                raise CommandError(f"The storage saved {stored} as {saved}.")
            copied += 1
        say(f"Copied {copied} media files.")

    if manifest["versions"]["engine"] != ENGINE_VERSION:
        say(
            f"The backup was rendered by engine {manifest['versions']['engine']}, this is "
            f"{ENGINE_VERSION}: running rerender."
        )
        call_command("rerender", stdout=stdout)
    return manifest
