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
the list (one entry's forms: bibliography.entries). A long list is formatted in several calls
at once (bibliography.grouping).

Formatted entries are cached by content, style and locale in the process and in the shared
cache (Redis): citeproc-js takes a few milliseconds an entry, and a re-render or another
process should not pay that again.
"""

from __future__ import annotations

import hashlib
import html
import itertools
import logging
import unicodedata
from collections.abc import Iterable

from scidraft.markup import limits, v8pool
from scidraft.markup.context import FormattedReferences

from . import csl, grouping, jsbundle, processor
from .entries import (
    EntryData,
    bibtex_object,
    entry_data,
    entry_html,
    fingerprint,
    restore_math,
    unformatted_html,
)
from .formatted import Formatted, ListResult, joined, memory
from .models import READ_BOUND_CHARS, BibEntry, BibFile
from .parsing import ParsedEntry

logger = logging.getLogger(__name__)

DEFAULT_STYLE = csl.DEFAULT_STYLE

__all__ = [
    "DEFAULT_STYLE",
    "ParsedBibliography",
    "StoredBibliography",
    "csl_items",
    "entry_data",  # where the pages' CSL-JSON and RIS exports take it from
    "format_cache_clear",
    "format_references",
    "ris_records",
]


def format_cache_clear() -> None:
    """Forget every formatted entry of this process (benchmarks measure formatting cold). What
    a style's file says (csl.style_info) is kept: it changes only with the installed styles."""
    memory.clear()


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
) -> list[ListResult]:
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
) -> ListResult:
    result = ListResult()
    if isinstance(answer, v8pool.JSError):
        logger.warning("citation-js failed on %d entries: %s", len(entries), answer.message)
        reason = f"the reference list could not be formatted: {answer.message}"
        for data in entries:
            result.entries[data.key] = Formatted(unformatted_html(data), problem=reason)
            result.order.append(data.key)
        return result
    errors = answer.get("errors") or {}
    for key, raw in answer.get("entries") or []:
        if key in objects and key not in errors:
            result.entries[key] = Formatted(entry_html(raw), formulas[key])
            result.order.append(key)
    for data in entries:
        if data.key not in result.entries:
            reason = errors.get(data.key) or "citeproc-js printed nothing for it"
            result.entries[data.key] = Formatted(
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


def _numeric(entries: list[EntryData], style: csl.StyleInfo, locale: str) -> ListResult:
    """Numbered styles: each entry formatted as the theme formats it, alone, so it is cached
    alone (its text does not depend on the other entries of the list)."""
    keys = {data.key: _cache_key("entry", style, locale, fingerprint(data)) for data in entries}
    known = memory.get_many(list(dict.fromkeys(keys.values())))
    missing = [data for data in entries if keys[data.key] not in known]
    fresh: dict[str, object] = {}
    slices = grouping.slices(missing)
    for start in range(0, len(slices), jsbundle.CALLS_AT_ONCE):
        group = slices[start : start + jsbundle.CALLS_AT_ONCE]
        if start and limits.expired():
            # The render's budget is spent: the rest shows raw this time (nothing of it is
            # cached), and the next render starts from the slices formatted now.
            for data in itertools.chain.from_iterable(group):
                known[keys[data.key]] = Formatted(
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
        memory.set_many(fresh)
    return ListResult(
        {data.key: known[keys[data.key]] for data in entries}, [data.key for data in entries]
    )


def _list_fingerprint(entries: list[EntryData]) -> str:
    return hashlib.sha256("\0".join(fingerprint(data) for data in entries).encode()).hexdigest()


def _complete(result: ListResult) -> bool:
    """Formatted in full: not shown raw because a call failed (which the next render retries)."""
    return not any(f.problem.startswith("the reference list") for f in result.entries.values())


def _sorted(entries: list[EntryData], style: csl.StyleInfo, locale: str) -> ListResult:
    """Author–date and note styles: the list is sorted and disambiguated as a whole
    ("2017a"), so it is cached as a whole; it is formatted in groups of entries that cannot
    change each other's text (_groups), at once and each cached, when the style allows."""
    key = _cache_key("list", style, locale, _list_fingerprint(entries))
    known = memory.get_many([key])
    if key in known:
        return known[key]
    groups = grouping.groups(entries, style)
    result = _grouped(entries, groups, style, locale) if len(groups) > 1 else None
    if result is None:
        (result,) = _calls([entries], style, locale, citations=True)
    if _complete(result):
        memory.set_many({key: result})
    return result


def _stopped(entries, keys, known, results) -> ListResult:
    """A call was stopped (time, memory, the render's budget): formatting the list whole would
    be stopped again. What was formatted shows, the rest raw with the reason, in the list's
    order (no sort keys tell the style's), and nothing is cached: the next render retries."""
    cached = [known[key] for key in keys if key in known]
    return joined([*cached, *results], [data.key for data in entries])


def _grouped(
    entries: list[EntryData], groups: list[list[EntryData]], style: csl.StyleInfo, locale: str
) -> ListResult | None:
    """The list formatted group by group (cached groups read back), or None when it must be
    formatted whole: a call could not give every entry's sort keys, or the groups do not
    fit together (processor.order)."""
    keys = [_cache_key("group", style, locale, _list_fingerprint(group)) for group in groups]
    known = memory.get_many(keys)
    missing = [group for group, key in zip(groups, keys, strict=True) if key not in known]
    fresh: dict[str, ListResult] = {}
    if missing:
        bins = grouping.bins(missing)
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
        memory.set_many(fresh)
    return joined([known[key] for key in keys], order)


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
        items.append(restore_math(item, formulas))
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
        restore_math(record, found) for record, (_, found) in zip(records, objects, strict=False)
    ]
    return "\nER  - ".join(restored + records[len(restored) :])


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
