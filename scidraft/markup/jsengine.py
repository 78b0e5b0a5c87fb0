"""KaTeX and pseudocode.js, run on the server in an embedded V8 (mini-racer).

One V8 context per thread, created on first use: after gunicorn forks, each worker thread makes
its own, and a context is never shared between threads. Contexts are closed at exit so the
process never waits on a V8 thread. Formula results are cached by (TeX, display mode, KaTeX
version) in a process-wide LRU.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import logging
import os
import threading
import time
from pathlib import Path

from py_mini_racer import JSEvalException, JSOOMException, JSTimeoutException, MiniRacer

from . import limits

logger = logging.getLogger(__name__)

ASSETS = Path(__file__).resolve().parents[2] / "static" / "vendor"
# Bounds on one call: a \def bomb or a huge algorithm stops here instead of holding a thread.
CALL_TIMEOUT_SECONDS = 5.0
MEMORY_LIMIT_BYTES = 256 * 1024 * 1024

KATEX_OPTIONS = {
    "output": "htmlAndMathml",
    "throwOnError": True,
    "trust": False,
    "strict": "ignore",
    "maxSize": 40,
    "maxExpand": 1000,
    # The theme's authors write \amp for & (theme-spec §2.1); \lt and \gt are built in.
    "macros": {"\\amp": "&"},
}

_PRELUDE = """
var SCIDRAFT_KATEX_OPTIONS = %s;
function scidraftTex(tex, display) {
  var options = Object.assign({}, SCIDRAFT_KATEX_OPTIONS, {displayMode: display,
                              macros: Object.assign({}, SCIDRAFT_KATEX_OPTIONS.macros)});
  return katex.renderToString(tex, options);
}
function scidraftPseudocode(source, captionCount) {
  return pseudocode.renderToString(source, {lineNumber: true, captionCount: captionCount,
                                             noEnd: false});
}
"""


class AssetsMissing(RuntimeError):
    pass


class JSError(Exception):
    """KaTeX or pseudocode.js refused the input; `message` is the library's one-line reason."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class JSStopped(JSError):
    """The call was cut short by the render's time budget, not by the input alone: the
    result is not cached, a later render with time to spare may succeed."""


@functools.cache
def versions() -> dict[str, str]:
    path = ASSETS / "versions.json"
    if not path.is_file():
        raise AssetsMissing(f"{path} is missing: run `make vendor` (npm ci + copy).")
    return json.loads(path.read_text())


@functools.cache
def katex_version() -> str:
    return versions()["katex"]


_local = threading.local()
_contexts: list[MiniRacer] = []
_contexts_lock = threading.Lock()
# V8's process-wide set-up is not safe against threads creating their first contexts at the
# same moment (a gthread worker's first requests): contexts are created one at a time.
_creation_lock = threading.Lock()


def _load() -> MiniRacer:
    for name in ("katex/katex.min.js", "pseudocode/pseudocode.min.js"):
        if not (ASSETS / name).is_file():
            raise AssetsMissing(f"{ASSETS / name} is missing: run `make vendor`.")
    context = MiniRacer()
    context.eval((ASSETS / "katex" / "katex.min.js").read_text(encoding="utf-8"))
    context.eval((ASSETS / "pseudocode" / "pseudocode.min.js").read_text(encoding="utf-8"))
    context.eval(_PRELUDE % json.dumps(KATEX_OPTIONS))
    return context


def _context() -> MiniRacer:
    pid = os.getpid()
    context = getattr(_local, "context", None)
    if context is None or getattr(_local, "pid", None) != pid:
        # A context inherited across fork() belongs to the parent's V8 threads: make a new one.
        with _creation_lock:
            context = _load()
        _local.context, _local.pid = context, pid
        with _contexts_lock:
            _contexts.append(context)
    return context


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    # mini-racer prefixes "<anonymous>:1: " and appends the library's source line.
    line = text.splitlines()[0] if text else type(error).__name__
    for prefix in ("<anonymous>:1: ", "Error: ", "Error: ", "ParseError: "):
        if line.startswith(prefix):
            line = line[len(prefix) :]
    return line


def _call(function: str, *args):
    # A call gets at most what is left of the render's budget (and never less than a moment).
    context = _context()  # loading the libraries into a new context is not the input's cost
    left = limits.remaining()
    timeout = max(min(CALL_TIMEOUT_SECONDS, left), 0.05)
    started = time.monotonic()
    try:
        return context.call(function, *args, timeout_sec=timeout, max_memory=MEMORY_LIMIT_BYTES)
    except JSTimeoutException:
        _discard_context()
        if timeout < CALL_TIMEOUT_SECONDS:
            raise JSStopped("the note took too long to render and this was stopped") from None
        raise JSError(f"took longer than {CALL_TIMEOUT_SECONDS:g} s and was stopped") from None
    except JSOOMException:
        _discard_context()
        raise JSError("used too much memory and was stopped") from None
    except JSEvalException as error:
        raise JSError(_first_line(error)) from None
    finally:
        limits.charge_engine(time.monotonic() - started)


def _discard_context() -> None:
    # After a timeout or out-of-memory the context may be wedged; the next call makes another.
    context = getattr(_local, "context", None)
    _local.context = None
    if context is not None:
        with _contexts_lock:
            if context in _contexts:
                _contexts.remove(context)
        context.close()


_shared_cache = None


def use_shared_cache(cache) -> None:
    """A cache shared by processes (Django's, i.e. Redis in production), consulted when this
    process has not typeset a formula yet; any object with get(key) and set(key, value)."""
    global _shared_cache
    _shared_cache = cache


def _shared(operation: str, *args):
    if _shared_cache is None:
        return None
    try:
        return getattr(_shared_cache, operation)(*args)
    except Exception:  # noqa: BLE001 - a cache outage costs a KaTeX call, never a render
        logger.warning("shared formula cache %s failed", operation, exc_info=True)
        return None


@functools.lru_cache(maxsize=20_000)
def _tex_cached(tex: str, display: bool, version: str) -> tuple[bool, str]:
    key = "katex:" + hashlib.sha256(f"{version}\0{int(display)}\0{tex}".encode()).hexdigest()
    shared = _shared("get", key)
    if shared is not None:
        return tuple(shared)
    try:
        result = (True, _call("scidraftTex", tex, display))
    except JSStopped:
        raise  # not a property of the formula: neither cached here nor shared
    except JSError as error:
        result = (False, error.message)
    _shared("set", key, list(result))
    return result


def render_tex(tex: str, *, display: bool) -> str:
    """KaTeX HTML+MathML for `tex`; raises JSError with KaTeX's message on bad input."""
    ok, result = _tex_cached(tex, display, katex_version())
    if not ok:
        raise JSError(result)
    return result


def tex_cache_info():
    return _tex_cached.cache_info()


def tex_cache_clear() -> None:
    """Empty the formula and algorithm caches (benchmarks measure cold renders with it)."""
    _tex_cached.cache_clear()
    _pseudocode_cached.cache_clear()


@functools.lru_cache(maxsize=2_000)
def _pseudocode_cached(source: str, caption_count: int, version: str) -> tuple[bool, str]:
    try:
        return True, _call("scidraftPseudocode", source, caption_count)
    except JSStopped:
        raise
    except JSError as error:
        return False, error.message


def render_pseudocode(source: str, *, caption_count: int) -> str:
    """pseudocode.js HTML; `caption_count` algorithms precede this one on the page.

    Cached like formulas: an algorithm is typeset once per (source, position, versions).
    """
    assets = versions()
    ok, result = _pseudocode_cached(
        source, caption_count, f"{assets['pseudocode']}/{assets['katex']}"
    )
    if not ok:
        raise JSError(result)
    return result


@atexit.register
def _close_all() -> None:
    with _contexts_lock:
        for context in _contexts:
            with contextlib.suppress(Exception):  # the process is exiting anyway
                context.close()
        _contexts.clear()
