"""ResilientRedisCache: Redis down is a miss or a no-op, fast and logged; Redis back is used again.

The dead-port tests need nothing running. The recovery test starts its own redis-server on a
free loopback port (skipped when Debian's redis-server is absent), stops it and starts it again
on the same port, as an operator's restart would.
"""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from scidraft.resilient_cache import ResilientRedisCache, _outages

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _backend(port: int, **options) -> ResilientRedisCache:
    _outages.clear()  # each test starts with no outage on record
    return ResilientRedisCache(
        f"redis://127.0.0.1:{port}/11", {"KEY_PREFIX": "resilient-test", "OPTIONS": options}
    )


@pytest.fixture
def dead():
    """A backend pointed at a loopback port where nothing listens."""
    return _backend(_free_port())


def test_reads_on_a_dead_port_are_misses(dead):
    """get answers the default, get_many nothing, has_key False: no exception."""
    assert dead.get("page", "fallback") == "fallback"
    assert dead.get("page") is None
    assert dead.get_many(["a", "b"]) == {}
    assert dead.has_key("a") is False
    assert dead.get_or_set("computed", lambda: 42) == 42


def test_writes_on_a_dead_port_are_no_ops(dead):
    """set/add/touch/delete/set_many/delete_many/clear return without raising or storing."""
    assert dead.set("page", "html") is None
    assert dead.add("page", "html") is False
    assert dead.touch("page") is False
    assert dead.delete("page") is False
    assert dead.set_many({"a": 1, "b": 2}) == ["a", "b"]
    assert dead.delete_many(["a", "b"]) is None
    assert dead.clear() is False


def test_incr_on_a_dead_port_is_a_missing_key(dead):
    """incr/decr raise ValueError, Django's answer for a missing key (the login limits catch it)."""
    with pytest.raises(ValueError):
        dead.incr("counter")
    with pytest.raises(ValueError):
        dead.decr("counter")


def test_an_outage_costs_little_time(dead):
    """A hundred reads and writes against a dead port take well under a second."""
    began = time.perf_counter()
    for number in range(100):
        dead.get(f"key{number}")
        dead.set(f"key{number}", number)
    assert time.perf_counter() - began < 1.0


def test_unanswered_connections_time_out_quickly():
    """A server that accepts but never answers (a hung Redis) costs the short socket timeout."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        backend = _backend(listener.getsockname()[1], socket_timeout=0.1)
        began = time.perf_counter()
        assert backend.get("page", "fallback") == "fallback"
        assert time.perf_counter() - began < 1.0


def _connections(listener: socket.socket) -> int:
    """How many connections reached `listener` since the last call (accepted and closed)."""
    listener.setblocking(False)
    count = 0
    while True:
        try:
            connection, _ = listener.accept()
        except BlockingIOError:
            return count
        connection.close()
        count += 1


def test_reads_skip_redis_while_cooling_down_but_deletes_are_tried():
    """After a failure, reads answer at once without a connection attempt for retry_after
    seconds; deletes still try (a skipped delete could leave a stale value)."""
    with socket.socket() as listener:  # a hung Redis: connections queue, nothing answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        backend = _backend(listener.getsockname()[1], socket_timeout=0.05, retry_after=60)
        assert backend.get("first", "fallback") == "fallback"  # records the outage
        assert _connections(listener) >= 1
        assert backend.get("page", "fallback") == "fallback"
        assert backend.set("page", "html") is None
        assert _connections(listener) == 0
        backend.delete("page")
        assert _connections(listener) >= 1


def test_an_outage_is_logged_once_then_throttled(dead, caplog):
    """Many failures in a row give one warning, not one per call."""
    with caplog.at_level(logging.WARNING, logger="ops.outages"):
        for number in range(50):
            dead.delete(f"key{number}")  # always tried: fails every time
    warnings = [r for r in caplog.records if "unavailable" in r.getMessage()]
    assert len(warnings) == 1
    assert "cache at redis://127.0.0.1" in warnings[0].getMessage()


def test_the_log_does_not_show_a_redis_password(caplog):
    """A password in REDIS_URL stays out of the outage warning."""
    _outages.clear()
    backend = ResilientRedisCache(
        f"redis://:hunter2secret@127.0.0.1:{_free_port()}/11", {"OPTIONS": {}}
    )
    with caplog.at_level(logging.WARNING, logger="ops.outages"):
        backend.get("page")
    assert "unavailable" in caplog.text
    assert "hunter2secret" not in caplog.text


@pytest.fixture
def redis_server(tmp_path):
    """Start/stop callables for a redis-server of our own on a fixed free port."""
    if not Path(REDIS_SERVER).exists():
        pytest.skip("redis-server is not installed")
    port = _free_port()
    processes = []

    def start():
        process = subprocess.Popen(  # noqa: S603 - Debian's redis-server, fixed arguments
            [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(tmp_path)],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        processes.append(process)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    def stop():
        process = processes[-1]
        process.terminate()
        process.wait(timeout=10)

    yield port, start, stop
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def test_cache_comes_back_after_a_redis_restart(redis_server, caplog):
    """Stored values are read back; with Redis stopped reads miss; once it is started again
    (same port, empty) writes and reads work without a new backend, and recovery is logged."""
    port, start, stop = redis_server
    start()
    cache = _backend(port, retry_after=0.05)
    cache.set("page", "html")
    assert cache.get("page") == "html"

    stop()
    assert cache.get("page", "miss") == "miss"
    cache.set("page", "other")  # no-op, no error

    start()
    time.sleep(0.1)  # past retry_after
    with caplog.at_level(logging.WARNING, logger="ops.outages"):
        cache.set("page", "again")
        assert cache.get("page") == "again"
    assert any("reachable again" in r.getMessage() for r in caplog.records)


def test_one_redis_client_serves_every_command():
    """Django's RedisCache builds a redis.Redis per command; this backend keeps one a server."""
    import os

    location = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/11"
    backend = ResilientRedisCache(location, {"KEY_PREFIX": "shared-client-test"})
    client = backend.client()
    assert backend.client() is client
    assert backend.client(write=True) is client  # one server: one client


def test_writes_go_to_the_first_server_and_reads_to_the_others():
    """Several LOCATIONs, as Django's RedisCache takes them: the first is written, the others
    are read."""
    backend = ResilientRedisCache(
        "redis://127.0.0.1:1/0,redis://127.0.0.1:2/0;redis://127.0.0.1:3/0", {}
    )
    written = backend.client(write=True).connection_pool.connection_kwargs["port"]
    read = {backend.client().connection_pool.connection_kwargs["port"] for _ in range(50)}
    assert written == 1
    assert read == {2, 3}


def test_the_backend_stands_on_djangos_public_cache_api():
    """It subclasses BaseCache, Django's documented base for cache backends, and neither
    defines nor assigns any of its underscored names: no private attribute of Django's is
    overridden."""
    from django.core.cache.backends.base import BaseCache

    assert ResilientRedisCache.__bases__ == (BaseCache,)

    def private(names) -> set[str]:
        return {name for name in names if name.startswith("_") and not name.endswith("__")}

    parents = set().union(*(private(vars(cls)) for cls in ResilientRedisCache.__mro__[1:]))
    plain = BaseCache({"KEY_PREFIX": "p", "OPTIONS": {}})
    parents |= private(vars(plain))
    backend = _backend(_free_port())
    assert private(vars(ResilientRedisCache)) & parents == set()
    assert private(vars(backend)) <= private(vars(plain))
    for name in private(vars(backend)):
        assert getattr(backend, name) == getattr(plain, name)


def test_values_round_trip_as_djangos_redis_cache_stores_them(settings):
    """Integers stay integers in Redis (incr works on them), anything else is pickled, and
    Django's RedisCache reads what this backend wrote and the reverse."""
    import os

    from django.core.cache.backends.redis import RedisCache

    location = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/11"
    params = {"KEY_PREFIX": "round-trip-test"}
    ours, djangos = ResilientRedisCache(location, params), RedisCache(location, params)
    try:
        values = {"n": 41, "b": True, "s": "é", "d": {"a": [1, 2.5]}, "none": None}
        ours.set_many(values, timeout=60)
        assert djangos.get_many(list(values)) == values
        assert ours.incr("n") == 42 and djangos.get("n") == 42
        djangos.set("theirs", ("t", 1))
        assert ours.get("theirs") == ("t", 1)
        assert ours.add("theirs", 0) is False and ours.add("new", 0, timeout=0) is True
        assert ours.get("new", "gone") == "gone"
        assert ours.touch("theirs", None) is True and ours.has_key("theirs")
        assert ours.get_or_set("computed", lambda: 7) == 7
    finally:
        ours.delete_many(["n", "b", "s", "d", "none", "theirs", "new", "computed"])
    assert djangos.get("theirs") is None


def test_a_pool_class_is_taken_by_dotted_path_and_options_reach_the_connections():
    """OPTIONS' pool_class names redis-py's pool; the others are its connections' settings."""
    import redis

    backend = _backend(_free_port(), pool_class="redis.BlockingConnectionPool", socket_timeout=2)
    pool = backend.client().connection_pool
    assert isinstance(pool, redis.BlockingConnectionPool)
    assert pool.connection_kwargs["socket_timeout"] == 2
    assert pool.connection_kwargs["socket_connect_timeout"] == 0.25
