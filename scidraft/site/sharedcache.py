"""The cache every process shares (Redis), as the page cache uses it: calls that degrade to a
default when it is down, and whether there is one at all.

A cache outage must cost speed, not pages: every call the page cache makes goes through
`safe`, which logs the failure and answers `default`.
"""

from __future__ import annotations

import logging

from django.conf import settings

logger = logging.getLogger("scidraft.site.caching")


def safe(operation, *args, default=None):
    try:
        return operation(*args)
    except Exception:  # a cache outage must cost speed, not pages
        logger.warning("cache %s failed", getattr(operation, "__name__", "call"), exc_info=True)
        return default


def shared() -> bool:
    """Whether the cache is one every process shares. A local-memory cache (no REDIS_URL)
    belongs to one process: a number kept in it would not see another process's write
    (manage.py, another worker). SCIDRAFT_GENERATION_TTL is 0 exactly then."""
    return settings.SCIDRAFT_GENERATION_TTL > 0
