"""A reference list divided among citation calls made at once (bibliography.formatting):
a numbered style's entries in even slices (slices), a sorted style's in groups of entries that
cannot change each other's text (groups), packed into one call per core (bins).

In a sorted style an entry's text depends on the rest of the list only through names: a year
suffix ("2017a"), names or given names added to tell two cites apart, all start from cites
whose first names read the same; citeproc-js's name register, which decides given names, is
keyed by family name (by first names only under the "primary-name" rules); and an author
replaced by "———" repeats the entry above. Entries sharing no family name of those the style
compares (StyleInfo.linked_by) are therefore formatted apart, in contexts of their own at
once, and the list is put together in the processor's own order (processor.order). Family names
are compared folded further than the processor folds them (base letters, no case, no
punctuation, the last word alone too: "van Gogh" meets "Gogh"), so that a doubt joins groups.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import unicodedata

from . import csl, jsbundle
from .entries import EntryData

# How many entries one call formats: a list of thousands is formatted in slices, each bounded
# by the engine's time limit and the render's budget; at least SLICE_MIN (a call costs about a
# millisecond more).
BATCH = 50
SLICE_MIN = 10


def slices(entries: list[EntryData]) -> list[list[EntryData]]:
    """Numbered entries in slices formatted at once, one per core: as even as can be, at least
    SLICE_MIN entries and at most BATCH each."""
    if not entries:
        return []
    count = min(jsbundle.CALLS_AT_ONCE, max(1, len(entries) // SLICE_MIN))
    size = min(BATCH, -(-len(entries) // count))
    return [entries[start : start + size] for start in range(0, len(entries), size)]


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
def name_keys(name: str) -> frozenset[str]:
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
            keys |= name_keys(str(name))
    if not keys:
        # No names: the cite shows a title, which a name could only read the same as whole.
        title = str(data.fields.get("shorttitle") or data.fields.get("title") or "")
        keys = {"\0no-names", _folded(title), _folded(title.split(":")[0])} - {""}
    return keys


def groups(entries: list[EntryData], style: csl.StyleInfo) -> list[list[EntryData]]:
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


def bins(groups: list[list[EntryData]]) -> list[list[EntryData]]:
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
