"""Memory for the pure steps of formatting: LaTeX decoding, parsed and formatted names.

A reference list decodes the same strings again and again (given names, family names, journal
titles recur across entries), and pybtex's LaTeX decoder and template engine are slow, so each
step remembers its results by its input. Results are pybtex rich text, which pybtex treats as
immutable values (every operation returns a new object), so one result may serve many entries.

`memo_clear()` empties every memory at once, so a benchmark measures formatting cold.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

# Enough for every distinct string of a few large bibliographies; each memory stays small.
MAXSIZE = 20_000

_MEMORIES: list = []


def remembered(function: Callable) -> Callable:
    """`function` with an LRU memory of its results, emptied by `memo_clear()`."""
    cached = functools.lru_cache(maxsize=MAXSIZE)(function)
    _MEMORIES.append(cached)
    return cached


def per_person(function: Callable) -> Callable:
    """`function(person, **options)` remembered by the person's name parts and the options."""
    memory: dict = {}
    _MEMORIES.append(memory)

    @functools.wraps(function)
    def remembered_for(person, **options):
        key = (person_key(person), tuple(sorted(options.items())))
        try:
            return memory[key]
        except KeyError:
            pass
        if len(memory) >= MAXSIZE:
            memory.clear()
        result = memory[key] = function(person, **options)
        return result

    return remembered_for


def memo_clear() -> None:
    """Forget every remembered result (benchmarks measure formatting cold)."""
    for memory in _MEMORIES:
        if isinstance(memory, dict):
            memory.clear()
        else:
            memory.cache_clear()


def person_key(person) -> tuple:
    """A hashable key of everything that formats a person (pybtex's Person is unhashable).
    Persons parsed by `parse_person` carry theirs (`memo_key`): names are read, never
    changed, and every formatting step of every name asks for it."""
    try:
        return person.memo_key
    except AttributeError:
        pass
    return (
        tuple(person.first_names),
        tuple(person.middle_names),
        tuple(person.prelast_names),
        tuple(person.last_names),
        tuple(person.lineage_names),
    )
