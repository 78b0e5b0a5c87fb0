"""bibliography.formatted: formatted entries kept by this process, bounded by count and size."""

from __future__ import annotations

from django.core.cache import cache

from bibliography import formatted
from bibliography.formatted import Formatted, Memory


def test_formatted_entries_are_kept_within_the_cache_s_size(monkeypatch):
    """Entries past CACHE_BYTES of HTML are not kept beside the others: the process's copy is
    emptied and starts again (the shared cache still has them)."""
    monkeypatch.setattr(formatted, "CACHE_BYTES", 1_000)
    cache.clear()
    memory = Memory()
    memory.set_many({"a": Formatted("x" * 400), "b": Formatted("y" * 300)})
    assert set(memory.local) == {"a", "b"} and memory.size == 900
    memory.set_many({"c": Formatted("z" * 400)})
    assert set(memory.local) == {"c"} and memory.size == 500
    memory.set_many({"huge": Formatted("w" * 2_000)})
    assert memory.local == {} and memory.get_many(["huge"])["huge"].html == "w" * 2_000
    cache.clear()
