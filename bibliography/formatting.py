"""Format bibliography entries with CSL: reference lists, in-text markers, CSL-JSON.

The rendering engine asks a `Bibliography` (scidraft.markup.Bibliography) for the keys a list
cites; only those are formatted, by citation-js in the embedded V8 (bibliography.csl), from
the entries pybtex parsed when the file was imported. Each entry is handed to citation-js as
the `{type, label, properties}` object its own BibTeX parser makes of the file's text, so the
mapping to CSL-JSON is the theme's (@citation-js/plugin-bibtex).

Beyond the theme: math (`$O(1/k^2)$`) is kept out of citation-js and typeset by KaTeX when
the list is filled in (each formula is a placeholder in the HTML, `FormattedReferences.math`);
LaTeX commands citation-js leaves as written (`{\\TeX}book` → `\\TeXbook`) are decoded; an
entry that cannot be formatted shows its key and fields, with the reason, instead of failing
the list.

Formatted entries are cached by content, style and locale in the process and in the shared
cache (Redis): citeproc-js takes a few milliseconds an entry, and a re-render or another
process should not pay that again.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import hashlib
import html
import itertools
import json
import logging
import re
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

import latexcodec  # noqa: F401 - registers the ulatex codec

from scidraft.markup import limits, shared_cache, v8pool
from scidraft.markup.context import FormattedReferences
from scidraft.markup.plaintext import html_text

from . import csl, jsbundle, processor
from .models import READ_BOUND_CHARS, BibEntry, BibFile
from .parsing import ParsedEntry

logger = logging.getLogger(__name__)

DEFAULT_STYLE = csl.DEFAULT_STYLE

__all__ = [
    "DEFAULT_STYLE",
    "EntryData",
    "ParsedBibliography",
    "StoredBibliography",
    "csl_items",
    "format_cache_clear",
    "format_references",
    "plain_text",
    "ris_records",
]

# Math placeholders in formatted HTML: private-use characters, as the engine's own stash
# uses (other ones), which neither citation-js, citeproc-js nor nh3 alter.
MATH_OPEN, MATH_CLOSE = "\ue010", "\ue011"
MATH_TOKEN = re.compile(f"{MATH_OPEN}(\\d+){MATH_CLOSE}")
# Inline math in a field: $…$ not preceded by a backslash (\$ is a dollar sign).
_MATH = re.compile(r"(?<!\\)\$((?:[^$\\]|\\.)+)(?<!\\)\$", re.DOTALL)
# Fields that are addresses or identifiers: never math.
_VERBATIM = frozenset({"url", "doi", "eprint", "file", "isbn", "issn", "pmid", "arxivid"})
_ENTRY = re.compile(r'^\s*<div[^>]*class="csl-entry"[^>]*>(.*)</div>\s*$', re.DOTALL)
_LEFT_MARGIN = re.compile(
    r'^\s*<div class="csl-left-margin">.*?</div>\s*<div class="csl-right-inline">(.*)</div>\s*$',
    re.DOTALL,
)
# A LaTeX command citation-js left in the text, and the logos it does not know.
_LEFT_COMMAND = re.compile(r"\\([A-Za-z]+)(?:\{\})?")
_LOGOS = {"TeX": "TeX", "LaTeX": "LaTeX", "LaTeXe": "LaTeX2ε", "BibTeX": "BibTeX",
          "XeTeX": "XeTeX", "LuaTeX": "LuaTeX", "ConTeXt": "ConTeXt", "AmS": "AMS"}  # fmt: skip
# pybtex expands the month macros (jan … dec) to English names, citation-js to "01" … "12":
# `month = "30~" # jun` reads "30~06" there, which citation-js's date parser skips (the theme
# prints the year alone), and "30~June" here, which it would read as a day.
_MONTH_NAMES = re.compile(
    r"\b(January|February|March|April|May|June|July|August|September|October|November|December)\b"
)
_MONTH_NUMBERS = {name: f"{number:02d}" for number, name in enumerate(
    ["January", "February", "March", "April", "May", "June", "July", "August", "September",
     "October", "November", "December"], start=1)}  # fmt: skip
# How many entries one call formats: a list of thousands is formatted in slices, each bounded
# by the engine's time limit and the render's budget.
BATCH = 50
SLICE_MIN = 10
CACHE_MAX = 20_000


@dataclass(frozen=True)
class EntryData:
    key: str
    entry_type: str
    fields: dict[str, str]
    persons: dict[str, list[str]]


@dataclass(frozen=True)
class _Formatted:
    html: str
    math: tuple[str, ...] = ()
    problem: str = ""


@dataclass
class _ListResult:
    entries: dict[str, _Formatted] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    markers: dict[str, str] = field(default_factory=dict)
    # The processor's bibliography sort keys (sorted styles formatted in groups, _grouped).
    sortkeys: dict[str, list] = field(default_factory=dict)
    # The cite each entry was disambiguated against (citeproc's ambiguity key), the same.
    ambigs: dict[str, str] = field(default_factory=dict)

    def part(self, keys: list[str]) -> _ListResult:
        """What this result says of `keys` (one group of a list formatted in one call)."""
        return _ListResult(
            {key: self.entries[key] for key in keys},
            list(keys),
            {key: self.markers[key] for key in keys if key in self.markers},
            {key: self.sortkeys[key] for key in keys if key in self.sortkeys},
            {key: self.ambigs.get(key, "") for key in keys},
        )


def _joined(parts: Iterable[_ListResult], order: list[str]) -> _ListResult:
    """Results of separate calls as one list in `order`."""
    joined = _ListResult(order=order)
    for part in parts:
        joined.entries.update(part.entries)
        joined.markers.update(part.markers)
    return joined


def bibtex_object(data: EntryData) -> tuple[dict, tuple[str, ...]]:
    """The entry as citation-js's BibTeX parser reads it from a file (fields lower-case, values
    with their braces, names joined by "and"), and the TeX of the math taken out of it."""
    formulas: list[str] = []

    def stash(match: re.Match) -> str:
        formulas.append(match.group(1))
        return f"{MATH_OPEN}{len(formulas) - 1}{MATH_CLOSE}"

    properties = {}
    for name, value in data.fields.items():
        value = value if isinstance(value, str) else str(value)
        if "$" in value and name.lower() not in _VERBATIM:
            value = _MATH.sub(stash, value)
        if name.lower() == "month":
            value = _MONTH_NAMES.sub(lambda match: _MONTH_NUMBERS[match.group(1)], value)
        properties[name.lower()] = value
    for role, names in data.persons.items():
        properties[role.lower()] = " and ".join(str(name) for name in names)
    return {"type": data.entry_type, "label": data.key, "properties": properties}, tuple(formulas)


def _fingerprint(data: EntryData) -> str:
    payload = json.dumps(
        [data.key, data.entry_type, data.fields, data.persons], sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _entry_html(raw: str) -> str:
    """The entry's own HTML inside citeproc's csl-entry div, without its number (the list
    prints the theme's [n])."""
    match = _ENTRY.match(raw)
    inner = match.group(1) if match else raw
    margin = _LEFT_MARGIN.match(inner)
    inner = margin.group(1) if margin else inner
    return decode_left_commands(inner.strip())


def _decode_command(match: re.Match) -> str:
    name = match.group(1)
    if name in _LOGOS:
        return _LOGOS[name]
    try:
        decoded = codecs.decode(f"\\{name}", "ulatex").strip()
    except (ValueError, UnicodeDecodeError):
        decoded = "\\"
    if not decoded.startswith("\\"):
        return decoded
    # `{\TeX}book` reaches us as \TeXbook: a logo followed by the rest of the word.
    for logo in sorted(_LOGOS, key=len, reverse=True):
        if name.startswith(logo):
            return _LOGOS[logo] + name[len(logo) :]
    return match.group(0)


def decode_left_commands(markup: str) -> str:
    """Commands citation-js did not decode, decoded in the text (never inside a tag)."""
    if "\\" not in markup:
        return markup
    parts = re.split(r"(<[^>]+>)", markup)
    return "".join(
        part if part.startswith("<") else _LEFT_COMMAND.sub(_decode_command, part) for part in parts
    )


def unformatted_html(data: EntryData) -> str:
    """The entry shown as its key and fields, for an entry citeproc cannot format."""
    parts = [f"{html.escape(role)} = {{{html.escape(' and '.join(map(str, names)))}}}"
             for role, names in data.persons.items()]  # fmt: skip
    parts += [f"{html.escape(name)} = {{{html.escape(str(value))}}}"
              for name, value in data.fields.items()]  # fmt: skip
    return (
        f'<span class="ref-unformatted"><code>{html.escape(data.key)}</code> '
        f"({html.escape(data.entry_type)}): {', '.join(parts)}</span>"
    )


class _Memory:
    """Formatted results by content: this process's, then the shared cache's."""

    def __init__(self):
        self.lock = threading.Lock()
        self.local: dict[str, object] = {}

    def get_many(self, keys: list[str]) -> dict[str, object]:
        found = {key: self.local[key] for key in keys if key in self.local}
        missing = [key for key in keys if key not in found]
        if missing:
            shared = shared_cache.get_many(missing)
            for key, value in shared.items():
                found[key] = self._decode(value)
            self._keep({key: found[key] for key in shared})
        return found

    def set_many(self, values: dict[str, object]) -> None:
        self._keep(values)
        shared_cache.set_many({key: self._encode(value) for key, value in values.items()})

    def _keep(self, values: dict[str, object]) -> None:
        with self.lock:
            if len(self.local) + len(values) > CACHE_MAX:
                self.local.clear()
            self.local.update(values)

    @staticmethod
    def _encode(value):
        if isinstance(value, _Formatted):
            return ["entry", value.html, list(value.math), value.problem]
        return [
            "list",
            {key: [f.html, list(f.math), f.problem] for key, f in value.entries.items()},
            value.order,
            value.markers,
            value.sortkeys,
            value.ambigs,
        ]

    @staticmethod
    def _decode(value):
        if value[0] == "entry":
            return _Formatted(value[1], tuple(value[2]), value[3])
        entries = {key: _Formatted(h, tuple(m), p) for key, (h, m, p) in value[1].items()}
        sortkeys = dict(value[4]) if len(value) > 4 else {}
        ambigs = dict(value[5]) if len(value) > 5 else {}
        return _ListResult(entries, list(value[2]), dict(value[3]), sortkeys, ambigs)

    def clear(self) -> None:
        with self.lock:
            self.local.clear()


_memory = _Memory()


def format_cache_clear() -> None:
    """Forget every formatted entry of this process (benchmarks measure formatting cold). What
    a style's file says (csl.style_info) is kept: it changes only with the installed styles."""
    _memory.clear()


def _cache_key(kind: str, style: csl.StyleInfo, locale: str, fingerprint: str) -> str:
    versions = v8pool.versions()
    return f"csl:{kind}:{versions.get('citation-js', '')}:{style.name}:{locale}:{fingerprint}"


def _bibtex_objects(entries: list[EntryData]) -> tuple[dict[str, dict], dict[str, tuple]]:
    objects, formulas = {}, {}
    for data in entries:
        objects[data.key], formulas[data.key] = bibtex_object(data)
    return objects, formulas


def _calls(
    slices: list[list[EntryData]],
    style: csl.StyleInfo,
    locale: str,
    *,
    citations: bool,
    sortkeys: bool = False,
) -> list[_ListResult]:
    """Each slice formatted in one citation-js call, the slices at once; entries a call
    cannot format are shown raw."""
    prepared = [_bibtex_objects(entries) for entries in slices]
    answers = processor.run_each(
        [list(objects.values()) for objects, _formulas in prepared],
        style,
        locale,
        citations=citations,
        sortkeys=sortkeys,
    )
    return [
        _list_result(entries, objects, formulas, answer, style)
        for entries, (objects, formulas), answer in zip(slices, prepared, answers, strict=True)
    ]


def _list_result(
    entries: list[EntryData],
    objects: dict[str, dict],
    formulas: dict[str, tuple],
    answer: dict | v8pool.JSError,
    style: csl.StyleInfo,
) -> _ListResult:
    result = _ListResult()
    if isinstance(answer, v8pool.JSError):
        logger.warning("citation-js failed on %d entries: %s", len(entries), answer.message)
        reason = f"the reference list could not be formatted: {answer.message}"
        for data in entries:
            result.entries[data.key] = _Formatted(unformatted_html(data), problem=reason)
            result.order.append(data.key)
        return result
    errors = answer.get("errors") or {}
    for key, raw in answer.get("entries") or []:
        if key in objects and key not in errors:
            result.entries[key] = _Formatted(_entry_html(raw), formulas[key])
            result.order.append(key)
    for data in entries:
        if data.key not in result.entries:
            reason = errors.get(data.key) or "citeproc-js printed nothing for it"
            result.entries[data.key] = _Formatted(
                unformatted_html(data), problem=f"could not be formatted: {reason}"
            )
            result.order.append(data.key)
    for key, marker in (answer.get("citations") or {}).items():
        result.markers[key] = _marker_inner(marker, style)
    result.sortkeys = answer.get("sortkeys") or {}
    result.ambigs = answer.get("ambigs") or {}
    return result


def _marker_inner(marker: str, style: csl.StyleInfo) -> str:
    """An in-text citation without its cluster's affixes ("(Vaswani et al., 2017)" →
    "Vaswani et al., 2017"), so that a \\cite of several keys can link each one."""
    marker = unicodedata.normalize("NFC", marker.strip())
    prefix, suffix = html.escape(style.prefix, quote=False), html.escape(style.suffix, quote=False)
    prefix = prefix.replace("\u00a0", "&#160;")
    suffix = suffix.replace("\u00a0", "&#160;")
    for affix in (style.prefix, prefix):
        if affix and marker.startswith(affix):
            marker = marker[len(affix) :]
            break
    for affix in (style.suffix, suffix):
        if affix and marker.endswith(affix):
            marker = marker[: -len(affix)]
            break
    return marker


def _slices(entries: list[EntryData]) -> list[list[EntryData]]:
    """Numbered entries in slices formatted at once, one per core: as even as can be, at least
    SLICE_MIN entries (a call costs about a millisecond more) and at most BATCH each."""
    if not entries:
        return []
    count = min(jsbundle.CALLS_AT_ONCE, max(1, len(entries) // SLICE_MIN))
    size = min(BATCH, -(-len(entries) // count))
    return [entries[start : start + size] for start in range(0, len(entries), size)]


def _numeric(entries: list[EntryData], style: csl.StyleInfo, locale: str) -> _ListResult:
    """Numbered styles: each entry formatted as the theme formats it, alone, so it is cached
    alone (its text does not depend on the other entries of the list)."""
    keys = {data.key: _cache_key("entry", style, locale, _fingerprint(data)) for data in entries}
    known = _memory.get_many(list(dict.fromkeys(keys.values())))
    missing = [data for data in entries if keys[data.key] not in known]
    fresh: dict[str, object] = {}
    slices = _slices(missing)
    for start in range(0, len(slices), jsbundle.CALLS_AT_ONCE):
        group = slices[start : start + jsbundle.CALLS_AT_ONCE]
        if start and limits.expired():
            # The render's budget is spent: the rest shows raw this time (nothing of it is
            # cached), and the next render starts from the slices formatted now.
            for data in itertools.chain.from_iterable(group):
                known[keys[data.key]] = _Formatted(
                    unformatted_html(data),
                    problem="the reference list was not formatted in full within the "
                    "render's time budget; it is completed at the next render",
                )
            continue
        for chunk, result in zip(group, _calls(group, style, locale, citations=False), strict=True):
            for data in chunk:
                formatted = result.entries[data.key]
                known[keys[data.key]] = formatted
                if not formatted.problem.startswith("the reference list"):  # not a timeout
                    fresh[keys[data.key]] = formatted
    if fresh:
        _memory.set_many(fresh)
    return _ListResult(
        {data.key: known[keys[data.key]] for data in entries}, [data.key for data in entries]
    )


def _list_fingerprint(entries: list[EntryData]) -> str:
    return hashlib.sha256("\0".join(_fingerprint(data) for data in entries).encode()).hexdigest()


def _complete(result: _ListResult) -> bool:
    """Formatted in full: not shown raw because a call failed (which the next render retries)."""
    return not any(f.problem.startswith("the reference list") for f in result.entries.values())


def _sorted(entries: list[EntryData], style: csl.StyleInfo, locale: str) -> _ListResult:
    """Author–date and note styles: the list is sorted and disambiguated as a whole
    ("2017a"), so it is cached as a whole; it is formatted in groups of entries that cannot
    change each other's text (_groups), at once and each cached, when the style allows."""
    key = _cache_key("list", style, locale, _list_fingerprint(entries))
    known = _memory.get_many([key])
    if key in known:
        return known[key]
    groups = _groups(entries, style)
    result = _grouped(entries, groups, style, locale) if len(groups) > 1 else None
    if result is None:
        (result,) = _calls([entries], style, locale, citations=True)
    if _complete(result):
        _memory.set_many({key: result})
    return result


# --- Sorted lists in groups ------------------------------------------------------------------
#
# In a sorted style an entry's text depends on the rest of the list only through names: a year
# suffix ("2017a"), names or given names added to tell two cites apart, all start from cites
# whose first names read the same; citeproc-js's name register, which decides given names, is
# keyed by family name (by first names only under the "primary-name" rules); and an author
# replaced by "———" repeats the entry above. Entries sharing no family name of those the style
# compares (StyleInfo.linked_by) are therefore formatted apart, in contexts of their own at
# once, and the list is put together in the processor's own order (processor.order). Family names
# are compared folded further than the processor folds them (base letters, no case, no
# punctuation, the last word alone too: "van Gogh" meets "Gogh"), so that a doubt joins groups.


def _top_level(text: str, separator: str) -> list[str]:
    """`text` split at `separator` outside braces (BibTeX names)."""
    parts, depth, start = [], 0, 0
    for index, character in enumerate(text):
        if character == "{":
            depth += 1
        elif character == "}":
            depth = max(0, depth - 1)
        elif depth == 0 and (character == separator or (separator == " " and character.isspace())):
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part for part in parts if part.strip()]


@functools.lru_cache(maxsize=8192)
def _folded(text: str) -> str:
    with contextlib.suppress(ValueError, UnicodeDecodeError):
        text = codecs.decode(text, "ulatex")
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if c.isalnum() and not unicodedata.combining(c)).casefold()


@functools.lru_cache(maxsize=8192)
def _name_keys(name: str) -> frozenset[str]:
    """What a BibTeX name is filed under: its family part ("Last, First" or the words from
    the first lower-case one, else the last word) and that part's last word, folded."""
    name = name.strip()
    parts = _top_level(name, ",")
    if len(parts) > 1:
        family = parts[0]
    else:
        words = _top_level(name, " ")
        start = next(
            (i for i, word in enumerate(words[:-1]) if i and word[:1].islower()), len(words) - 1
        )
        family = " ".join(words[max(start, 0) :])
    words = _top_level(family, " ") or [family]
    keys = {_folded(family), _folded(words[-1])} - {""}
    return frozenset(keys or {name})


def _entry_keys(data: EntryData, linked_by: str) -> set[str]:
    keys: set[str] = set()
    for names in data.persons.values():
        for name in names if linked_by == "all" else names[:1]:
            keys |= _name_keys(str(name))
    if not keys:
        # No names: the cite shows a title, which a name could only read the same as whole.
        title = str(data.fields.get("shorttitle") or data.fields.get("title") or "")
        keys = {"\0no-names", _folded(title), _folded(title.split(":")[0])} - {""}
    return keys


def _groups(entries: list[EntryData], style: csl.StyleInfo) -> list[list[EntryData]]:
    """The entries in groups no two of which share a compared family name, each in the list's
    order (the whole list as one group when the style links every entry)."""
    if not style.linked_by or len(entries) < 2:
        return [entries]
    parent = list(range(len(entries)))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    owner: dict[str, int] = {}
    for index, data in enumerate(entries):
        for key in _entry_keys(data, style.linked_by):
            if key in owner:
                parent[root(index)] = root(owner[key])
            else:
                owner[key] = index
    members: dict[int, list[EntryData]] = {}
    for index, data in enumerate(entries):
        members.setdefault(root(index), []).append(data)
    return list(members.values())


def _bins(groups: list[list[EntryData]]) -> list[list[EntryData]]:
    """Groups packed into at most one call per core, the largest first into the emptiest;
    each call's entries in the list's order."""
    total = sum(len(group) for group in groups)
    count = min(jsbundle.CALLS_AT_ONCE, len(groups), max(1, total // SLICE_MIN))
    bins: list[list[list[EntryData]]] = [[] for _ in range(count)]
    for group in sorted(groups, key=len, reverse=True):
        min(bins, key=lambda chosen: sum(map(len, chosen))).append(group)
    position = {id(group): index for index, group in enumerate(groups)}
    return [
        [data for group in sorted(chosen, key=lambda g: position[id(g)]) for data in group]
        for chosen in bins
        if chosen
    ]


def _stopped(entries, keys, known, results) -> _ListResult:
    """A call was stopped (time, memory, the render's budget): formatting the list whole would
    be stopped again. What was formatted shows, the rest raw with the reason, in the list's
    order (no sort keys tell the style's), and nothing is cached: the next render retries."""
    cached = [known[key] for key in keys if key in known]
    return _joined([*cached, *results], [data.key for data in entries])


def _grouped(
    entries: list[EntryData], groups: list[list[EntryData]], style: csl.StyleInfo, locale: str
) -> _ListResult | None:
    """The list formatted group by group (cached groups read back), or None when it must be
    formatted whole: a call could not give every entry's sort keys, or the groups do not
    fit together (processor.order)."""
    keys = [_cache_key("group", style, locale, _list_fingerprint(group)) for group in groups]
    known = _memory.get_many(keys)
    missing = [group for group, key in zip(groups, keys, strict=True) if key not in known]
    fresh: dict[str, _ListResult] = {}
    if missing:
        bins = _bins(missing)
        results = _calls(bins, style, locale, citations=True, sortkeys=True)
        if not all(_complete(result) for result in results):
            return _stopped(entries, keys, known, results)
        for chosen, result in zip(bins, results, strict=True):
            if set(result.sortkeys) != {data.key for data in chosen}:
                return None  # an entry refused: the whole list says which, and why
        by_key = {key: result for result in results for key in result.sortkeys}
        for group, key in zip(groups, keys, strict=True):
            if key in known:
                continue
            fresh[key] = known[key] = by_key[group[0].key].part([data.key for data in group])
    group_of = {data.key: index for index, group in enumerate(groups) for data in group}
    # Cites that read the same in two groups (a style whose cites do not start with the first
    # names, say) would have been told apart in the whole list.
    cites: dict[str, int] = {}
    for data in entries:
        cite = known[keys[group_of[data.key]]].ambigs.get(data.key, "")
        if cites.setdefault(cite, group_of[data.key]) != group_of[data.key]:
            return None
    rows = [
        (data.key, group_of[data.key], known[keys[group_of[data.key]]].sortkeys[data.key])
        for data in entries
    ]
    try:
        order = processor.order(style, locale, rows)
    except v8pool.JSError:
        order = None
    if order is None:
        return None
    if fresh:
        _memory.set_many(fresh)
    return _joined([known[key] for key in keys], order)


def format_references(
    entries: Iterable[EntryData], style: str | None = None, locale: str | None = None
) -> FormattedReferences:
    """The entries formatted in `style` (any shipped CSL style; Vancouver when unknown) and
    `locale` (a site language such as en-us), for the engine's reference lists."""
    entries = list({data.key: data for data in entries}.values())
    info = csl.style_info(style)
    language = csl.resolve_locale(locale)
    if not entries:
        return FormattedReferences({}, numeric=info.numeric)
    result = (_numeric if info.numeric else _sorted)(entries, info, language)
    return FormattedReferences(
        entries={key: f.html for key, f in result.entries.items()},
        math={key: f.math for key, f in result.entries.items() if f.math},
        numeric=info.numeric,
        order=list(result.order),
        markers=dict(result.markers),
        problems={key: f.problem for key, f in result.entries.items() if f.problem},
        prefix=info.prefix,
        suffix=info.suffix,
        delimiter=info.delimiter,
    )


def with_math_source(markup: str, formulas: tuple[str, ...]) -> str:
    """Formatted HTML with each math placeholder back as `$TeX$` (escaped)."""
    if not formulas:
        return markup
    return MATH_TOKEN.sub(
        lambda match: html.escape(f"${formulas[int(match.group(1))]}$", quote=False), markup
    )


def plain_text(markup: str, formulas: tuple[str, ...] = ()) -> str:
    """Formatted HTML as the text a reader sees (read from its elements, entities decoded)."""
    return " ".join(html_text(with_math_source(markup, formulas)).split())


def csl_items(entries: Iterable[EntryData]) -> list[dict]:
    """The CSL-JSON items of the entries, by citation-js's mapping (math as its TeX)."""
    entries = list(entries)
    objects = []
    for data in entries:
        obj, formulas = bibtex_object(data)
        objects.append((obj, formulas))
    if not objects:
        return []
    answer = processor.csl_json([obj for obj, _ in objects])
    by_key = {item.get("id"): item for item in answer.get("items") or []}
    items = []
    for (_obj, formulas), data in zip(objects, entries, strict=True):
        item = by_key.get(data.key)
        if item is None:
            continue
        items.append(_restore_math(item, formulas))
    return items


def ris_records(entries: Iterable[EntryData]) -> str:
    """The entries as RIS, by citation-js's mapping (math as its TeX)."""
    objects = [bibtex_object(data) for data in entries]
    if not objects:
        return ""
    formulas = [formula for _, found in objects for formula in found]
    text = processor.ris([obj for obj, _ in objects]).get("text") or ""
    if not formulas:
        return text
    # Placeholders are numbered per entry: restore them record by record.
    records = text.split("\nER  - ")
    restored = [
        _restore_math(record, found) for record, (_, found) in zip(records, objects, strict=False)
    ]
    return "\nER  - ".join(restored + records[len(restored) :])


def _restore_math(value, formulas: tuple[str, ...]):
    if not formulas:
        return value
    if isinstance(value, str):
        return MATH_TOKEN.sub(lambda match: f"${formulas[int(match.group(1))]}$", value)
    if isinstance(value, list):
        return [_restore_math(item, formulas) for item in value]
    if isinstance(value, dict):
        return {key: _restore_math(item, formulas) for key, item in value.items()}
    return value


class StoredBibliography:
    """A BibFile from the database, as the engine's Bibliography."""

    def __init__(self, bibfile: BibFile):
        self.bibfile = bibfile
        self.url = f"/{bibfile.name}"
        # Entries already read (None: not in the file); an object lives for one render or,
        # in a batch (an import), for all of it.
        self._seen: dict[str, EntryData | None] = {}
        # Entries too long to read (BibEntryQuerySet.readable): key -> stored length.
        self._too_long: dict[str, int] = {}

    def _data(self, keys: list[str]) -> list[EntryData]:
        unknown = [key for key in dict.fromkeys(keys) if key not in self._seen]
        if unknown:
            self._seen.update(dict.fromkeys(unknown))
            entries = BibEntry.objects.filter(bibfile=self.bibfile, key__in=unknown)
            sizes = entries.with_stored_chars().values_list("key", "entry_type", "stored_chars")
            for key, entry_type, size in sizes:
                if size > READ_BOUND_CHARS:
                    self._too_long[key] = size
                    self._seen[key] = EntryData(key, entry_type, {}, {})
            rows = entries.exclude(key__in=self._too_long).values_list(
                "key", "entry_type", "fields", "persons"
            )
            for key, entry_type, fields, persons in rows:
                self._seen[key] = EntryData(key, entry_type, fields, persons)
        return [self._seen[key] for key in keys if self._seen.get(key) is not None]

    def format(
        self, keys: list[str], style: str | None, locale: str | None = None
    ) -> FormattedReferences:
        data = self._data(keys)
        found = format_references(
            [entry for entry in data if entry.key not in self._too_long], style, locale
        )
        for entry in data:
            if entry.key in self._too_long:
                found.entries[entry.key] = unformatted_html(entry)
                found.order.append(entry.key)
                found.problems[entry.key] = (
                    f"the entry is {self._too_long[entry.key]:,} characters long as stored, "
                    f"over what a page reads of one entry ({READ_BOUND_CHARS:,}): upload "
                    f"{self.bibfile.name} again to read it within the limits"
                )
        return found

    def known(self, keys: list[str]) -> list[str]:
        """The keys the file has, without formatting them (a list past the render's bounds)."""
        return [data.key for data in self._data(keys)]

    def entries(self, keys: list[str]) -> list[EntryData]:
        """The data of the keys the file has, in the order asked."""
        return self._data(keys)


class ParsedBibliography:
    """A .bib file parsed in memory (the `render --bib` command, previews of uploads)."""

    def __init__(self, name: str, entries: list[ParsedEntry]):
        self.url = f"/{name}"
        self.entries = {entry.key: entry for entry in entries}

    def _data(self, keys: list[str]) -> list[EntryData]:
        found = [self.entries[key] for key in keys if key in self.entries]
        return [EntryData(e.key, e.entry_type, e.fields, e.persons) for e in found]

    def format(
        self, keys: list[str], style: str | None, locale: str | None = None
    ) -> FormattedReferences:
        return format_references(self._data(keys), style, locale)

    def known(self, keys: list[str]) -> list[str]:
        """The keys the file has, without formatting them (a list past the render's bounds)."""
        return [key for key in keys if key in self.entries]


def entry_data(entry) -> EntryData:
    """EntryData of a BibEntry row or a ParsedEntry."""
    return EntryData(entry.key, entry.entry_type, entry.fields, entry.persons)
