"""citeproc-js running the styles (bibliography.csl) in the citation contexts: each context
builds a style's processor once and practises on made-up lists; reference lists, their order
and the CSL-JSON and RIS of entries are calls into the bundle's functions
(bibliography/js/processor.js), in bibliography.jsbundle's contexts.
"""

from __future__ import annotations

import json

from bibliography import csl, jsbundle
from bibliography.csl import (
    BUILT_IN,
    DEFAULT_LOCALE,
    LOCALE_DIR,
    StyleInfo,
    _style_xml,
    resolve_locale,
    style_info,
)
from scidraft.markup import jsengine, v8pool

# Seconds a context may take to load a style and build its processor (Chicago's file is 168 KB;
# a second or two on a busy machine, once per context and style).
PREPARE_TIMEOUT_SECONDS = 30.0
# A context keeps every processor it builds (plugin-csl never drops one), and citeproc-js
# expands a style's macros where they are used: APA's processor holds about 50 MB of heap,
# Chicago's 75 MB, most others 1 MB. A context whose heap is past this takes no further style:
# it is closed and a fresh one builds the style, so that one context holds one such style at
# most, and never comes near v8pool.MEMORY_LIMIT_BYTES, where its next list would be stopped.
STYLES_HEAP_BYTES = 64 * 1024 * 1024


# Styles one context builds: a context that has built this many is closed rather than given
# another, and a fresh one builds it. With the pool's bounds on contexts (v8pool: so many
# idle, those beyond the floor closed once idle a while), this bounds the styles a process
# holds. Most sites use one style, and a note may name CITATION_STYLES_PER_NOTE more.
STYLES_PER_CONTEXT = 4


def _prepare(context, style: StyleInfo, locale: str) -> None:
    """Give the context the style, locale and processor it has not built yet, once per
    context: the render that needs it pays for it from its budget (v8pool charges a call's
    `before`)."""
    loaded = getattr(context, "scidraft_loaded", None)
    if loaded is None:
        loaded = context.scidraft_loaded = set()
    if (style.template, locale) in loaded:
        return
    built = {done[0] for done in loaded if isinstance(done, tuple) and len(done) == 2}
    if style.template not in built and len(built) >= STYLES_PER_CONTEXT:
        raise v8pool.ContextFull(f"{len(built)} styles built")
    if built:
        try:
            used = context.heap_stats()["used_heap_size"]
        except Exception:  # noqa: BLE001 - unknown: keep the context
            used = 0
        if used > STYLES_HEAP_BYTES:
            raise v8pool.ContextFull(f"{used} bytes of heap in use")
    try:
        _load_style(context, loaded, style, locale)
    except Exception as error:  # noqa: BLE001 - the list shows its entries raw, with the reason
        raise v8pool.JSError(
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
# context, the contexts at once (jsbundle.warm), in the background as the worker starts.
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


# The style and locale this process's contexts were warmed for (warm): the site's.
_site = (csl.style_info(None).template, DEFAULT_LOCALE)


def _worth_keeping(context) -> bool:
    """An idle citation context is kept ready (within the pool's floor) while the styles it
    built are the site's alone: one that built others (APA's or Chicago's processor for a
    note that named it, 50–100 MB) is closed once idle (v8pool.Pool.sweep)."""
    loaded = getattr(context, "scidraft_loaded", set())
    return all(done == _site for done in loaded if isinstance(done, tuple) and len(done) == 2)


jsbundle.pool.keep_idle = _worth_keeping


def warm(style_name: str | None, language: str | None) -> None:
    """Build the style's processor in this process's citation contexts (jsbundle.warm), and
    format a few made-up lists in it (_exercise): the first list a worker formats then pays
    for its entries alone, at the speed of its later ones. A style a request asks for later
    is only built (_prepare): its first lists are slower, not delayed by practice."""
    global _site
    style, locale = style_info(style_name), resolve_locale(language)
    _site = (style.template, locale)

    def prepare(context) -> None:
        _prepare(context, style, locale)
        _exercise(context, style, locale)

    jsengine.start()  # and the formulas' context
    jsbundle.warm(prepare)


def _answer(text) -> dict:
    return json.loads(text) if isinstance(text, str) else {}


def run(
    entries: list[dict], style: StyleInfo, locale: str, *, citations: bool, sortkeys: bool = False
) -> dict:
    """citation-js over BibTeX entry objects: see format in bibliography/js/processor.js.
    Raises v8pool.JSError."""
    (answer,) = run_each([entries], style, locale, citations=citations, sortkeys=sortkeys)
    if isinstance(answer, v8pool.JSError):
        raise answer
    return answer


def run_each(
    entry_lists: list[list[dict]],
    style: StyleInfo,
    locale: str,
    *,
    citations: bool,
    sortkeys: bool = False,
) -> list[dict | v8pool.JSError]:
    """`run` for each list, at once in contexts of their own when there are several: each
    list's answer, or the JSError its call raised."""
    outcomes = jsbundle.call_at_once(
        "scidraftCslFormat",
        [(entries, style.template, locale, citations, sortkeys) for entries in entry_lists],
        before=lambda context: _prepare(context, style, locale),
    )
    return [
        outcome if isinstance(outcome, v8pool.JSError) else _answer(outcome) for outcome in outcomes
    ]


def order(style: StyleInfo, locale: str, rows: list[tuple[str, int, list]]) -> list[str] | None:
    """The order of a sorted style's list formatted in independent groups: see order in
    bibliography/js/processor.js (rows are (key, group, sort keys) in the list's order). None
    when the groups cannot be put together as the whole list reads. Raises v8pool.JSError."""
    return _answer_value(
        jsbundle.call(
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
    return _answer(jsbundle.call("scidraftCslJson", entries))


def ris(entries: list[dict]) -> dict:
    """The entries as RIS records by citation-js (@citation-js/plugin-ris)."""
    return _answer(jsbundle.call("scidraftCslRis", entries))
