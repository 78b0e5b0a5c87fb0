"""Embedded V8 (mini-racer) contexts, pooled per process, and the bounds on each call into them.

A pool holds the contexts of one set of libraries (scidraft.markup.jsengine's KaTeX with
pseudocode.js; bibliography.jsbundle's citation bundle): a call borrows an idle context (or
makes one) and gives it back, so a context serves one call at a time, and threads that come and
go (a development server's thread per request) reuse contexts instead of each starting a V8 of
their own. After fork the child's pools start empty. Contexts are closed at exit so the process
never waits on a V8 thread. Each call is bounded in time (CALL_TIMEOUT_SECONDS, or what is left
of the render's budget: scidraft.markup.limits) and in V8 heap (MEMORY_LIMIT_BYTES). Idle
contexts a pool no longer needs are closed by a sweep in the background (Pool.sweep). Calls one
caller makes at once, each in a context of its own: scidraft.markup.v8_at_once.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import logging
import os
import re
import threading
import time
import weakref
from pathlib import Path

from py_mini_racer import (
    DEFAULT_V8_FLAGS,
    JSEvalException,
    JSOOMException,
    JSTimeoutException,
    MiniRacer,
    init_mini_racer,
)

from scidraft import allocator

from . import limits

logger = logging.getLogger(__name__)
ASSETS = Path(__file__).resolve().parents[2] / "static" / "vendor"
# Bounds on one call: a \def bomb or a huge algorithm stops here instead of holding a thread.
CALL_TIMEOUT_SECONDS = 5.0
# The V8 heap one context may hold (its hard limit, set when it is made): a call that would
# pass it is stopped, and the context closed (SCIDRAFT_V8_HEAP_MB: configure).
MEMORY_LIMIT_BYTES = 256 * 1024 * 1024

# Idle contexts a pool keeps; one given back beyond them is closed: a burst of concurrent
# renders must not leave a V8 (tens of MB) per thread behind. A worker's threads are what
# borrow contexts at once (SCIDRAFT_V8_CONTEXTS, gunicorn's threads by default).
IDLE_CONTEXTS_MAX = 4
# An idle context beyond its pool's floor (one for KaTeX, what one reference list uses at once
# for citations), or one its pool would not keep idle (Pool.keep_idle: a citation context
# holding a style other than the site's), is closed once nobody has used it for this long, by
# a sweep in the background (SCIDRAFT_V8_IDLE_SECONDS). Those kept are asked to give back what
# their heap no longer uses (V8's low-memory notification). A burst of author–date lists leaves
# a citation context per thread and slice, 50–100 MB each under APA or Chicago; a quiet worker
# gives that memory back.
IDLE_SECONDS = 60.0


# On CPUs with memory protection keys (Intel PKU), V8 write-protects its code pages with a key
# whose access right lives in each thread's PKRU register, which a thread inherits from the one
# that started it. If V8 starts in a thread other than the main one, threads started later by
# the main thread lack the right and the next context they make crashes the process
# (a segfault in mini-racer's context creation). The keys only harden V8 against bugs in its own
# JIT; the scripts it runs here are our vendored libraries, with time and memory limits.
#
# --no-memory-pool: V8 pools the pages of a closed context's heap for the process's other
# contexts instead of unmapping them, so closing a context gave back almost nothing (a worker
# that built APA's and Chicago's processors kept their 150 MB after closing both); without the
# pool they go back to the system at once. --max-semi-space-size: the young generation of
# each context's heap grows to 3 × 16 MB by default; 2 MB semi-spaces cost a few per cent of
# citeproc-js's speed and spare 30–60 MB a busy context (benchmarks/worker_memory.py).
V8_FLAGS = (
    *DEFAULT_V8_FLAGS,
    "--no-memory-protection-keys",
    "--no-memory-pool",
    "--max-semi-space-size=2",
)


def configure(
    *, heap_bytes: int | None = None, idle_seconds: float | None = None, idle_contexts=None
) -> None:
    """The process's bounds on its contexts, from the settings (notes.apps): V8 heap per
    context, seconds before an idle context is closed, idle contexts a pool keeps."""
    global MEMORY_LIMIT_BYTES, IDLE_SECONDS, IDLE_CONTEXTS_MAX
    if heap_bytes is not None:
        MEMORY_LIMIT_BYTES = max(16 * 1024 * 1024, int(heap_bytes))
    if idle_seconds is not None:
        IDLE_SECONDS = max(1.0, float(idle_seconds))
    if idle_contexts is not None:
        IDLE_CONTEXTS_MAX = max(1, int(idle_contexts))


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


def _keep_any(context: MiniRacer) -> bool:
    return True


class Pool:
    """This process's V8 contexts of one kind (made by `loader()`): each lent to one call at a
    time. `keep_idle(context)` says whether an idle context within the floor is worth keeping
    once idle for IDLE_SECONDS (else the sweep closes it). With `size_max`, a call that finds
    that many contexts in use waits for one (JSStopped past its time limit) instead of making
    another: a worker's citation contexts, 100 MB each under APA or Chicago, are bounded by
    its threads, not by its threads times the slices each list is formatted in at once."""

    def __init__(self, loader, floor: int = 1, keep_idle=_keep_any, size_max: int | None = None):
        self.loader = loader
        self.floor = floor
        self.keep_idle = keep_idle
        self.size_max = size_max
        self._reset()
        _pools.add(self)

    def _reset(self) -> None:
        self.lock = threading.Lock()
        self.freed = threading.Condition(self.lock)  # a context given back, closed or made
        # The least recently given back first; each knows when (scidraft_given_back, by
        # time.monotonic()).
        self.idle: list[MiniRacer] = []
        self.every: list[MiniRacer] = []
        self.making = 0  # contexts being made, counted against size_max

    def take(self) -> MiniRacer:
        deadline = time.monotonic() + CALL_TIMEOUT_SECONDS * limits.time_scale()
        with self.lock:
            stale = self._stale()
            while self._full():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.freed.wait(left)
            full = self._full()
            context = self.idle.pop() if self.idle else None  # the most recent: warm caches
            if context is None and not full:
                self.making += 1
        self._close(stale)
        if context is not None:
            return context
        if full:
            limits.cut_short()  # the machine was busy, not the input: not final
            raise JSStopped("every V8 context of the worker was busy and this was not waited for")
        try:
            return self.fresh()
        finally:
            with self.lock:
                self.making -= 1

    def _full(self) -> bool:
        return (
            not self.idle
            and self.size_max is not None
            and len(self.every) + self.making >= self.size_max
        )

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
        with contextlib.suppress(AttributeError):  # a stand-in context (tests): no heap
            context.set_hard_memory_limit(MEMORY_LIMIT_BYTES)
        with self.lock:
            self.every.append(context)
        return context

    def give_back(self, context: MiniRacer) -> None:
        with self.lock:
            stale = self._stale()
            if len(self.idle) < IDLE_CONTEXTS_MAX:
                context.scidraft_given_back = time.monotonic()
                context.scidraft_reduced = False
                self.idle.append(context)
            else:
                self.every.remove(context)
                stale.append(context)
            self.freed.notify()
        self._close(stale)
        _start_sweeping()

    def sweep(self) -> bool:
        """Close the idle contexts the pool no longer needs (beyond the floor unused for
        IDLE_SECONDS, or not worth keeping: keep_idle), and have those it keeps give back
        their unused heap, once per idle spell. Whether it closed or shrank any."""
        with self.lock:
            stale = self._stale()
            now = time.monotonic()
            quiet = [c for c in self.idle if now - c.scidraft_given_back >= IDLE_SECONDS]
        shrunk = False
        for context in quiet:
            with self.lock:  # out of the pool while it is looked at: no call can borrow it
                if context not in self.idle:
                    continue
                self.idle.remove(context)
            keep = self.keep_idle(context)
            if keep and not context.scidraft_reduced:
                with contextlib.suppress(Exception):  # a context that cannot is closed below
                    context.low_memory_notification()
                    context.scidraft_reduced = shrunk = True
            with self.lock:
                if keep and context.scidraft_reduced:
                    self.idle.insert(0, context)  # still the least recently used
                else:
                    self.every.remove(context)
                    stale.append(context)
                self.freed.notify_all()
        self._close(stale)
        return shrunk or bool(stale)

    def discard(self, context: MiniRacer) -> None:
        with self.lock:
            if context in self.every:
                self.every.remove(context)
            self.freed.notify()
        context.close()

    def close_all(self) -> None:
        with self.lock:
            every, self.every, self.idle = self.every, [], []
            self.freed.notify_all()
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
_sweeper: threading.Thread | None = None
_sweeper_lock = threading.Lock()


def _sweep_forever() -> None:
    while True:
        time.sleep(max(0.5, IDLE_SECONDS / 2))
        swept = False
        for pool in list(_pools):
            try:
                swept = pool.sweep() or swept
            except Exception:  # noqa: BLE001 - the next sweep tries again; calls are unaffected
                logger.warning("sweeping idle V8 contexts failed", exc_info=True)
        if swept:
            # What the closed contexts' threads, and the requests that used them, allocated
            # with malloc stays in the allocator's arenas: 70 MB of a worker's 295 after a
            # burst of reference lists (benchmarks/worker_memory.py).
            allocator.trim()


def _start_sweeping() -> None:
    """Sweep the pools in the background (Pool.sweep), from the first context given back on."""
    global _sweeper
    if _sweeper is not None:
        return
    with _sweeper_lock:
        if _sweeper is None:
            _sweeper = threading.Thread(target=_sweep_forever, name="v8-sweep", daemon=True)
            _sweeper.start()


def _after_fork() -> None:
    global _sweeper, _sweeper_lock
    for pool in list(_pools):
        _inherited.extend(pool.every)
        pool._reset()  # a fresh lock too: the parent's may have been held at the fork
    # The parent's sweeper is a thread the child does not have: it would never sweep.
    _sweeper, _sweeper_lock = None, threading.Lock()


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
        # The context's heap is bounded since it was made (Pool.fresh).
        return context.call(function, *args, timeout_sec=timeout)
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
