"""Embedded V8 (mini-racer) contexts, pooled per process, and the bounds on each call into them.

A pool holds the contexts of one set of libraries (scidraft.markup.jsengine's KaTeX with
pseudocode.js; bibliography.jsbundle's citation bundle): a call borrows an idle context (or
makes one) and gives it back, so a context serves one call at a time, and threads that come and
go (a development server's thread per request) reuse contexts instead of each starting a V8 of
their own. After fork the child's pools start empty. Contexts are closed at exit so the process
never waits on a V8 thread. Each call is bounded in time (CALL_TIMEOUT_SECONDS, or what is left
of the render's budget: scidraft.markup.limits) and in V8 heap (MEMORY_LIMIT_BYTES).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import re
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from py_mini_racer import (
    DEFAULT_V8_FLAGS,
    JSEvalException,
    JSOOMException,
    JSTimeoutException,
    MiniRacer,
    init_mini_racer,
)

from . import limits

ASSETS = Path(__file__).resolve().parents[2] / "static" / "vendor"
# Bounds on one call: a \def bomb or a huge algorithm stops here instead of holding a thread.
CALL_TIMEOUT_SECONDS = 5.0
MEMORY_LIMIT_BYTES = 256 * 1024 * 1024

# Idle contexts kept beyond this many are closed: a burst of concurrent renders must not leave
# a V8 (tens of MB) per thread behind.
IDLE_CONTEXTS_MAX = 8
# An idle context beyond its pool's floor (one for KaTeX, what one reference list uses at once
# for citations) is closed once nobody has used it for this long. A burst of author–date lists
# leaves a citation context per thread and slice, 50–75 MB each under APA or Chicago; a quiet
# worker gives that memory back at its next call instead of keeping it for good.
IDLE_SECONDS = 300.0

# Calls one caller may run at once, each in a context of its own (the independent slices of a
# numbered reference list): V8 runs each context in a thread of its own and the caller waits
# with the GIL released, so n calls take about the time of one on n idle cores.
CALLS_AT_ONCE = max(1, min(4, os.cpu_count() or 1))

# On CPUs with memory protection keys (Intel PKU), V8 write-protects its code pages with a key
# whose access right lives in each thread's PKRU register, which a thread inherits from the one
# that started it. If V8 starts in a thread other than the main one, threads started later by
# the main thread lack the right and the next context they make crashes the process
# (a segfault in mini-racer's context creation). The keys only harden V8 against bugs in its own
# JIT; the scripts it runs here are our vendored libraries, with time and memory limits.
V8_FLAGS = (*DEFAULT_V8_FLAGS, "--no-memory-protection-keys")


class AssetsMissing(RuntimeError):
    pass


class JSError(Exception):
    """A library refused the input; `message` is the library's one-line reason."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class JSStopped(JSError):
    """The call was cut short by the render's time budget, not by the input alone: the
    result is not cached, a later render with time to spare may succeed (the render is
    marked cut short: limits.Outcome)."""


class JSTimedOut(JSError):
    """The call ran its whole time limit and was stopped: maybe the input, maybe a busy
    machine. Shown as the input's error, but never cached or shared, so the render's
    completion in the background (with more time) calls it again."""


class ContextFull(Exception):
    """Raised by a call's `before`: this context holds enough already; the call goes to a
    fresh one and this one is closed."""


@functools.cache
def versions() -> dict[str, str]:
    """The vendored libraries' versions (static/vendor/versions.json)."""
    path = ASSETS / "versions.json"
    if not path.is_file():
        raise AssetsMissing(f"{path} is missing: run `make vendor` (npm ci + copy).")
    return json.loads(path.read_text())


# V8's process-wide set-up is not safe against threads creating their first contexts at the
# same moment (a gthread worker's first requests): contexts are created one at a time.
_creation_lock = threading.Lock()


def new_context(*scripts: str | Path) -> MiniRacer:
    """A fresh context with `scripts` (paths under ASSETS, or absolute) evaluated in order."""
    paths = [ASSETS / name for name in scripts]
    for path in paths:
        if not path.is_file():
            raise AssetsMissing(f"{path} is missing: run `make vendor`.")
    init_mini_racer(flags=V8_FLAGS, ignore_duplicate_init=True)
    context = MiniRacer()
    try:
        for path in paths:
            context.eval(path.read_text(encoding="utf-8"))
    except BaseException:
        context.close()
        raise
    return context


# Every pool of the process, for fork and exit.
_pools: weakref.WeakSet[Pool] = weakref.WeakSet()


class Pool:
    """This process's V8 contexts of one kind (made by `loader()`): each lent to one call at a
    time."""

    def __init__(self, loader, floor: int = 1):
        self.loader = loader
        self.floor = floor
        self._reset()
        _pools.add(self)

    def _reset(self) -> None:
        self.lock = threading.Lock()
        # The least recently given back first; each knows when (scidraft_given_back, by
        # time.monotonic()).
        self.idle: list[MiniRacer] = []
        self.every: list[MiniRacer] = []

    def take(self) -> MiniRacer:
        with self.lock:
            stale = self._stale()
            context = self.idle.pop() if self.idle else None  # the most recent: warm caches
        self._close(stale)
        return context if context is not None else self.fresh()

    def _stale(self) -> list[MiniRacer]:
        """Idle contexts beyond the floor unused for IDLE_SECONDS, out of the pool (the caller
        closes them, outside the lock)."""
        stale, now = [], time.monotonic()
        while len(self.idle) > self.floor:
            oldest = self.idle[0]
            if now - oldest.scidraft_given_back < IDLE_SECONDS:
                break
            self.idle.pop(0)
            self.every.remove(oldest)
            stale.append(oldest)
        return stale

    @staticmethod
    def _close(contexts: list[MiniRacer]) -> None:
        for context in contexts:
            with contextlib.suppress(Exception):  # a context that cannot close is gone anyway
                context.close()

    def fresh(self) -> MiniRacer:
        with _creation_lock:
            context = self.loader()
        with self.lock:
            self.every.append(context)
        return context

    def give_back(self, context: MiniRacer) -> None:
        with self.lock:
            stale = self._stale()
            if len(self.idle) < IDLE_CONTEXTS_MAX:
                context.scidraft_given_back = time.monotonic()
                self.idle.append(context)
            else:
                self.every.remove(context)
                stale.append(context)
        self._close(stale)

    def discard(self, context: MiniRacer) -> None:
        with self.lock:
            if context in self.every:
                self.every.remove(context)
        context.close()

    def close_all(self) -> None:
        with self.lock:
            every, self.every, self.idle = self.every, [], []
        for context in every:
            with contextlib.suppress(Exception):  # the process is exiting anyway
                context.close()

    @contextlib.contextmanager
    def borrowed(self) -> MiniRacer:
        """A context for this caller alone until the block ends, then lent again."""
        context = self.take()
        try:
            yield context
        finally:
            self.give_back(context)


# Contexts inherited across fork() belong to the parent's V8 threads, which the child does not
# have: it must neither use them nor close them (closing waits on those threads forever), so
# they are kept referenced here instead of being collected.
_inherited: list[MiniRacer] = []
_at_once_threads: ThreadPoolExecutor | None = None
_at_once_lock = threading.Lock()


def _after_fork() -> None:
    global _at_once_threads, _at_once_lock
    for pool in list(_pools):
        _inherited.extend(pool.every)
        pool._reset()  # a fresh lock too: the parent's may have been held at the fork
    # The parent's executor counts threads the child does not have: it would never run a call.
    _at_once_threads, _at_once_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


@atexit.register
def _close_all() -> None:
    for pool in list(_pools):
        pool.close_all()


def first_line(error: Exception) -> str:
    text = str(error).strip()
    # mini-racer prefixes "<anonymous>:1: " and appends the library's source line.
    line = text.splitlines()[0] if text else type(error).__name__
    line = re.sub(r"^<anonymous>:\d+: ", "", line)  # the line of the script that threw
    for prefix in ("Error: ", "Error: ", "ParseError: "):
        if line.startswith(prefix):
            line = line[len(prefix) :]
    return line


def timeout(floor: float) -> float:
    # A call gets at most what is left of the render's budget (and never less than `floor`);
    # a render given more time (limits.budget's scale) gives its calls more too.
    cap = CALL_TIMEOUT_SECONDS * limits.time_scale()
    left = limits.remaining()
    return min(max(min(cap, left), floor), cap)


class Clock:
    """The engine's work since it started: the process's CPU time, which V8's threads are
    part of, or the wall clock when that is less (the process's other threads were busy too).
    Waiting for a core while other processes load the machine costs nothing: whether a note
    renders in full depends on the note, not on the machine's load."""

    def __init__(self):
        self.wall, self.cpu = time.monotonic(), time.process_time()

    def seconds(self) -> float:
        return min(time.monotonic() - self.wall, time.process_time() - self.cpu)


def run(function: str, args: tuple, pool: Pool, before, timeout: float, spent: list[float]):
    """`function(*args)` in a context of `pool`; the engine's seconds (Clock) the call and
    `before` took (not the loading of the libraries into a new context) are appended to
    `spent`, whether it returned or raised."""
    context = pool.take()  # loading the libraries into a new context is not the input's cost
    clock = Clock()
    try:
        if before is not None:
            try:
                try:
                    before(context)  # what this context still lacks (a style): the input's cost
                except ContextFull:
                    pool.discard(context)
                    context = pool.fresh()  # holds nothing yet: it takes what `before` loads
                    before(context)
            except BaseException:
                pool.discard(context)
                raise
        result = _checked_call(context, pool, function, args, timeout)
    finally:
        spent.append(clock.seconds())
    pool.give_back(context)
    return result


def _checked_call(context: MiniRacer, pool: Pool, function: str, args: tuple, timeout: float):
    try:
        return context.call(function, *args, timeout_sec=timeout, max_memory=MEMORY_LIMIT_BYTES)
    except JSTimeoutException:
        pool.discard(context)  # it may be wedged: the next call makes another
        # Time, not the input, stopped it (a busy machine slows the wall clock's calls): the
        # render is not final (limits.Outcome).
        limits.cut_short()
        if timeout < CALL_TIMEOUT_SECONDS * limits.time_scale():
            raise JSStopped("the note took too long to render and this was stopped") from None
        raise JSTimedOut(f"took longer than {timeout:g} s and was stopped") from None
    except JSOOMException:
        pool.discard(context)
        raise JSError("used too much memory and was stopped") from None
    except BaseException as error:
        pool.give_back(context)
        if isinstance(error, JSEvalException):
            raise JSError(first_line(error)) from None
        raise


def call(function: str, *args, pool: Pool, before=None, floor: float = 0.05):
    """`function(*args)` in a context of `pool`, bounded in time and memory; `before(context)`
    runs first (what the context still lacks), and the render's budget is charged for both."""
    spent: list[float] = []
    try:
        return run(function, args, pool, before, timeout(floor), spent)
    finally:
        limits.charge_engine(sum(spent))


def _executor() -> ThreadPoolExecutor:
    global _at_once_threads
    with _at_once_lock:
        if _at_once_threads is None:
            # Shared by the process's requests: at most this many calls wait on V8 through it.
            _at_once_threads = ThreadPoolExecutor(
                max_workers=2 * CALLS_AT_ONCE, thread_name_prefix="v8-at-once"
            )
        return _at_once_threads


def _run_caught(function: str, args: tuple, pool: Pool, before, timeout: float, spent):
    try:
        return run(function, args, pool, before, timeout, spent)
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


def call_at_once(function: str, arg_lists: list[tuple], *, pool: Pool, before=None, floor: float):
    """`function(*args)` for each of `arg_lists`, at once, in contexts of `pool` of their own;
    each call is bounded as `call` bounds one, and the render's budget is charged the slowest
    call's engine time. Each call's result, or the JSError it raised."""
    limit = timeout(floor)
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


def prepare_at_once(pool: Pool, count: int, before=None) -> None:
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
