"""The cache this process shares with the others (Django's: Redis in production), for results
the engines compute (KaTeX's formulas, citeproc-js's entries): another process, or this one
after its own caches dropped them, reuses them instead of calling V8 again. An outage of the
shared cache costs the engine's call, never a render.
"""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)

_shared_cache = None


def use_shared_cache(cache) -> None:
    """A cache shared by processes (Django's, i.e. Redis in production), consulted when this
    process has not computed a result yet; any object with get(key) and set(key, value)."""
    global _shared_cache
    _shared_cache = cache


def _shared(operation: str, *args):
    if _shared_cache is None:
        return None
    try:
        return getattr(_shared_cache, operation)(*args)
    except Exception:  # noqa: BLE001 - a cache outage costs a KaTeX call, never a render
        logger.warning("shared formula cache %s failed", operation, exc_info=True)
        return None


def get(key: str):
    """The shared cache's value for `key`; None without one, when it lacks it, or in an outage."""
    return _shared("get", key)


def put(key: str, value) -> None:
    _shared("set", key, value)


def get_many(keys: list[str]) -> dict:
    """The shared cache's values for `keys` (those it has); {} without one or in an outage."""
    if _shared_cache is None or not keys:
        return {}
    try:
        getter = getattr(_shared_cache, "get_many", None)
        if getter is not None:
            return dict(getter(keys))
        return {key: value for key in keys if (value := _shared_cache.get(key)) is not None}
    except Exception:  # noqa: BLE001 - a cache outage costs a formatting, never a render
        logger.warning("shared cache get_many failed", exc_info=True)
        return {}


def set_many(values: dict) -> None:
    if _shared_cache is None or not values:
        return
    try:
        setter = getattr(_shared_cache, "set_many", None)
        if setter is not None:
            setter(values)
        else:
            for key, value in values.items():
                _shared_cache.set(key, value)
    except Exception:  # noqa: BLE001
        logger.warning("shared cache set_many failed", exc_info=True)
