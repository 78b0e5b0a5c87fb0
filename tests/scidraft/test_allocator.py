"""The C allocator in a process (scidraft.allocator): its arenas capped, as gunicorn.conf.py
does in each worker, so that threads allocating at once share them instead of each making its
own; and its free pages handed back, as the V8 pool's sweeper does."""

from __future__ import annotations

import ctypes.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Eight threads allocate at the same moment, then glibc's malloc_info lists the arenas.
_PROBE = textwrap.dedent(
    """
    import ctypes, sys, tempfile, threading
    from scidraft.allocator import limit_arenas
    print(limit_arenas(int(sys.argv[1])))
    kept, start = [], threading.Barrier(8)
    def allocate():
        start.wait()
        for _ in range(200):
            kept.append(ctypes.create_string_buffer(20_000))
    threads = [threading.Thread(target=allocate) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    with tempfile.NamedTemporaryFile(suffix=".xml") as report:
        stream = ctypes.c_void_p(libc.fopen(report.name.encode(), b"w"))
        libc.malloc_info(0, stream)
        libc.fclose(stream)
        print(open(report.name).read().count("<heap nr="))
    """
)

pytestmark = pytest.mark.skipif(
    "libc.so.6" not in str(ctypes.util.find_library("c")), reason="glibc's allocator only"
)


def _arenas(count: int) -> tuple[str, int]:
    out = subprocess.run(  # noqa: S603 - this interpreter and the probe above
        [sys.executable, "-c", _PROBE, str(count)],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
    ).stdout.split()  # fmt: skip
    return out[0], int(out[1])


def test_capped_threads_share_two_arenas():
    """With the cap at 2, eight threads allocating at once use at most two arenas."""
    changed, arenas = _arenas(2)
    assert changed == "True" and arenas <= 2


def test_uncapped_threads_make_arenas_of_their_own():
    """Without it (0: glibc's default), the same threads make more: what the cap saves."""
    changed, arenas = _arenas(0)
    assert changed == "False" and arenas > 2


# A thread fills 200 MB of its arena with small blocks and frees them (one kept at the end, so
# that the arena's top cannot shrink by itself); the probe prints its resident memory before
# and after allocator.trim().
_TRIM_PROBE = textwrap.dedent(
    """
    import ctypes, threading
    from scidraft import allocator
    def resident_mb():
        return int(open("/proc/self/statm").read().split()[1]) * 4096 // 2**20
    def fill():
        blocks = [ctypes.create_string_buffer(4000) for _ in range(50_000)]
        keep = blocks.pop()
        del blocks
        threading.current_thread().keep = keep
    thread = threading.Thread(target=fill)
    thread.start()
    thread.join()
    before = resident_mb()
    print(allocator.trim(), before, resident_mb())
    """
)


def test_trimming_hands_freed_memory_back_to_the_system():
    """What a thread freed stays resident until trim(); after it, most of it is gone."""
    out = subprocess.run(  # noqa: S603 - this interpreter and the probe above
        [sys.executable, "-c", _TRIM_PROBE],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=60,
    ).stdout.split()  # fmt: skip
    trimmed, before, after = out[0], int(out[1]), int(out[2])
    assert trimmed == "True"
    assert before - after >= 100, (before, after)


def test_gunicorn_workers_cap_their_arenas_unless_told_otherwise(monkeypatch):
    """gunicorn.conf.py caps a worker's arenas at GUNICORN_MALLOC_ARENAS (2 by default) right
    after the fork, and leaves them alone when MALLOC_ARENA_MAX is set for glibc itself."""
    import runpy

    from scidraft import allocator

    calls = []
    monkeypatch.setattr(allocator, "limit_arenas", calls.append)
    config = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.delenv("GUNICORN_MALLOC_ARENAS", raising=False)
    config["post_fork"](None, None)
    monkeypatch.setenv("GUNICORN_MALLOC_ARENAS", "4")
    config["post_fork"](None, None)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "1")
    config["post_fork"](None, None)
    assert calls == [2, 4]
