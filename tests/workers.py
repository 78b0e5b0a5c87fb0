"""Each pytest-xdist worker's own Redis database: REDIS_URL's for gw0, the next one for gw1,
and so on (`make test` spreads the suite over the cores).

A test empties the cache (FLUSHDB) and moves the site's generation; the live-editing tests
keep their channel layer's groups in Redis. None of it may reach the tests another worker
runs at the same moment. Loaded as a plugin (`-p tests.workers` in pyproject.toml's addopts)
because Django's settings read REDIS_URL once, before any conftest is imported.
"""

from __future__ import annotations

import os
import urllib.parse

REDIS_DATABASES = 16  # Redis's default number


def own_redis_url(url: str, worker: str) -> str:
    """`url` moved to the database of `worker` ("gw0", "gw1", ...)."""
    parts = urllib.parse.urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    database = base + int(worker[2:])
    if database >= REDIS_DATABASES:
        raise RuntimeError(f"REDIS_URL's database {base} leaves none for pytest-xdist's {worker}")
    return urllib.parse.urlunsplit(parts._replace(path=f"/{database}"))


_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker.startswith("gw") and os.environ.get("REDIS_URL"):
    os.environ["REDIS_URL"] = own_redis_url(os.environ["REDIS_URL"], _worker)
