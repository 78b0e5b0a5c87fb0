"""The C allocator (glibc's) in a threaded server process: its arenas, and the free memory it
keeps.

glibc gives each thread that allocates while another holds the main arena an arena of its own,
up to eight per core, and keeps the freed pieces of each for later: a gunicorn worker whose
threads render pages, math and reference lists ends up holding tens of megabytes that no
thread is using. Capping the arenas makes the threads share them (benchmarks/scale.py compares
a worker's memory with and without the cap).
"""

from __future__ import annotations

import ctypes
import ctypes.util

# glibc's mallopt parameter for the most arenas a process creates (malloc.h).
M_ARENA_MAX = -8


def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None)
    except OSError:
        return None


_LIBC = _libc()


def limit_arenas(count: int) -> bool:
    """Let this process's threads allocate from at most `count` arenas: effective for arenas
    not yet created, so call it before the threads start. False where the C library is not
    glibc (or `count` is 0, glibc's default) and nothing was changed."""
    mallopt = getattr(_LIBC, "mallopt", None)
    if count <= 0 or mallopt is None:
        return False
    return bool(mallopt(M_ARENA_MAX, count))


def trim() -> bool:
    """Hand the allocator's free pages back to the system (glibc's malloc_trim): what threads
    freed stays in its arenas, in pieces kept for later, until then. False where the C library
    is not glibc."""
    malloc_trim = getattr(_LIBC, "malloc_trim", None)
    if malloc_trim is None:
        return False
    malloc_trim(0)
    return True
