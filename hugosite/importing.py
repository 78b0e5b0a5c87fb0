"""Import a Hugo site that uses the SciDraft theme (`import_hugo`), without loss.

hugosite.reading reads the files (model-free) and hugosite.loading writes config, bibliographies,
notes and pages; this module adds what only a whole site on disk has: data files
(`data/*.yaml`, for promotion-visual) and images (`static/**` and page-bundle resources),
which land in MEDIA_ROOT/hugo/ and are recorded as HugoAsset rows, idempotent by content hash.

Images keep their URLs. Note bodies are stored exactly as written, so `![x](/img/x.png)`
still says `/img/x.png`; hugosite.views.hugo_static serves any path recorded as an imported
`static/` file at that original URL (the HugoAsset table is the list of what may be served).
Bundle resources are served from MEDIA_URL (`/media/hugo/bundles/<bundle>/<file>`);
promotion-visual rows name them by file name, and the renderer's data lookup
(notes.rendering) turns those names into these URLs.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.db import transaction

from notes.models import Note
from notes.services import note_render_store

from .front_matter import (
    MAX_DEPTH,
    FrontMatterError,
    expanded_size_check,
    jsonable,
    split_front_matter,
)
from .loading import LoadPolicy, LoadReport, RowChange, changed_fields, hugo_site_load
from .models import DataFile, HugoAsset
from .problems import Problem
from .reading import HugoSite, NoteFiles, read_site
from .tree import OUTSIDE, site_files

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".svg", ".gif", ".webp", ".avif", ".ico", ".bmp"}
DATA_SUFFIXES = {".yaml", ".yml", ".toml", ".json"}
KINDS = (
    "settings",
    "menus",
    "entry sets",
    "bibliography files",
    "data files",
    "images",
    "notes",
    "pages",
)


def media_root() -> Path:
    return Path(settings.MEDIA_ROOT)


# --- Data files --------------------------------------------------------------------------------


def _parse_data(path: Path, text: str) -> Any:
    if path.suffix == ".toml":
        return tomllib.loads(text)
    if path.suffix == ".json":
        return json.loads(text)
    return yaml.safe_load(text)


def data_files_import(root: Path, report: LoadReport) -> bool:
    """data/**.{yaml,toml,json} → DataFile rows; returns whether any changed."""
    changed = False
    folder = root / "data"
    for path in _files(root, folder, report):
        if path.suffix.lower() not in DATA_SUFFIXES or not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        try:
            text = path.read_text(encoding="utf-8")
            content = _parse_data(path, text)
            expanded_size_check(content)
            content = jsonable(content)
        except RecursionError:
            report.problems.append(
                Problem(relative, f"cannot read the data file: nested more than {MAX_DEPTH} deep")
            )
            continue
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as error:
            line = getattr(getattr(error, "problem_mark", None), "line", None)
            report.problems.append(
                Problem(relative, f"cannot read the data file: {error}", line + 1 if line else None)
            )
            continue
        name = path.relative_to(folder).with_suffix("").as_posix()
        row = DataFile.objects.filter(name=name).first()
        if row is None:
            DataFile.objects.create(name=name, path=relative, raw=text, content=content)
            report.count("data files", "created")
            changed = True
        elif (row.path, row.raw, row.content) != (relative, text, content):
            fields = changed_fields(row, {"path": relative, "raw": text, "content": content})
            row.path, row.raw, row.content = relative, text, content
            row.save()
            report.count("data files", "updated")
            report.changes.append(RowChange("data files", name, "update", fields))
            changed = True
        else:
            report.count("data files", "unchanged")
    return changed


# --- Images ----------------------------------------------------------------------------


def _headless_bundle(index: Path) -> bool:
    try:
        data = split_front_matter(index.read_text(encoding="utf-8")).data
    except (OSError, UnicodeDecodeError, FrontMatterError):
        return False
    return any(key.lower() == "headless" and value is True for key, value in data.items())


def _files(root: Path, folder: Path, report: LoadReport) -> list[Path]:
    """The files under `folder` that stay in the site; links out of it go to the report."""
    listing = site_files(root, folder)
    report.problems.extend(
        Problem(path.relative_to(root).as_posix(), OUTSIDE) for path in listing.outside
    )
    return listing.files


def _asset_sources(root: Path, report: LoadReport) -> list[tuple[str, str, Path]]:
    """(kind, path, file) of every file to copy: all of static/, and under content/ the
    images of page bundles plus the index.md of headless bundles (they have no Page row).
    Links out of the site are not followed (read_site reports those under content/)."""
    found = []
    static = root / "static"
    for path in _files(root, static, report):
        if path.is_file():
            found.append((HugoAsset.Kind.STATIC, path.relative_to(static).as_posix(), path))
    content = root / "content"
    for path in site_files(root, content).files:
        if not path.is_file():
            continue
        keep = path.suffix.lower() in IMAGE_SUFFIXES or (
            path.name == "index.md" and path.parent != content and _headless_bundle(path)
        )
        if keep:
            found.append((HugoAsset.Kind.BUNDLE, path.relative_to(content).as_posix(), path))
    return found


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.part")
    temporary.write_bytes(data)
    os.replace(temporary, target)


def assets_import(root: Path, report: LoadReport, *, write_files: bool = True) -> bool:
    """Copy images into MEDIA_ROOT/hugo/; unchanged files (same hash, file present) are not
    rewritten. Returns whether a bundle resource changed (promotion-visual URLs)."""
    bundles_changed = False
    existing = {(asset.kind, asset.path): asset for asset in HugoAsset.objects.all()}
    for kind, relative, path in _asset_sources(root, report):
        try:
            data = path.read_bytes()
        except OSError as error:
            report.problems.append(Problem(path.relative_to(root).as_posix(), str(error)))
            continue
        digest = hashlib.sha256(data).hexdigest()
        asset = existing.get((kind, relative))
        target = media_root() / (asset or HugoAsset(kind=kind, path=relative)).storage_name
        on_disk = target.is_file() and target.stat().st_size == len(data)
        if asset is not None and asset.sha256 == digest and on_disk:
            report.count("images", "unchanged")
            continue
        if write_files:
            _write_atomically(target, data)
        if asset is None:
            HugoAsset.objects.create(kind=kind, path=relative, sha256=digest, size=len(data))
            report.count("images", "created")
        else:
            asset.sha256, asset.size = digest, len(data)
            asset.save()
            report.count("images", "updated")
            report.changes.append(RowChange("images", relative, "update", {"file": (None, None)}))
        bundles_changed = bundles_changed or kind == HugoAsset.Kind.BUNDLE
    return bundles_changed


# --- The whole site --------------------------------------------------------------------


def hugo_site_import(
    *,
    root: Path | str,
    site: HugoSite | None = None,
    user=None,
    write_files: bool = True,
    policy: LoadPolicy | None = None,
    advance=None,
) -> LoadReport:
    """Data files and images first (notes render promotion-visual from them), then the
    config, bibliographies, notes and pages, as `policy` allows (hugosite.loading.LoadPolicy:
    the site's own settings, menus and entry sets are kept unless replaced). Call inside a
    transaction. `advance(n)` is called as n more notes are loaded."""
    root = Path(root)
    site = site or read_site(root)
    report = LoadReport()
    data_changed = data_files_import(root, report)
    bundles_changed = assets_import(root, report, write_files=write_files)
    loaded = hugo_site_load(site=site, user=user, policy=policy, advance=advance)
    report.add(loaded)
    report.problems = site.problems + report.problems + loaded.problems[len(site.problems) :]
    if data_changed or bundles_changed:
        # Their stored render holds the data's rows; the source hash does not cover data.
        slugs = list(_note_paths(site))
        for note in Note.objects.filter(slug__in=slugs, body__contains="promotion-visual"):
            note_render_store(note=note, force=True)
    return report


def _note_paths(site: HugoSite) -> dict[str, str]:
    """Slug → path of the site's notes, without reading them again."""
    if isinstance(site.notes, NoteFiles):
        return {slug: path for path, slug in site.notes.located}
    return {source.slug: source.path for source in site.notes}


def note_warnings(site: HugoSite) -> list[str]:
    """`path:line: code: message` for every imported note whose render warned."""
    sources = _note_paths(site)
    lines = []
    notes = Note.objects.filter(slug__in=sources).exclude(render_warnings=[]).order_by("slug")
    for note in notes.only("slug", "render_warnings"):
        path = sources[note.slug]
        offset = 0
        try:
            offset = split_front_matter((site.root / path).read_text(encoding="utf-8")).body_line
            offset -= 1
        except (OSError, UnicodeDecodeError, FrontMatterError):
            pass
        for warning in note.render_warnings:
            line = (warning.get("line") or 0) + offset
            lines.append(f"{path}:{line}: {warning['code']}: {warning['message']}")
    return lines


def _one_publish_on_commit() -> None:
    """Every write of the import bumped the content generation and queued a publish of it for
    the commit: thousands of identical callbacks for one transaction. Keep the last one."""
    from django.db import connection

    from scidraft.site.generation import publish_generation

    queued = connection.run_on_commit
    publishes = [entry for entry in queued if entry[1] is publish_generation]
    if len(publishes) > 1:
        connection.run_on_commit = [
            entry for entry in queued if entry[1] is not publish_generation
        ] + publishes[-1:]


class DryRunRollback(Exception):
    """Raised at the end of a dry run so the transaction rolls back."""


def import_site(
    root: Path | str,
    *,
    dry_run: bool = False,
    user=None,
    policy: LoadPolicy | None = None,
    site: HugoSite | None = None,
    advance=None,
) -> tuple[LoadReport, list[str], HugoSite]:
    """What `import_hugo` does: (report, note warnings, the site read). A dry run reports
    what the import would change, then rolls it all back and writes no file. `site` is the
    site read from `root` if the caller has read it; `advance(n)` is called as n more notes
    are loaded."""
    root = Path(root)
    site = site or read_site(root)
    result: dict[str, Any] = {}
    try:
        with transaction.atomic():
            result["report"] = hugo_site_import(
                root=root,
                site=site,
                user=user,
                write_files=not dry_run,
                policy=policy,
                advance=advance,
            )
            result["warnings"] = note_warnings(site)
            _one_publish_on_commit()
            if dry_run:
                raise DryRunRollback
    except DryRunRollback:
        pass
    return result["report"], result["warnings"], site
