"""Formatted entries and lists as bibliography.formatting keeps them: one entry's HTML (and
the TeX of its math, or why it is shown raw), a list's entries, order and in-text markers, and
this process's cache of them in front of the shared one (Redis), bounded by count and size.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from scidraft.markup import shared_cache

# Formatted entries, groups and lists this process keeps (then the shared cache is asked):
# so many, and so many characters of HTML together (SCIDRAFT_CITATION_CACHE_MB: configure).
CACHE_MAX = 20_000
CACHE_BYTES = 8 * 1024 * 1024


def configure(*, cache_bytes: int | None = None) -> None:
    """The process's bound on formatted entries kept, from the settings."""
    global CACHE_BYTES
    if cache_bytes is not None:
        CACHE_BYTES = max(0, int(cache_bytes))


@dataclass(frozen=True)
class Formatted:
    html: str
    math: tuple[str, ...] = ()
    problem: str = ""


@dataclass
class ListResult:
    entries: dict[str, Formatted] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    markers: dict[str, str] = field(default_factory=dict)
    # The processor's bibliography sort keys (sorted styles formatted in groups, _grouped).
    sortkeys: dict[str, list] = field(default_factory=dict)
    # The cite each entry was disambiguated against (citeproc's ambiguity key), the same.
    ambigs: dict[str, str] = field(default_factory=dict)

    def part(self, keys: list[str]) -> ListResult:
        """What this result says of `keys` (one group of a list formatted in one call)."""
        return ListResult(
            {key: self.entries[key] for key in keys},
            list(keys),
            {key: self.markers[key] for key in keys if key in self.markers},
            {key: self.sortkeys[key] for key in keys if key in self.sortkeys},
            {key: self.ambigs.get(key, "") for key in keys},
        )


def joined(parts: Iterable[ListResult], order: list[str]) -> ListResult:
    """Results of separate calls as one list in `order`."""
    joined = ListResult(order=order)
    for part in parts:
        joined.entries.update(part.entries)
        joined.markers.update(part.markers)
    return joined


class Memory:
    """Formatted results by content: this process's, then the shared cache's."""

    def __init__(self):
        self.lock = threading.Lock()
        self.local: dict[str, object] = {}
        self.size = 0  # characters of HTML in `local`

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
        size = sum(map(self._weigh, values.values()))
        with self.lock:
            if len(self.local) + len(values) > CACHE_MAX or self.size + size > CACHE_BYTES:
                self.local.clear()
                self.size = 0
            if size <= CACHE_BYTES:
                self.local.update(values)
                self.size += size

    @staticmethod
    def _weigh(value) -> int:
        entries = [value] if isinstance(value, Formatted) else value.entries.values()
        return sum(len(f.html) + sum(map(len, f.math)) + 100 for f in entries)

    @staticmethod
    def _encode(value):
        if isinstance(value, Formatted):
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
            return Formatted(value[1], tuple(value[2]), value[3])
        entries = {key: Formatted(h, tuple(m), p) for key, (h, m, p) in value[1].items()}
        sortkeys = dict(value[4]) if len(value) > 4 else {}
        ambigs = dict(value[5]) if len(value) > 5 else {}
        return ListResult(entries, list(value[2]), dict(value[3]), sortkeys, ambigs)

    def clear(self) -> None:
        with self.lock:
            self.local.clear()
            self.size = 0


memory = Memory()
