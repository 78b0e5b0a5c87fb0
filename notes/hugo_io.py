"""Move a Hugo site in (`import_hugo`) and out (`export_hugo`) again, without loss.

Import = scidraft.hugo.read_site (model-free) + notes.services.hugo_site_load (config,
bibliographies, notes, pages), plus what only a whole site has: data files (`data/*.yaml`,
for promotion-visual) and images (`static/**` and page-bundle resources), which land in
MEDIA_ROOT/hugo/ and are recorded as HugoAsset rows, idempotent by content hash.

Images keep their URLs. Note bodies are stored exactly as written, so `![x](/img/x.png)`
still says `/img/x.png`; `hugo_static` serves any path recorded as an imported `static/` file
at that original URL (the HugoAsset table is the list of what may be served), and exported
bodies stay byte for byte what was imported. Bundle resources are served from MEDIA_URL
(`/media/hugo/bundles/<bundle>/<file>`); promotion-visual rows name them by file name, and
`resolve_data` turns those names into these URLs.

Export writes the same layout back: hugo.toml (written with tomli_w), content/notes/<slug>.md
with TOML front matter in the theme's key names, standalone pages, assets/<bib name>, data
files and images at their original paths. Importing the export into an empty database gives
the same rows and the same rendered HTML (tests/notes/test_import_hugo.py).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import mimetypes
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import tomli_w
import yaml
from django.conf import settings
from django.db import transaction
from django.http import FileResponse, Http404
from django.utils.text import slugify

from bibliography.models import BibFile
from scidraft.hugo import FrontMatterError, HugoSite, Problem, read_site, split_front_matter
from scidraft.site.models import EntrySet, MenuItem, SiteSettings

from .models import DataFile, HugoAsset, Note, Page, Status
from .services import LoadReport, hugo_site_load, note_render_store

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".svg", ".gif", ".webp", ".avif", ".ico", ".bmp"}
DATA_SUFFIXES = {".yaml", ".yml", ".toml", ".json"}
# The headless bundle whose images promotion-visual rows name (theme-spec §2.10).
PROMOTION_BUNDLE = "resume-templates/modern-professional-resume"
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


# --- Import: data files ------------------------------------------------------------------------


def _parse_data(path: Path, text: str) -> Any:
    if path.suffix == ".toml":
        return tomllib.loads(text)
    if path.suffix == ".json":
        return json.loads(text)
    return yaml.safe_load(text)


def data_files_import(root: Path, report: LoadReport) -> bool:
    """data/**.{yaml,toml,json} → DataFile rows; returns whether any changed."""
    from scidraft.hugo import _jsonable  # dates in data files become ISO strings, as in params

    changed = False
    folder = root / "data"
    for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
        if path.suffix.lower() not in DATA_SUFFIXES or not path.is_file():
            continue
        relative = path.relative_to(root).as_posix()
        try:
            text = path.read_text(encoding="utf-8")
            content = _jsonable(_parse_data(path, text))
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
            row.path, row.raw, row.content = relative, text, content
            row.save()
            report.count("data files", "updated")
            changed = True
        else:
            report.count("data files", "unchanged")
    return changed


def resolve_data(name: str) -> Any:
    """The renderer's data lookup: a data file's content, image names resolved to URLs."""
    row = DataFile.objects.filter(name=name).values_list("content", flat=True).first()
    if row is None or not isinstance(row, dict) or not isinstance(row.get("rows"), list):
        return row
    bundled = {
        Path(path).name: path
        for path in HugoAsset.objects.filter(
            kind=HugoAsset.Kind.BUNDLE, path__startswith=PROMOTION_BUNDLE + "/"
        ).values_list("path", flat=True)
    }
    if not bundled:
        return row
    rows = []
    for data_row in row["rows"]:
        if isinstance(data_row, dict) and isinstance(data_row.get("images"), list):
            images = []
            for image in data_row["images"]:
                if isinstance(image, dict) and str(image.get("file", "")) in bundled:
                    path = bundled[str(image["file"])]
                    image = {**image, "file": f"{settings.MEDIA_URL}hugo/bundles/{path}"}
                images.append(image)
            data_row = {**data_row, "images": images}
        rows.append(data_row)
    return {**row, "rows": rows}


# --- Import: images ----------------------------------------------------------------------------


def _headless_bundle(index: Path) -> bool:
    try:
        data = split_front_matter(index.read_text(encoding="utf-8")).data
    except (OSError, UnicodeDecodeError, FrontMatterError):
        return False
    return any(key.lower() == "headless" and value is True for key, value in data.items())


def _asset_sources(root: Path) -> list[tuple[str, str, Path]]:
    """(kind, path, file) of every file to copy: all of static/, and under content/ the
    images of page bundles plus the index.md of headless bundles (they have no Page row)."""
    found = []
    static = root / "static"
    if static.is_dir():
        for path in sorted(static.rglob("*")):
            if path.is_file():
                found.append((HugoAsset.Kind.STATIC, path.relative_to(static).as_posix(), path))
    content = root / "content"
    if content.is_dir():
        for path in sorted(content.rglob("*")):
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
    for kind, relative, path in _asset_sources(root):
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
        bundles_changed = bundles_changed or kind == HugoAsset.Kind.BUNDLE
    return bundles_changed


def hugo_static(request, path: str):
    """Serve an imported static/ file at its original URL (/img/x.png), and nothing else."""
    asset = HugoAsset.objects.filter(kind=HugoAsset.Kind.STATIC, path=path).first()
    if asset is None:
        raise Http404("No such file.")
    target = media_root() / asset.storage_name
    if not target.is_file():
        raise Http404("No such file.")
    content_type = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    response = FileResponse(target.open("rb"), content_type=content_type)
    response["Cache-Control"] = "public, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    return response


# --- Import: the whole site --------------------------------------------------------------------


def hugo_site_import(
    *, root: Path | str, site: HugoSite | None = None, user=None, write_files: bool = True
) -> LoadReport:
    """Data files and images first (notes render promotion-visual from them), then the
    config, bibliographies, notes and pages. Call inside a transaction."""
    root = Path(root)
    site = site or read_site(root)
    report = LoadReport()
    data_changed = data_files_import(root, report)
    bundles_changed = assets_import(root, report, write_files=write_files)
    loaded = hugo_site_load(site=site, user=user)
    for kind, counter in loaded.counts.items():
        report.counts.setdefault(kind, counter.__class__()).update(counter)
    report.problems = site.problems + report.problems + loaded.problems[len(site.problems) :]
    if data_changed or bundles_changed:
        # Their stored render holds the data's rows; the source hash does not cover data.
        slugs = [source.slug for source in site.notes]
        for note in Note.objects.filter(slug__in=slugs, body__contains="promotion-visual"):
            note_render_store(note=note, force=True)
    return report


def note_warnings(site: HugoSite) -> list[str]:
    """`path:line: code: message` for every imported note whose render warned."""
    sources = {source.slug: source for source in site.notes}
    lines = []
    notes = Note.objects.filter(slug__in=sources).exclude(render_warnings=[]).order_by("slug")
    for note in notes.only("slug", "render_warnings"):
        source = sources[note.slug]
        offset = 0
        try:
            offset = split_front_matter(
                (site.root / source.path).read_text(encoding="utf-8")
            ).body_line
            offset -= 1
        except (OSError, UnicodeDecodeError, FrontMatterError):
            pass
        for warning in note.render_warnings:
            line = (warning.get("line") or 0) + offset
            lines.append(f"{source.path}:{line}: {warning['code']}: {warning['message']}")
    return lines


def _one_publish_on_commit() -> None:
    """Every write of the import bumped the content generation and queued a publish of it for
    the commit: thousands of identical callbacks for one transaction. Keep the last one."""
    from django.db import connection

    from scidraft.site.caching import publish_generation

    queued = connection.run_on_commit
    publishes = [entry for entry in queued if entry[1] is publish_generation]
    if len(publishes) > 1:
        connection.run_on_commit = [
            entry for entry in queued if entry[1] is not publish_generation
        ] + publishes[-1:]


class DryRunRollback(Exception):
    """Raised at the end of a dry run so the transaction rolls back."""


def import_site(
    root: Path | str, *, dry_run: bool = False, user=None
) -> tuple[LoadReport, list[str], HugoSite]:
    """What `import_hugo` does: (report, note warnings, the site read)."""
    root = Path(root)
    site = read_site(root)
    result: dict[str, Any] = {}
    try:
        with transaction.atomic():
            result["report"] = hugo_site_import(
                root=root, site=site, user=user, write_files=not dry_run
            )
            result["warnings"] = note_warnings(site)
            _one_publish_on_commit()
            if dry_run:
                raise DryRunRollback
    except DryRunRollback:
        pass
    return result["report"], result["warnings"], site


# --- Export ------------------------------------------------------------------------------------

_NOTE_FLAGS = (
    ("disable_share", "disableShare"),
    ("search_hidden", "searchHidden"),
    ("hidden_in_rss", "hiddenInRss"),
    ("robots_noindex", "robotsNoIndex"),
)
_PAGE_FLAGS = {
    "show_toc": ("ShowToc", None),
    "show_reading_time": ("ShowReadingTime", None),
    "show_word_count": ("ShowWordCount", None),
    "show_breadcrumbs": ("ShowBreadCrumbs", None),
    "show_post_nav_links": ("ShowPostNavLinks", None),
    "show_code_copy_buttons": ("ShowCodeCopyButtons", None),
    "show_related_posts": ("ShowRelatedPosts", None),
    "hide_meta": ("hideMeta", False),
    "hide_author": ("hideAuthor", False),
    "hide_description": ("hideDescription", False),
    "hide_summary": ("hideSummary", False),
    "hide_footer": ("hideFooter", False),
    "comments": ("comments", False),
    "disable_anchored_headings": ("disableAnchoredHeadings", False),
    "search_hidden": ("searchHidden", False),
    "hidden_in_rss": ("hiddenInRss", False),
    "robots_noindex": ("robotsNoIndex", False),
    "disable_share": ("disableShare", False),
}


def _date_out(moment: dt.datetime, offset_minutes: int | None) -> dt.date | dt.datetime:
    """The date as written: in its offset, or (no offset) naive UTC, a bare date at midnight."""
    if offset_minutes is None:
        naive = moment.astimezone(dt.UTC).replace(tzinfo=None)
        return naive.date() if naive.time() == dt.time() else naive
    return moment.astimezone(dt.timezone(dt.timedelta(minutes=offset_minutes)))


def _identity(author) -> str:
    """What to write as `author` so that importing it gives back this handle and name."""
    handle = slugify(author.name, allow_unicode=True) or "author"
    return author.name if handle == author.handle else author.handle


def _without_none(value: Any) -> Any:
    """TOML has no null: drop None values (YAML front matter can have them)."""
    if isinstance(value, dict):
        return {key: _without_none(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_none(item) for item in value if item is not None]
    return value


def note_front_matter(note: Note) -> dict[str, Any]:
    """Every field with a non-default value, in the theme's key names and case."""
    matter: dict[str, Any] = {}
    if note.title:
        matter["title"] = note.title
    matter["date"] = _date_out(note.date, note.date_offset_minutes)
    if note.status != Status.PUBLISHED:
        matter["draft"] = True
    authors = [_identity(link.author) for link in note.authorships.all()]
    if authors:
        matter["author"] = authors[0] if len(authors) == 1 else authors
    if note.institute:
        matter["institute"] = note.institute
    tags = sorted(tag.name for tag in note.tags.all())
    if tags:
        matter["tags"] = tags
    if note.show_title is not None:
        matter["showTitle"] = note.show_title
    if note.promotion:
        matter["promotion"] = True
    if note.weight:
        matter["weight"] = note.weight
    if note.summary:
        matter["summary"] = note.summary
    if note.description:
        matter["description"] = note.description
    if note.math is not None:
        matter["math"] = note.math
    if note.keywords:
        matter["keywords"] = list(note.keywords)
    if note.canonical_url:
        matter["canonicalURL"] = note.canonical_url
    if note.share_buttons is not None:
        matter["ShareButtons"] = list(note.share_buttons)
    for name, key in _NOTE_FLAGS:
        if getattr(note, name):
            matter[key] = True
    matter.update(_without_none(note.params or {}))
    return matter


def page_front_matter(page: Page) -> dict[str, Any]:
    matter: dict[str, Any] = {"title": page.title}
    if page.date is not None:
        matter["date"] = _date_out(page.date, page.date_offset_minutes)
    if page.status != Status.PUBLISHED:
        matter["draft"] = True
    authors = [_identity(author) for author in page.authors.order_by("handle")]
    if authors:
        matter["author"] = authors[0] if len(authors) == 1 else authors
    for name, key in (
        ("description", "description"),
        ("summary", "summary"),
        ("layout", "layout"),
        ("placeholder", "placeholder"),
        ("canonical_url", "canonicalURL"),
    ):
        if getattr(page, name):
            matter[key] = getattr(page, name)
    if page.weight:
        matter["weight"] = page.weight
    if page.keywords:
        matter["keywords"] = list(page.keywords)
    for name, (key, default) in _PAGE_FLAGS.items():
        if getattr(page, name) != default:
            matter[key] = getattr(page, name)
    matter.update(_without_none(page.params or {}))
    return matter


# tomli_w writes datetimes as `2026-09-22 07:20:00+09:00`; the theme's files use the `T` form.
_DATETIME_SPACE = re.compile(r"^([A-Za-z0-9_-]+ = \d{4}-\d{2}-\d{2}) (?=\d{2}:\d{2})", re.M)


def toml_dumps(data: dict[str, Any]) -> str:
    return _DATETIME_SPACE.sub(r"\1T", tomli_w.dumps(data))


def _document(matter: dict[str, Any], body: str) -> str:
    return f"+++\n{toml_dumps(matter)}+++\n{body}"


# Needed by Hugo itself for the theme (math delimiters, search output); not SciDraft data.
_HUGO_MARKUP = {
    "goldmark": {
        "extensions": {
            "passthrough": {
                "enable": True,
                "delimiters": {
                    "block": [["$$", "$$"], ["\\[", "\\]"]],
                    "inline": [["\\(", "\\)"], ["$", "$"]],
                },
            }
        },
        "renderer": {"unsafe": True},
        "parser": {"attribute": {"block": True}},
    },
    "highlight": {"noClasses": False},
}


def site_config(site: SiteSettings) -> dict[str, Any]:
    """hugo.toml as a mapping; scidraft.hugo.site_config_from_mapping reads it back."""
    config: dict[str, Any] = {"title": site.title, "theme": "SciDraft"}
    if site.base_url:
        config["baseURL"] = site.base_url
    config["languageCode"] = site.language_code
    if site.copyright:
        config["copyright"] = site.copyright
    config["outputs"] = {"home": ["HTML", "RSS", "JSON"]}
    config["markup"] = _HUGO_MARKUP
    config["taxonomies"] = {"tag": "tags"}
    config["pagination"] = {"pagerSize": site.pager_size}
    if site.rss_limit:
        config["services"] = {"rss": {"limit": site.rss_limit}}
    params: dict[str, Any] = {
        "mainSections": ["notes"],
        "math": site.math,
        "recommendationCount": site.recommendation_count,
        "institute": site.institute,
        "author": site.author,
        "ShowShareButtons": site.show_share_buttons,
        "ShareButtons": list(site.share_buttons),
        "ShowReadingTime": site.show_reading_time,
        "ShowToc": site.show_toc,
        "ShowBreadCrumbs": site.show_breadcrumbs,
        "ShowPostNavLinks": site.show_post_nav_links,
        "ShowCodeCopyButtons": site.show_code_copy_buttons,
        "ShowRelatedPosts": site.show_related_posts,
        "ShowFullTextinRSS": site.show_full_text_in_rss,
        "defaultTheme": site.default_theme,
        "citationStyle": site.citation_style,
        "requireReview": site.require_review,
    }
    if site.description:
        params["description"] = site.description
    if site.promotion_link:
        params["promotionLink"] = site.promotion_link
    if site.footer_text:
        params["footer"] = {"text": site.footer_text}
    entry_sets = {
        entry_set.key: {
            "titleField": entry_set.title_field,
            "categoryField": entry_set.category_field,
            "aliasesField": entry_set.aliases_field,
            "summaryField": entry_set.summary_field,
            **({"tag": entry_set.tag} if entry_set.tag else {}),
            "countLabel": entry_set.count_label,
        }
        for entry_set in EntrySet.objects.order_by("key")
    }
    if entry_sets:
        params["entrySets"] = entry_sets
    params["feed"] = {
        "notesPerPage": site.notes_per_page,
        "promotionsPerPage": site.promotions_per_page,
        "promotionPositions": site.promotion_positions,
    }
    config["params"] = params
    menus = []
    for item in MenuItem.objects.main().select_related("parent").order_by("weight", "name"):
        entry: dict[str, Any] = {"identifier": item.identifier, "name": item.name}
        if item.parent is not None:
            entry["parent"] = item.parent.identifier
        if item.url:
            entry["url"] = item.url
        entry["weight"] = item.weight
        if item.note:
            entry["params"] = {"note": item.note}
        menus.append(entry)
    if menus:
        config["menu"] = {"main": menus}
    return config


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def export_site(out: Path | str) -> dict[str, int]:
    """Write the site as a Hugo site under `out`; returns how many files of each kind."""
    out = Path(out)
    counts = dict.fromkeys(("config", "notes", "pages", "bibliography files", "data files"), 0)
    counts["images"] = 0
    _write(out / "hugo.toml", toml_dumps(site_config(SiteSettings.objects.current())))
    counts["config"] = 1

    assets = list(HugoAsset.objects.all())
    bundle_dirs = {
        str(Path(asset.path).parent) for asset in assets if asset.kind == HugoAsset.Kind.BUNDLE
    }
    notes = Note.objects.prefetch_related("authorships__author", "tags").order_by("slug")
    for note in notes:
        folder = f"notes/{note.slug}"
        name = f"{folder}/index.md" if folder in bundle_dirs else f"notes/{note.slug}.md"
        _write(out / "content" / name, _document(note_front_matter(note), note.body))
        counts["notes"] += 1
    for page in Page.objects.prefetch_related("authors").order_by("slug"):
        name = f"{page.slug}/index.md" if page.slug in bundle_dirs else f"{page.slug}.md"
        _write(out / "content" / name, _document(page_front_matter(page), page.body))
        counts["pages"] += 1
    for bibfile in BibFile.objects.order_by("name"):
        _write(out / "assets" / bibfile.name, bibfile.raw)
        counts["bibliography files"] += 1
    for data in DataFile.objects.order_by("name"):
        _write(out / data.path, data.raw)
        counts["data files"] += 1
    for asset in assets:
        source = media_root() / asset.storage_name
        base = out / ("static" if asset.kind == HugoAsset.Kind.STATIC else "content")
        _write(base / asset.path, source.read_bytes())
        counts["images"] += 1
    return counts
