"""Write the site out as a Hugo site (`export_hugo`): hugo.toml (written with tomli_w),
content/notes/<slug>.md with TOML front matter in the theme's key names, standalone pages,
assets/<bib name>, data files and images at their original paths. Importing the export into
an empty database gives the same rows and the same rendered HTML (tests/hugosite/test_importing.py).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import tomli_w
from django.utils.text import slugify

from bibliography.models import BibFile
from notes.models import Note, Page, Status
from scidraft.site.models import EntrySet, MenuItem, SiteSettings

from .importing import media_root
from .models import DataFile, HugoAsset

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
    tags = [tag.name for tag in note.ordered_tags()]
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
    if note.math_macros:
        matter["mathMacros"] = note.math_macros
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
HUGO_MARKUP = {
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
    """hugo.toml as a mapping; hugosite.reading.site_config_from_mapping reads it back."""
    config: dict[str, Any] = {"title": site.title, "theme": "SciDraft"}
    if site.base_url:
        config["baseURL"] = site.base_url
    config["languageCode"] = site.language_code
    if site.copyright:
        config["copyright"] = site.copyright
    config["outputs"] = {"home": ["HTML", "RSS", "JSON"]}
    config["markup"] = HUGO_MARKUP
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
    if site.math_macros:
        params["mathMacros"] = site.math_macros
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
    notes = (
        Note.objects.not_trashed().prefetch_related("authorships__author", "tags").order_by("slug")
    )
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
