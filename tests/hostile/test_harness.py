"""The harness's memory figure: another thread's allocation during a call is not the call's."""

from __future__ import annotations

import threading

import pytest

from scidraft.bounds import InputPath

from .harness import Measured, assert_within, measure

PATH = InputPath("harness-check", "builtins.len", "a path for the harness's own test", 1.0, 32, ())
NOISE_MB = 96


def _touched(megabytes: int) -> bytearray:
    block = bytearray(megabytes << 20)
    block[::4096] = b"\x01" * len(block[::4096])  # every page resident
    return block


class _NoisyNeighbour(threading.Thread):
    """A thread, started before the measured call, that allocates NOISE_MB when the call's
    first run asks it to and ends."""

    def __init__(self):
        super().__init__(name="noisy-neighbour", daemon=True)
        self.go, self.done = threading.Event(), threading.Event()
        self.start()

    def run(self):
        self.go.wait(10)
        block = _touched(NOISE_MB)
        self.done.set()
        del block

    def call_allocating(self, megabytes: int):
        def call():
            if not self.go.is_set():
                self.go.set()
                self.done.wait(10)
                self.join(10)
            return len(_touched(megabytes))

        return call


def test_a_call_measured_beside_a_thread_that_allocated_is_measured_again():
    """The first figure holds the neighbour's memory and names it; the bound is checked on a
    measurement of the call alone."""
    measured = measure(_NoisyNeighbour().call_allocating(0))
    assert measured.memory_mb >= NOISE_MB * 0.9
    assert "noisy-neighbour" in measured.beside
    assert_within(PATH, measured, "a call that allocates nothing")


def test_a_call_over_its_bound_fails_however_often_it_is_measured():
    """A call that itself allocates past the bound fails, naming the thread beside it."""
    measured = measure(_NoisyNeighbour().call_allocating(2 * 32))
    over = r"by 6\d MB, over the bound of 32 MB.*noisy-neighbour"
    with pytest.raises(AssertionError, match=over):
        assert_within(PATH, measured, "a call of 64 MB")


def test_a_call_alone_is_measured_once():
    """Without a thread beside it, a figure over the bound is the call's own: no second try.
    (Built as measure() returns it: in a busy test process another thread may always run.)"""
    again = []
    alone = Measured(0.0, 48.0, None, None, beside=(), again=lambda: again.append(1))
    with pytest.raises(AssertionError, match="over the bound of 32 MB$"):
        assert_within(PATH, alone, "a call of 48 MB")
    assert again == []
