"""Read a Hugo site that uses the SciDraft theme: config, notes, standalone pages, .bib files.

Model-free, like scidraft.markup: it turns files into plain data with SciDraft's field names
(docs/theme.md#front-matter) and reports what it cannot read, file by file, without stopping. The
services (hugosite.loading.hugo_site_load) write that data to the database; `seed_demo` and
`import_hugo` both go through here.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from scidraft.bounds import input_path

from .tree import OUTSIDE, site_file, site_files

CONFIG_NAMES = ("hugo.toml", "config.toml", "hugo.yaml", "hugo.yml", "config.yaml", "config.yml")


class FrontMatterError(ValueError):
    """Front matter that cannot be parsed; `line` is 1-based within the file."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


@dataclass
class FrontMatter:
    data: dict[str, Any]
    body: str
    format: str | None  # "toml", "yaml" or None when the file has no front matter
    body_line: int  # 1-based line of the file where the body starts


@dataclass
class Problem:
    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass
class NoteSource:
    """A note as SciDraft fields; `params` keeps every key without a column of its own."""

    path: str
    slug: str
    body: str
    title: str = ""
    date: dt.datetime | None = None
    date_offset_minutes: int | None = None
    draft: bool = False
    authors: list[str] = field(default_factory=list)
    institute: str = ""
    tags: list[str] = field(default_factory=list)
    show_title: bool | None = None
    promotion: bool = False
    weight: int = 0
    summary: str = ""
    description: str = ""
    math: bool | None = None
    math_macros: str = ""
    keywords: list[str] = field(default_factory=list)
    canonical_url: str = ""
    share_buttons: list[str] | None = None
    disable_share: bool = False
    search_hidden: bool = False
    hidden_in_rss: bool = False
    robots_noindex: bool = False
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class PageSource:
    path: str
    slug: str
    body: str
    title: str = ""
    date: dt.datetime | None = None
    date_offset_minutes: int | None = None
    draft: bool = False
    authors: list[str] = field(default_factory=list)
    description: str = ""
    summary: str = ""
    layout: str = ""
    placeholder: str = ""
    weight: int = 0
    keywords: list[str] = field(default_factory=list)
    canonical_url: str = ""
    flags: dict[str, bool | None] = field(default_factory=dict)
    headless: bool = False
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class BibSource:
    name: str  # as notes name it: bib/refs.bib
    path: str
    text: str


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


@dataclass
class HugoSite:
    root: Path
    config: SiteConfig
    notes: NoteFiles | list[NoteSource]
    pages: list[PageSource]
    bib_files: list[BibSource]
    problems: list[Problem]


# --- Front matter ------------------------------------------------------------------------------

_DELIMITERS = {"+++": "toml", "---": "yaml"}


def split_front_matter(text: str) -> FrontMatter:
    """Separate TOML (`+++`) or YAML (`---`) front matter from the Markdown body."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() not in _DELIMITERS:
        return FrontMatter({}, text, None, 1)
    fence = lines[0].strip()
    kind = _DELIMITERS[fence]
    for index in range(1, len(lines)):
        if lines[index].strip() == fence:
            raw = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            data = _parse_front_matter(raw, kind)
            return FrontMatter(data, body, kind, index + 2)
    raise FrontMatterError(f"front matter opened with {fence} is never closed", line=1)


def _parse_front_matter(raw: str, kind: str) -> dict[str, Any]:
    try:
        data = _front_matter_data(raw, kind)
    except RecursionError:  # the parsers recurse once a level: 5,000 `[` ran out of stack
        raise FrontMatterError(f"nested more than {MAX_DEPTH} levels deep", line=2) from None
    expanded_size_check(data)
    return data


def _front_matter_data(raw: str, kind: str) -> dict[str, Any]:
    if kind == "toml":
        try:
            data = tomllib.loads(raw)
        except tomllib.TOMLDecodeError as error:
            # tomllib reports "(at line N, column M)" relative to the front matter block.
            match = re.search(r"at line (\d+)", str(error))
            line = int(match.group(1)) + 1 if match else None
            raise FrontMatterError(f"invalid TOML: {error}", line=line) from None
    else:
        try:
            data = yaml.safe_load(raw) or {}
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            line = mark.line + 2 if mark is not None else None
            problem = getattr(error, "problem", None) or str(error)
            raise FrontMatterError(f"invalid YAML: {problem}", line=line) from None
    if not isinstance(data, dict):
        raise FrontMatterError("front matter must be a table of keys and values", line=2)
    return data


# --- Values ------------------------------------------------------------------------------------


def parse_date(value: Any) -> tuple[dt.datetime, int | None]:
    """A front-matter date as an aware datetime and the UTC offset (minutes) it was written in.

    Bare dates and naive times are UTC, as Hugo reads them.
    """
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
        try:
            moment = dt.datetime.fromisoformat(text)
        except ValueError:
            raise FrontMatterError(f"cannot read the date {value!r}") from None
    else:
        raise FrontMatterError(f"cannot read the date {value!r}")
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.UTC), None
    offset = moment.utcoffset()
    return moment, int(offset.total_seconds() // 60) if offset is not None else None


def _as_bool(value: Any, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    raise FrontMatterError(f"{key} must be true or false, not {value!r}")


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(item) for item in value if str(item).strip()]
    raise FrontMatterError(f"expected a list, got {value!r}")


def _as_int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise FrontMatterError(f"{key} must be a whole number, not {value!r}")
    try:
        return int(value)
    except ValueError:
        raise FrontMatterError(f"{key} must be a whole number, not {value!r}") from None


# What one front matter or data file may hold once YAML's aliases are expanded (each use of an
# anchor is a copy in the JSON it becomes: nine aliases nine deep were 48 M values from 400
# bytes), and how deeply it may nest.
MAX_VALUES = 100_000
MAX_DEPTH = 64


def expanded_size_check(value: Any) -> None:
    """FrontMatterError when `value`, as JSON would spell it out, holds more than MAX_VALUES
    values or nests deeper than MAX_DEPTH. Walked without recursion, counting every use of a
    shared (aliased) value, and stopped at the bound."""
    count, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise FrontMatterError(
                f"more than {MAX_VALUES:,} values once its YAML aliases are expanded"
            )
        if depth > MAX_DEPTH:
            raise FrontMatterError(f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list | tuple):
            stack.extend((child, depth + 1) for child in item)


def jsonable(value: Any) -> Any:
    """Front-matter values kept in params must survive a JSON column (the value passed
    expanded_size_check when its file was read)."""
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    return value


# Hugo lower-cases front-matter keys, so matching is case-insensitive (docs/theme.md#front-matter).
_NOTE_BOOLEANS = {
    "showtitle": "show_title",
    "promotion": "promotion",
    "math": "math",
    "draft": "draft",
    "disableshare": "disable_share",
    "searchhidden": "search_hidden",
    "hiddeninrss": "hidden_in_rss",
    "robotsnoindex": "robots_noindex",
}
_NOTE_STRINGS = {
    "title": "title",
    "institute": "institute",
    "summary": "summary",
    "description": "description",
    "canonicalurl": "canonical_url",
}

_PAGE_TOGGLES = {
    "showtoc": "show_toc",
    "showreadingtime": "show_reading_time",
    "showwordcount": "show_word_count",
    "showbreadcrumbs": "show_breadcrumbs",
    "showpostnavlinks": "show_post_nav_links",
    "showcodecopybuttons": "show_code_copy_buttons",
    "showrelatedposts": "show_related_posts",
    "hidemeta": "hide_meta",
    "hideauthor": "hide_author",
    "hidedescription": "hide_description",
    "hidesummary": "hide_summary",
    "hidefooter": "hide_footer",
    "comments": "comments",
    "disableanchoredheadings": "disable_anchored_headings",
    "searchhidden": "search_hidden",
    "hiddeninrss": "hidden_in_rss",
    "robotsnoindex": "robots_noindex",
    "disableshare": "disable_share",
}
_PAGE_STRINGS = {
    "title": "title",
    "description": "description",
    "summary": "summary",
    "layout": "layout",
    "placeholder": "placeholder",
    "canonicalurl": "canonical_url",
}


def math_macros(value: Any) -> str:
    """Macro definitions as LaTeX, from any of the shapes a Hugo site writes them in: LaTeX
    (`\\newcommand{\\R}{\\mathbb{R}}`), a list of such lines, or MathJax's `tex.macros`
    table (`R = "\\mathbb{R}"`, `norm = ["\\lVert #1 \\rVert", 1]`, with a default third)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list | tuple):
        return "\n".join(math_macros(item) for item in value if item is not None)
    if isinstance(value, dict):
        lines = []
        for name, body in value.items():
            arguments = ""
            if isinstance(body, list | tuple) and body:
                if len(body) > 1:
                    arguments = f"[{_as_int(body[1], str(name))}]"
                if len(body) > 2:
                    arguments += f"[{body[2]}]"
                body = body[0]
            lines.append(f"\\newcommand{{\\{str(name).lstrip(chr(92))}}}{arguments}{{{body}}}")
        return "\n".join(lines)
    return str(value)


def note_from_front_matter(path: str, slug: str, matter: FrontMatter) -> NoteSource:
    note = NoteSource(path=path, slug=slug, body=matter.body)
    for key, value in matter.data.items():
        lowered = key.lower()
        if lowered in _NOTE_BOOLEANS:
            setattr(note, _NOTE_BOOLEANS[lowered], _as_bool(value, key))
        elif lowered in _NOTE_STRINGS:
            setattr(note, _NOTE_STRINGS[lowered], "" if value is None else str(value))
        elif lowered == "slug":
            note.slug = str(value)
        elif lowered == "date":
            note.date, note.date_offset_minutes = parse_date(value)
        elif lowered == "author":
            note.authors = _as_list(value)
        elif lowered == "tags":
            note.tags = _as_list(value)
        elif lowered == "keywords":
            note.keywords = _as_list(value)
        elif lowered == "sharebuttons":
            note.share_buttons = [item.lower() for item in _as_list(value)]
        elif lowered == "weight":
            note.weight = _as_int(value, key)
        elif lowered in {"mathmacros", "math_macros"}:
            note.math_macros = math_macros(value)
        else:
            note.params[key] = jsonable(value)
    return note


def page_from_front_matter(path: str, slug: str, matter: FrontMatter) -> PageSource:
    page = PageSource(path=path, slug=slug, body=matter.body)
    for key, value in matter.data.items():
        lowered = key.lower()
        if lowered in _PAGE_TOGGLES:
            page.flags[_PAGE_TOGGLES[lowered]] = _as_bool(value, key)
        elif lowered in _PAGE_STRINGS:
            setattr(page, _PAGE_STRINGS[lowered], "" if value is None else str(value))
        elif lowered == "slug":
            page.slug = str(value)
        elif lowered == "date":
            page.date, page.date_offset_minutes = parse_date(value)
        elif lowered == "draft":
            page.draft = _as_bool(value, key)
        elif lowered == "headless":
            page.headless = _as_bool(value, key)
        elif lowered == "author":
            page.authors = _as_list(value)
        elif lowered == "keywords":
            page.keywords = _as_list(value)
        elif lowered == "weight":
            page.weight = _as_int(value, key)
        else:
            page.params[key] = jsonable(value)
    return page


# --- Site config -------------------------------------------------------------------------------


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


# --- Whole site --------------------------------------------------------------------------------


class NoteFiles:
    """A site's notes, read from their files each time they are iterated: a site of thousands
    of notes is never held in memory whole, only the note being loaded (hugosite.loading
    writes them in batches). `located` holds each readable note's path and slug; a note that
    cannot be read is a problem, added to `problems`."""

    def __init__(self, root: Path, located: list[tuple[str, str]], problems: list[Problem]):
        self.root = root
        self.located = located
        self.problems = problems

    def __len__(self) -> int:
        return len(self.located)

    @property
    def slugs(self) -> list[str]:
        return [slug for _, slug in self.located]

    def __iter__(self):
        for relative, slug in self.located:
            text = _read_text(self.root / relative, self.root, self.problems)
            if text is None:
                continue
            try:
                yield note_from_front_matter(relative, slug, split_front_matter(text))
            except FrontMatterError as error:
                self.problems.append(Problem(relative, error.message, error.line))


def _read_text(path: Path, root: Path, problems: list[Problem]) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        problems.append(Problem(str(path.relative_to(root)), f"not UTF-8 text: {error}"))
    except OSError as error:
        problems.append(Problem(str(path.relative_to(root)), f"cannot read: {error}"))
    return None


@input_path("hugo-tree")
def read_site(root: Path | str) -> HugoSite:
    """Everything under a Hugo site folder; unreadable files become problems, not exceptions."""
    root = Path(root)
    config, problems = read_config(root)
    content = root / "content"

    def files(folder: Path) -> list[Path]:
        listing = site_files(root, folder)
        problems.extend(
            Problem(path.relative_to(root).as_posix(), OUTSIDE) for path in listing.outside
        )
        return listing.files

    in_content = files(content)
    notes_folder = content / "notes"
    located: list[tuple[str, str]] = []
    for path in in_content:
        if path.suffix != ".md" or notes_folder not in path.parents or path.name == "_index.md":
            continue
        # A page bundle (notes/x/index.md) takes its folder's name, as in Hugo.
        slug = path.parent.name if path.name == "index.md" else path.stem
        located.append((str(path.relative_to(root)), slug))
    notes = NoteFiles(root, located, problems)
    # Read once here for the problems (a note that cannot be read is skipped from the start);
    # the sources themselves are read again, one at a time, as the import goes.
    notes.located = [(source.path, source.slug) for source in notes]

    pages: list[PageSource] = []
    top = [path for path in in_content if path.suffix == ".md" and path.parent == content]
    bundles = [
        path for path in in_content if path.name == "index.md" and path.parent.parent == content
    ]
    for path in top + bundles:
        if path.name == "_index.md" or path.parent.name == "notes":
            continue
        relative = str(path.relative_to(root))
        text = _read_text(path, root, problems)
        if text is None:
            continue
        slug = path.parent.name if path.name == "index.md" else path.stem
        try:
            pages.append(page_from_front_matter(relative, slug, split_front_matter(text)))
        except FrontMatterError as error:
            problems.append(Problem(relative, error.message, error.line))

    bib_files: list[BibSource] = []
    assets = root / "assets"
    for path in (path for path in files(assets) if path.suffix == ".bib"):
        text = _read_text(path, root, problems)
        if text is not None:
            name = str(path.relative_to(assets)).replace("\\", "/")
            bib_files.append(BibSource(name=name, path=str(path.relative_to(root)), text=text))

    return HugoSite(root, config, notes, pages, bib_files, problems)
