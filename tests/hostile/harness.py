"""How the hostile-input harness measures an input path, and the shape of its inputs.

A call is measured in the test's own process: CPU time by `time.process_time` (every thread
of the process, so V8's threads count), memory as the growth of the process's peak resident
set (Linux's VmHWM, reset before the call through /proc/self/clear_refs), which sees Python's,
V8's, Pillow's and Yrs's allocations alike. Where the peak cannot be reset, tracemalloc's peak
stands in (Python's allocations only). `traced` gives tracemalloc's peak on its own: it slows
allocating code several times over, so it is never the run whose CPU time is held to a bound.
Memory the process freed earlier may be reused without raising its peak, so the heaviest cases
are measured again by `fresh`, the same way in a new process.

The peak is the whole process's, so a background thread left by an earlier test (a render
completed after its write, a V8 context built ahead) can raise it during a call that allocates
nothing (and its CPU time counts theirs). A call over a bound while another thread ran is
therefore measured again, up to `_AGAIN` times; it fails when every measurement is over, and
the failure names the threads that ran beside it.
"""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from scidraft.bounds import MB, InputPath

ROOT = Path(__file__).resolve().parents[2]

# Examples per property: hostile inputs are large, so few; the same ones on every run, so a
# failure in CI is the one seen locally.
HOSTILE = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_kb(field: str) -> int:
    return int(re.search(rf"^{field}:\s+(\d+)", _STATUS.read_text(), re.M).group(1))


_TASKS = Path("/proc/self/task")
_AGAIN = 3


def _threads_ticks() -> dict[int, int]:
    """Each thread of the process: CPU clock ticks so far."""
    ticks = {}
    for task in _TASKS.iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        utime, stime = stat.rsplit(")", 1)[1].split()[11:13]
        ticks[int(task.name)] = int(utime) + int(stime)
    return ticks


def _names() -> dict[int, str]:
    return {thread.native_id: thread.name for thread in threading.enumerate()}


def _beside(before: dict[int, int], named: dict[int, str], others_cpu: float) -> tuple[str, ...]:
    """The threads other than this one that used CPU since `before` (when `named` was taken),
    by name where Python knows them; `others_cpu` is their CPU time, ended threads' included."""
    if others_cpu <= 0:
        return ()
    names, own = {**named, **_names()}, threading.get_native_id()
    after = _threads_ticks()
    ran = [tid for tid, ticks in after.items() if tid != own and ticks > before.get(tid, 0)]
    ended = before.keys() - after.keys()
    ran = {names.get(tid, f"thread {tid}") for tid in [*ran, *ended]}
    return tuple(sorted(ran)) or ("a thread that ended",)


def _peak_resettable() -> bool:
    try:
        _CLEAR_REFS.write_text("5")  # resets VmHWM to the current resident set
    except OSError:
        return False
    return True


@dataclass(frozen=True)
class Measured:
    cpu: float  # CPU seconds of the process during the call
    memory_mb: float  # growth of the peak resident set (or tracemalloc's peak) during it
    result: object
    refused: BaseException | None  # the clear error the path answered with, if any
    # Threads other than the caller's that used CPU during the call, and the call again.
    beside: tuple[str, ...] = ()
    again: Callable[[], Measured] | None = field(default=None, repr=False, compare=False)


def measure(function: Callable, *args, refusals: tuple = (), **kwargs) -> Measured:
    """`function(*args, **kwargs)` measured; an exception of a `refusals` type is the path's
    answer to bad input and is returned, any other fails the test."""
    gc.collect()
    native = _peak_resettable()
    if native:
        start_kb = _status_kb("VmRSS")
    else:
        tracemalloc.start()
    result, refused = None, None
    threads, named = _threads_ticks(), _names()
    own_start = time.thread_time()
    start = time.process_time()
    try:
        result = function(*args, **kwargs)
    except refusals as error:
        refused = error
    finally:
        cpu = time.process_time() - start
        others_cpu = cpu - (time.thread_time() - own_start)
        if native:
            memory = (_status_kb("VmHWM") - start_kb) / 1024
        else:
            memory = tracemalloc.get_traced_memory()[1] / MB
            tracemalloc.stop()
    beside = _beside(threads, named, others_cpu)

    def again() -> Measured:
        return measure(function, *args, refusals=refusals, **kwargs)

    return Measured(cpu, memory, result, refused, beside, again)


def traced(function: Callable, *args, refusals: tuple = (), **kwargs) -> float:
    """Python's peak allocation in MB during the call (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        function(*args, **kwargs)
    except refusals:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1] / MB
        tracemalloc.stop()
    return peak


_FRESH = """
import importlib, json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")
import django
django.setup()
from scidraft.bounds import INPUT_PATHS
from tests.hostile.harness import measure
path, module, case, size, warm, keywords = json.loads(sys.argv[1])
module_name, _, name = INPUT_PATHS[path].entry.rpartition(".")
entry = getattr(importlib.import_module(module_name), name)
build = importlib.import_module(module).CASES[case]
# Libraries and engines load on the first call, before the measured one. The in-process tests
# check what the path answers; this one only measures.
measure(entry, build(warm), refusals=(Exception,), **keywords)
measured = measure(entry, build(size), refusals=(Exception,), **keywords)
print(json.dumps({"cpu": measured.cpu, "memory_mb": measured.memory_mb}))
"""


def fresh(path: InputPath, module: str, case: str, size: int, warm: int, **keywords) -> Measured:
    """The path's entry called on `module`'s case at `size` (and `keywords`), measured as
    `measure` does but in a new process warmed up on the same case at `warm`: no memory the
    test process freed earlier can hide the call's own."""
    argument = json.dumps([path.name, module, case, size, warm, keywords])
    environment = {**os.environ, "DEBUG": "1"}
    completed = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", _FRESH, argument],
        capture_output=True, text=True, cwd=ROOT, env=environment, check=True, timeout=300,
    )  # fmt: skip
    figures = json.loads(completed.stdout.strip().splitlines()[-1])
    return Measured(figures["cpu"], figures["memory_mb"], None, None)


def assert_within(path: InputPath, measured: Measured, what: str, *, cpu: float | None = None):
    """The call stayed within the path's registered bounds (or `cpu`, a tighter one for its
    size)."""
    limit = path.cpu_seconds if cpu is None else min(cpu, path.cpu_seconds)

    def over(each: Measured) -> bool:
        return each.cpu > limit or each.memory_mb > path.memory_mb

    tries = [measured]
    while over(tries[-1]) and tries[-1].beside and tries[-1].again and len(tries) < _AGAIN:
        tries.append(tries[-1].again())
    cpu_used = min(each.cpu for each in tries)
    memory = min(each.memory_mb for each in tries)
    beside = ", ".join(sorted({name for each in tries for name in each.beside}))
    beside = f" (in {len(tries)} tries; threads running beside it: {beside})" if beside else ""
    assert cpu_used <= limit, (
        f"{path.name}: {what} took {cpu_used:.2f} s of CPU, over the bound of {limit:.2f} s"
        + beside
    )
    assert memory <= path.memory_mb, (
        f"{path.name}: {what} grew the process by {memory:.0f} MB, over the bound "
        f"of {path.memory_mb:.0f} MB" + beside
    )


def linear(path: InputPath, size: int, largest: int, floor: float = 0.25) -> float:
    """The CPU a linear path may take for an input of `size` when it may take
    path.cpu_seconds at `largest`: inputs that cost more than their share of the largest one
    show superlinear work while they are still cheap to run."""
    return floor + path.cpu_seconds * size / largest


def repeated(unit: str, size: int, head: str = "", tail: str = "") -> str:
    """`unit` repeated to about `size` characters, between `head` and `tail`."""
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


def sizes(largest: int, smallest: int = 256) -> st.SearchStrategy[int]:
    """Sizes from `smallest` to `largest`, each step a doubling: where superlinear work shows."""
    steps = max(0, (largest // smallest).bit_length() - 1)
    return st.integers(0, steps).map(lambda step: min(largest, smallest << step))


def cases(table: dict[str, Callable[[int], object]]) -> st.SearchStrategy[str]:
    """A case's name (shown in a failing example, with the size, to rebuild the input)."""
    return st.sampled_from(sorted(table))
