"""Calls made at once, each in a context of its own (scidraft.markup.v8pool), by one caller:
the independent slices of a numbered reference list, or the contexts a worker prepares as it
starts. V8 runs each context in a thread of its own and the caller waits with the GIL released,
so n calls take about the time of one on n idle cores.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from py_mini_racer import MiniRacer

from . import limits, v8pool
from .v8pool import Clock, JSError, Pool

# Calls one caller may run at once, on this many cores at most.
CALLS_AT_ONCE = max(1, min(4, os.cpu_count() or 1))

_threads: ThreadPoolExecutor | None = None
_threads_lock = threading.Lock()


def _after_fork() -> None:
    global _threads, _threads_lock
    # The parent's executor counts threads the child does not have: it would never run a call.
    _threads, _threads_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def _executor() -> ThreadPoolExecutor:
    global _threads
    with _threads_lock:
        if _threads is None:
            # Shared by the process's requests: at most this many calls wait on V8 through it.
            _threads = ThreadPoolExecutor(
                max_workers=2 * CALLS_AT_ONCE, thread_name_prefix="v8-at-once"
            )
        return _threads


def _run_caught(function: str, args: tuple, pool: Pool, before, timeout: float, spent):
    try:
        return v8pool.run(function, args, pool, before, timeout, spent)
    except JSError as error:
        return error


def _run_for(outcome: limits.Outcome, *call):
    """_run_caught in an executor's thread, which has no budget of its own: a call stopped by
    time there is recorded in the caller's `outcome`."""
    with limits.budget(float("inf"), float("inf"), scale=outcome.scale) as inner:
        try:
            return _run_caught(*call)
        finally:
            outcome.cut_short = outcome.cut_short or inner.cut_short


def call(function: str, arg_lists: list[tuple], *, pool: Pool, before=None, floor: float):
    """`function(*args)` for each of `arg_lists`, at once, in contexts of `pool` of their own;
    each call is bounded as v8pool.call bounds one, and the render's budget is charged the slowest
    call's engine time. Each call's result, or the JSError it raised."""
    limit = v8pool.timeout(floor)
    spent: list[float] = []
    clock = Clock()
    outcome = limits.Outcome(scale=limits.time_scale())
    try:
        if len(arg_lists) <= 1:
            return [_run_caught(function, args, pool, before, limit, spent) for args in arg_lists]
        calls = [
            _executor().submit(_run_for, outcome, function, args, pool, before, limit, spent)
            for args in arg_lists
        ]
        return [call.result() for call in calls]
    finally:
        if outcome.cut_short:
            limits.cut_short()
        # The calls ran at once: the process's CPU time covers them all, the wall clock the
        # slowest.
        limits.charge_engine(min(max(spent, default=0.0), clock.seconds()))


def prepare(pool: Pool, count: int, before=None) -> None:
    """Make `count` contexts of `pool` ready before requests need them, each given
    `before(context)` (as a call's `before` is), all at once (each context runs in a V8 thread
    of its own). A context whose preparation failed is closed; the first failure is raised
    once every context is done."""
    contexts = [pool.take() for _ in range(count)]

    def prepare(context: MiniRacer) -> None:
        try:
            if before is not None:
                before(context)
        except BaseException:
            pool.discard(context)
            raise
        pool.give_back(context)

    calls = [_executor().submit(prepare, context) for context in contexts]
    failures = [failure for failure in (call.exception() for call in calls) if failure]
    if failures:
        raise failures[0]
