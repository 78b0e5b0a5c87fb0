"""Each pytest-xdist worker's own Redis database (tests/workers.py)."""

from __future__ import annotations

import pytest

from tests.workers import own_redis_url


def test_each_worker_takes_the_database_after_the_previous_ones():
    assert own_redis_url("redis://127.0.0.1:6379/0", "gw0") == "redis://127.0.0.1:6379/0"
    assert own_redis_url("redis://127.0.0.1:6379/0", "gw1") == "redis://127.0.0.1:6379/1"
    assert own_redis_url("redis://:secret@cache:6380/4", "gw2") == "redis://:secret@cache:6380/6"
    assert own_redis_url("redis://127.0.0.1:6379", "gw3") == "redis://127.0.0.1:6379/3"


def test_a_worker_past_the_last_database_is_refused():
    with pytest.raises(RuntimeError, match="leaves none"):
        own_redis_url("redis://127.0.0.1:6379/14", "gw2")
