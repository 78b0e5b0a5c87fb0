"""A Hugo site's config (hugo.toml, config.toml or hugo.yaml) mapped to SiteSettings fields, menus
and entry sets."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .content import math_macros
from .front_matter import FrontMatterError, _as_bool, _as_int, _as_list
from .problems import Problem
from .tree import OUTSIDE, site_file

CONFIG_NAMES = ("hugo.toml", "config.toml", "hugo.yaml", "hugo.yml", "config.yaml", "config.yml")


@dataclass
class MenuEntry:
    identifier: str
    name: str
    url: str = ""
    weight: int = 0
    parent: str = ""
    note: str = ""


@dataclass
class SiteConfig:
    """hugo.toml mapped to SiteSettings fields, menus and entry sets."""

    settings: dict[str, Any] = field(default_factory=dict)
    menus: list[MenuEntry] = field(default_factory=list)
    entry_sets: dict[str, dict[str, str]] = field(default_factory=dict)


def _lower_keys(table: dict[str, Any]) -> dict[str, Any]:
    return {key.lower(): value for key, value in table.items()}


_SETTING_BOOLEANS = {
    "showsharebuttons": "show_share_buttons",
    "showreadingtime": "show_reading_time",
    "showtoc": "show_toc",
    "showbreadcrumbs": "show_breadcrumbs",
    "showpostnavlinks": "show_post_nav_links",
    "showcodecopybuttons": "show_code_copy_buttons",
    "showrelatedposts": "show_related_posts",
    "showfulltextinrss": "show_full_text_in_rss",
    "math": "math",
    "requirereview": "require_review",
}


def site_config_from_mapping(raw: dict[str, Any]) -> SiteConfig:
    """hugo.toml's keys (any case) to SiteSettings fields, menus and entry sets."""
    top = _lower_keys(raw)
    params = _lower_keys(top.get("params") or {})
    settings: dict[str, Any] = {}
    if "title" in top:
        settings["title"] = str(top["title"])
    if "baseurl" in top:
        settings["base_url"] = str(top["baseurl"])
    if "languagecode" in top:
        settings["language_code"] = str(top["languagecode"]).lower()
    if "copyright" in top:
        settings["copyright"] = str(top["copyright"])
    pagination = _lower_keys(top.get("pagination") or {})
    if "pagersize" in pagination:
        settings["pager_size"] = _as_int(pagination["pagersize"], "pagerSize")
    rss = _lower_keys(_lower_keys(top.get("services") or {}).get("rss") or {})
    if "limit" in rss and _as_int(rss["limit"], "limit") > 0:
        settings["rss_limit"] = _as_int(rss["limit"], "limit")

    for key, name in _SETTING_BOOLEANS.items():
        if key in params:
            settings[name] = _as_bool(params[key], key)
    if "institute" in params:
        settings["institute"] = str(params["institute"])
    if "author" in params:
        author = params["author"]
        if isinstance(author, dict):
            author = _lower_keys(author).get("name", "")
        elif isinstance(author, list):
            author = author[0] if author else ""
        settings["author"] = str(author)
    if "description" in params:
        settings["description"] = str(params["description"])
    if "recommendationcount" in params:
        count = _as_int(params["recommendationcount"], "recommendationCount")
        settings["recommendation_count"] = count if count > 0 else 3
    if "sharebuttons" in params:
        settings["share_buttons"] = [item.lower() for item in _as_list(params["sharebuttons"])]
    if "defaulttheme" in params:
        settings["default_theme"] = str(params["defaulttheme"]).lower()
    if "promotionlink" in params:
        settings["promotion_link"] = str(params["promotionlink"])
    if "citationstyle" in params:
        settings["citation_style"] = str(params["citationstyle"]).lower()
    # The site's math macros: SciDraft's own key, or a MathJax configuration's tex.macros.
    mathjax = _lower_keys(_lower_keys(params.get("mathjax") or {}).get("tex") or {})
    macros = [math_macros(params.get(key)) for key in ("mathmacros", "math_macros")]
    macros.append(math_macros(mathjax.get("macros")))
    if any(macros):
        settings["math_macros"] = "\n".join(macro for macro in macros if macro)
    footer = _lower_keys(params.get("footer") or {})
    if "text" in footer:
        settings["footer_text"] = str(footer["text"])
    feed = _lower_keys(params.get("feed") or {})
    if "notesperpage" in feed:
        settings["notes_per_page"] = _as_int(feed["notesperpage"], "notesPerPage")
    if "promotionsperpage" in feed:
        settings["promotions_per_page"] = _as_int(feed["promotionsperpage"], "promotionsPerPage")
    if "promotionpositions" in feed:
        settings["promotion_positions"] = str(feed["promotionpositions"])

    entry_sets = {}
    for key, table in (params.get("entrysets") or {}).items():
        table = _lower_keys(table or {})
        entry_sets[str(key)] = {
            "title_field": str(table.get("titlefield", "entryTitle")),
            "category_field": str(table.get("categoryfield", "entryCategory")),
            "aliases_field": str(table.get("aliasesfield", "entryAliases")),
            "summary_field": str(table.get("summaryfield", "entrySummary")),
            "tag": str(table.get("tag", "")),
            "count_label": str(table.get("countlabel", "Entries")),
        }

    menus = []
    for item in _lower_keys(top.get("menu") or {}).get("main") or []:
        item = _lower_keys(item)
        name = str(item.get("name", "")).strip()
        identifier = str(item.get("identifier") or _identifier(name))
        menus.append(
            MenuEntry(
                identifier=identifier,
                name=name,
                url=str(item.get("url", "")),
                weight=_as_int(item.get("weight", 0), "weight"),
                parent=str(item.get("parent", "")),
                note=str(_lower_keys(item.get("params") or {}).get("note", "")),
            )
        )
    return SiteConfig(settings=settings, menus=menus, entry_sets=entry_sets)


def _identifier(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "item"


def read_config(root: Path) -> tuple[SiteConfig, list[Problem]]:
    for name in CONFIG_NAMES:
        path = root / name
        if not path.is_file():
            continue
        if not site_file(root, path):
            return SiteConfig(), [Problem(name, OUTSIDE)]
        text = path.read_text(encoding="utf-8")
        try:
            raw = tomllib.loads(text) if name.endswith(".toml") else yaml.safe_load(text) or {}
            return site_config_from_mapping(raw), []
        except (tomllib.TOMLDecodeError, yaml.YAMLError, FrontMatterError) as error:
            return SiteConfig(), [Problem(name, f"cannot read the site config: {error}")]
    return SiteConfig(), [Problem(".", "no hugo.toml, config.toml or hugo.yaml found")]
