"""scidraft.markup.bounded_cache: a least-recently-used cache bounded by count and by size."""

from __future__ import annotations

from scidraft.markup.bounded_cache import BoundedCache


def _cache(items: int, size: int) -> BoundedCache:
    return BoundedCache(items, size, lambda key, value: len(value))


def test_past_its_count_the_least_recently_used_entry_goes():
    cache = _cache(2, 1_000)
    cache.put("a", "1")
    cache.put("b", "2")
    assert cache.get("a") == "1"  # now the most recently used
    cache.put("c", "3")
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ("1", None, "3")


def test_past_its_size_entries_go_until_the_rest_fits():
    """Few large entries fill the cache as many small ones do; one larger than the whole
    cache is never kept."""
    cache = _cache(100, 10)
    for key in "abcd":
        cache.put(key, "xxxx")  # 4 each: two fit in 10
    assert [cache.get(key) for key in "abcd"] == [None, None, "xxxx", "xxxx"]
    cache.put("huge", "x" * 11)
    assert cache.get("huge") is None and cache.info().size == 8


def test_resizing_and_clearing_drop_entries_and_the_counts():
    cache = _cache(100, 100)
    for key in "abcde":
        cache.put(key, "xx")
    cache.get("a")
    cache.get("z")
    assert cache.info()[:4] == (1, 1, 100, 5)
    cache.resize(max_bytes=4)
    assert cache.info().currsize == 2 and cache.get("e") == "xx"
    cache.clear()
    assert cache.info()[:4] == (0, 0, 100, 0)
