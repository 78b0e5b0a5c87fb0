"""A Redis cache backend that degrades instead of failing when Redis is unreachable.

SciDraft's cache only ever holds copies (rendered pages, the content generation read from the
database, typeset formulas; the login counters are in the database): losing it must cost speed,
never a page. So a connection or timeout error from Redis makes a read a miss and a write a
no-op, logged once per outage and then at most every `LOG_INTERVAL` seconds, instead of
becoming a 500. Short socket timeouts keep a hung or unreachable Redis from stalling requests.

After a failure, reads and stores skip Redis for `retry_after` seconds (a request then costs no
connect attempt at all); deletes are always attempted, because a skipped delete could leave a
stale value (the content generation) behind. redis-py opens a fresh connection on the next
command after a failure, so the cache comes back by itself once Redis answers again.

It is built on Django's documented base for cache backends (`BaseCache`) and redis-py's client,
not on Django's `RedisCache`: that one builds a `redis.Redis`, and with it a table of some 170
response callbacks, for every command (most of a cache hit's cost: a hit takes 1.5 to 3 times
as long), and the client class it builds from can only be changed through its private
attributes. This backend keeps one `redis.Redis` per server, which is thread-safe over
its connection pool (redis-py resets the pool after a fork). Keys, timeouts, the serialisation
(pickle, integers as they are, so that incr works) and the choice of server (writes to the
first of several LOCATIONs, reads from the others) are Django's RedisCache's, so either backend
reads what the other wrote.

Options (in CACHES["default"]["OPTIONS"]): `retry_after` (seconds, default 1.0); `pool_class`
(a redis-py connection pool class or its dotted path); the rest are redis-py's connection
options, with `socket_connect_timeout` and `socket_timeout` defaulting to 0.25 s here.
Errors that are not about reaching Redis (a full memory with noeviction, a bad value) still
raise: they are bugs or configuration to fix, not outages to ride out.
"""

from __future__ import annotations

import pickle
import random
import re
import time
from functools import wraps
from urllib.parse import urlsplit

import redis
from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.utils.module_loading import import_string
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
            if not always_try and self.cooling_down():
                return fallback(*args, **kwargs)
            try:
                result = method(self, *args, **kwargs)
            except OUTAGE_ERRORS as error:
                self.outage.failed(method.__name__, error)
                return fallback(*args, **kwargs)
            self.outage.succeeded()
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


def dumps(value) -> bytes | int:
    """Django's RedisCache serialisation: integers as they are (incr works on them), anything
    else pickled."""
    # type(), not isinstance(): a bool is pickled, as Django does.
    if type(value) is int:
        return value
    return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)


def loads(data: bytes):
    try:
        return int(data)
    except ValueError:
        return pickle.loads(data)  # noqa: S301 - values this backend stored itself


class ResilientRedisCache(BaseCache):
    """A Redis cache whose outages are misses and no-ops, with short socket timeouts."""

    def __init__(self, server, params):
        super().__init__(params)
        options = dict(params.get("OPTIONS") or {})
        self.retry_after = float(options.pop("retry_after", RETRY_AFTER))
        pool_class = options.pop("pool_class", None) or redis.ConnectionPool
        self.pool_class = import_string(pool_class) if isinstance(pool_class, str) else pool_class
        options.setdefault("socket_connect_timeout", SOCKET_TIMEOUT)
        options.setdefault("socket_timeout", SOCKET_TIMEOUT)
        self.pool_options = options
        self.servers = re.split("[;,]", server) if isinstance(server, str) else list(server)
        self.clients: dict[int, redis.Redis] = {}
        self.outage = _outage_for(",".join(self.servers))

    def client(self, *, write: bool = False) -> redis.Redis:
        """The client of the server for a write (the first) or a read (any other, if any)."""
        index = 0
        if not write and len(self.servers) > 1:
            index = random.randint(1, len(self.servers) - 1)  # noqa: S311 - spreading reads
        client = self.clients.get(index)
        if client is None:
            pool = self.pool_class.from_url(self.servers[index], **self.pool_options)
            client = self.clients.setdefault(index, redis.Redis(connection_pool=pool))
        return client

    def cooling_down(self) -> bool:
        """Redis failed less than `retry_after` seconds ago, in any thread of the process."""
        outage = self.outage
        return outage.down and time.monotonic() < outage.last_failure + self.retry_after

    def get_backend_timeout(self, timeout=DEFAULT_TIMEOUT):
        """Seconds to live: None for ever, 0 to delete (Redis takes relative expiries)."""
        if timeout == DEFAULT_TIMEOUT:
            timeout = self.default_timeout
        return None if timeout is None else max(0, int(timeout))

    @_degrades(_false)
    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        key = self.make_and_validate_key(key, version=version)
        timeout = self.get_backend_timeout(timeout)
        client = self.client(write=True)
        if timeout == 0:
            added = bool(client.set(key, dumps(value), nx=True))
            if added:
                client.delete(key)
            return added
        return bool(client.set(key, dumps(value), ex=timeout, nx=True))

    @_degrades(lambda key, default=None, version=None: default)
    def get(self, key, default=None, version=None):
        key = self.make_and_validate_key(key, version=version)
        value = self.client().get(key)
        return default if value is None else loads(value)

    @_degrades(_nothing)
    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        key = self.make_and_validate_key(key, version=version)
        timeout = self.get_backend_timeout(timeout)
        client = self.client(write=True)
        if timeout == 0:
            client.delete(key)
        else:
            client.set(key, dumps(value), ex=timeout)

    @_degrades(_false)
    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        key = self.make_and_validate_key(key, version=version)
        timeout = self.get_backend_timeout(timeout)
        client = self.client(write=True)
        if timeout is None:
            return bool(client.persist(key))
        return bool(client.expire(key, timeout))

    @_degrades(_false, always_try=True)
    def delete(self, key, version=None):
        key = self.make_and_validate_key(key, version=version)
        return bool(self.client(write=True).delete(key))

    @_degrades(lambda *args, **kwargs: {})
    def get_many(self, keys, version=None):
        key_map = {self.make_and_validate_key(key, version=version): key for key in keys}
        if not key_map:
            return {}
        values = self.client().mget(list(key_map))
        return {
            key_map[key]: loads(value)
            for key, value in zip(key_map, values, strict=True)
            if value is not None
        }

    @_degrades(_false)
    def has_key(self, key, version=None):
        key = self.make_and_validate_key(key, version=version)
        return bool(self.client().exists(key))

    @_degrades(_miss_on_incr)
    def incr(self, key, delta=1, version=None):
        key = self.make_and_validate_key(key, version=version)
        client = self.client(write=True)
        if not client.exists(key):
            raise ValueError(f"Key {key!r} not found.")
        return client.incr(key, delta)

    # Django's contract: the keys that were not stored.
    @_degrades(lambda data, *args, **kwargs: list(data))
    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        if not data:
            return []
        values = {self.make_and_validate_key(key, version=version): v for key, v in data.items()}
        timeout = self.get_backend_timeout(timeout)
        pipeline = self.client(write=True).pipeline()
        pipeline.mset({key: dumps(value) for key, value in values.items()})
        if timeout is not None:
            # MSET sets no expiry: one EXPIRE a key, in the same round trip.
            for key in values:
                pipeline.expire(key, timeout)
        pipeline.execute()
        return []

    @_degrades(_nothing, always_try=True)
    def delete_many(self, keys, version=None):
        keys = [self.make_and_validate_key(key, version=version) for key in keys]
        if keys:
            self.client(write=True).delete(*keys)

    @_degrades(_false, always_try=True)
    def clear(self):
        return bool(self.client(write=True).flushdb())
