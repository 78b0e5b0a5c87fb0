"""Django's Redis cache backend, made to degrade instead of fail when Redis is unreachable.

SciDraft's cache only ever holds copies (rendered pages, the content generation read from the
database, typeset formulas; the login counters are in the database): losing it must cost speed,
never a page
(issue 10, "Faults"). So a connection or timeout error from Redis makes a read a miss and a
write a no-op, logged once per outage and then at most every `LOG_INTERVAL` seconds, instead of
becoming a 500. Short socket timeouts keep a hung or unreachable Redis from stalling requests.

After a failure, reads and stores skip Redis for `retry_after` seconds (a request then costs no
connect attempt at all); deletes are always attempted, because a skipped delete could leave a
stale value (the content generation) behind. redis-py opens a fresh connection on the next
command after a failure, so the cache comes back by itself once Redis answers again.

Options (in CACHES["default"]["OPTIONS"], beside redis-py's own): `retry_after` (seconds,
default 1.0); `socket_connect_timeout` and `socket_timeout` default to 0.25 s here.
Errors that are not about reaching Redis (a full memory with noeviction, a bad value) still
raise: they are bugs or configuration to fix, not outages to ride out.
"""

from __future__ import annotations

import time
from functools import wraps
from urllib.parse import urlsplit

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ops.outages import OutageLog

OUTAGE_ERRORS = (RedisConnectionError, RedisTimeoutError)
SOCKET_TIMEOUT = 0.25
RETRY_AFTER = 1.0

# One record per Redis location and process: Django makes a backend instance per thread, but
# an outage (and its log lines) concerns the whole process.
_outages: dict[str, OutageLog] = {}


def _outage_for(location: str) -> OutageLog:
    outage = _outages.get(location)
    if outage is None:
        outage = _outages.setdefault(location, OutageLog(f"cache at {_shown(location)}"))
    return outage


def _shown(location: str) -> str:
    """The location for the log, without a password (redis://:secret@host/0)."""
    return ",".join(
        urlsplit(url)._replace(netloc=urlsplit(url).netloc.rpartition("@")[2]).geturl()
        for url in location.split(",")
    )


def _degrades(fallback, *, always_try: bool = False):
    """Run the operation; on an outage error answer `fallback(...)` (same arguments) instead."""

    def decorate(method):
        @wraps(method)
        def wrapper(self, *args, **kwargs):
            if not always_try and self._cooling_down():
                return fallback(*args, **kwargs)
            try:
                result = method(self, *args, **kwargs)
            except OUTAGE_ERRORS as error:
                self._outage.failed(method.__name__, error)
                return fallback(*args, **kwargs)
            self._outage.succeeded()
            return result

        return wrapper

    return decorate


def _miss_on_incr(key, *args, **kwargs):
    # Django's contract for incr/decr of a missing key; callers (the login limits) handle it.
    raise ValueError(f"Key {key!r} not found (cache unavailable)")


def _nothing(*args, **kwargs):
    return None


def _false(*args, **kwargs):
    return False


class SharedClientRedisCacheClient(RedisCacheClient):
    """Django builds a redis.Redis for every command, and with it a table of some 170 response
    callbacks: most of a cache hit's cost. One client per connection pool is enough, since a
    redis.Redis is thread-safe over its pool (which redis-py resets after a fork)."""

    def __init__(self, servers, **options):
        super().__init__(servers, **options)
        self._clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients.setdefault(id(pool), self._client(connection_pool=pool))
        return client


class ResilientRedisCache(RedisCache):
    """RedisCache whose outages are misses and no-ops, with short socket timeouts."""

    def __init__(self, server, params):
        options = dict(params.get("OPTIONS") or {})
        self._retry_after = float(options.pop("retry_after", RETRY_AFTER))
        options.setdefault("socket_connect_timeout", SOCKET_TIMEOUT)
        options.setdefault("socket_timeout", SOCKET_TIMEOUT)
        super().__init__(server, {**params, "OPTIONS": options})
        self._class = SharedClientRedisCacheClient
        self._outage = _outage_for(",".join(self._servers))

    def _cooling_down(self) -> bool:
        # Per process, not per thread: once any thread saw Redis fail, the others skip it too.
        outage = self._outage
        return outage.down and time.monotonic() < outage.last_failure + self._retry_after

    @_degrades(_false)
    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return super().add(key, value, timeout, version)

    @_degrades(lambda key, default=None, version=None: default)
    def get(self, key, default=None, version=None):
        return super().get(key, default, version)

    @_degrades(_nothing)
    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return super().set(key, value, timeout, version)

    @_degrades(_false)
    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return super().touch(key, timeout, version)

    @_degrades(_false, always_try=True)
    def delete(self, key, version=None):
        return super().delete(key, version)

    @_degrades(lambda *args, **kwargs: {})
    def get_many(self, keys, version=None):
        return super().get_many(keys, version)

    @_degrades(_false)
    def has_key(self, key, version=None):
        return super().has_key(key, version)

    @_degrades(_miss_on_incr)
    def incr(self, key, delta=1, version=None):
        return super().incr(key, delta, version)

    # Django's contract: the keys that were not stored.
    @_degrades(lambda data, *args, **kwargs: list(data))
    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return super().set_many(data, timeout, version)

    @_degrades(_nothing, always_try=True)
    def delete_many(self, keys, version=None):
        return super().delete_many(keys, version)

    @_degrades(_false, always_try=True)
    def clear(self):
        return super().clear()
