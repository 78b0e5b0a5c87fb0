"""PerGeneration (scidraft.site.snapshot): when a write changes the generation, the threads of
a process that miss at once load the value once between them, and a failing load (the database
is down) fails them together instead of one connection timeout after another."""

from __future__ import annotations

import threading
import time

import pytest

from scidraft.site.snapshot import PerGeneration

WAIT = 5.0


class SlowLoad:
    """A load that holds until `go` is set, counting its calls; it raises while `failing`."""

    def __init__(self):
        self.calls = 0
        self.started, self.go = threading.Event(), threading.Event()
        self.failing = False

    def __call__(self):
        self.calls += 1
        self.started.set()
        assert self.go.wait(WAIT)
        if self.failing:
            raise ConnectionError("database unavailable")
        return {"call": self.calls}


def _together(snapshot: PerGeneration, load: SlowLoad, count: int, generation: int) -> list:
    """`count` threads ask for the generation while the first load is held."""
    answers: list = []

    def ask():
        try:
            answers.append(snapshot.get(generation))
        except ConnectionError as error:
            answers.append(error)

    threads = [threading.Thread(target=ask) for _ in range(count)]
    for thread in threads:
        thread.start()
    assert load.started.wait(WAIT)
    time.sleep(0.1)  # the others reach the lock
    load.go.set()
    for thread in threads:
        thread.join(WAIT)
    return answers


def test_threads_missing_the_same_generation_load_it_once():
    """Eight threads miss generation 3 at once: one load, and every thread gets its value."""
    load = SlowLoad()
    snapshot = PerGeneration(load)
    answers = _together(snapshot, load, 8, 3)
    assert load.calls == 1
    assert answers == [{"call": 1}] * 8
    assert snapshot.get(3) is answers[0]


def test_a_failed_load_fails_the_waiting_threads_then_is_retried():
    """The load fails: the threads that waited for it get the same error without loading;
    after FAILED_SECONDS the next reader loads again and its value is kept."""
    load = SlowLoad()
    load.failing = True
    snapshot = PerGeneration(load)
    snapshot.FAILED_SECONDS = 0.2
    answers = _together(snapshot, load, 4, 5)
    assert load.calls == 1
    assert all(isinstance(answer, ConnectionError) for answer in answers)
    time.sleep(0.25)
    load.failing = False
    assert snapshot.get(5) == {"call": 2}
    assert snapshot.get(5) == {"call": 2} and load.calls == 2


def test_a_new_generation_is_loaded_and_an_older_one_never_replaces_it():
    """Generation 7 replaces 6; a late reader still on 6 gets a fresh load, which is not kept."""
    load = SlowLoad()
    load.go.set()
    snapshot = PerGeneration(load)
    assert snapshot.get(6) == {"call": 1}
    assert snapshot.get(7) == {"call": 2}
    assert snapshot.get(6) == {"call": 3}
    assert snapshot.get(7) == {"call": 2}
    assert load.calls == 3


@pytest.mark.django_db(transaction=True)
def test_a_value_loaded_inside_a_transaction_is_not_kept():
    """Read inside a transaction that may roll back: loaded, returned, not kept."""
    from django.db import transaction

    load = SlowLoad()
    load.go.set()
    snapshot = PerGeneration(load)
    with transaction.atomic():
        assert snapshot.get(9) == {"call": 1}
    assert snapshot.held is None
    assert snapshot.get(9) == {"call": 2}
