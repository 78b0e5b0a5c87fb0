"""The C allocator's arenas capped in a process (ops.allocator), as gunicorn.conf.py does in each
worker: threads that allocate at once share the arenas instead of each making its own."""

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
    from ops.allocator import limit_arenas
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


def test_gunicorn_workers_cap_their_arenas_unless_told_otherwise(monkeypatch):
    """gunicorn.conf.py caps a worker's arenas at GUNICORN_MALLOC_ARENAS (2 by default) right
    after the fork, and leaves them alone when MALLOC_ARENA_MAX is set for glibc itself."""
    import runpy

    from ops import allocator

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
