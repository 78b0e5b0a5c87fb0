"""KaTeX and pseudocode.js run on the server in an embedded V8 (mini-racer), and the pool of
contexts the citation bundle runs in (bibliography.jsbundle loads it, bibliography.csl calls it).

V8 contexts are pooled per process, one pool per set of libraries (KaTeX with pseudocode.js;
the citation bundle, several times their size and needed only by reference lists): a call
borrows an idle context (or makes one) and gives it back, so a context serves one call at a
time, and threads that come and go (a development server's thread per request) reuse contexts
instead of each starting a V8 of its own. After fork the child starts empty pools. Contexts are
closed at exit so the process never waits on a V8 thread. Formula results are cached by (TeX,
display mode, KaTeX version, math macros in force) in a process-wide LRU.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import json
import logging
import os
import re
import threading
import time
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

from scidraft.bounds import input_path

from . import limits
from .mathmacros import NONE as NO_MACROS
from .mathmacros import Macros

logger = logging.getLogger(__name__)

ASSETS = Path(__file__).resolve().parents[2] / "static" / "vendor"
# Bounds on one call: a \def bomb or a huge algorithm stops here instead of holding a thread.
CALL_TIMEOUT_SECONDS = 5.0
MEMORY_LIMIT_BYTES = 256 * 1024 * 1024

KATEX_OPTIONS = {
    "output": "htmlAndMathml",
    "throwOnError": True,
    "strict": "ignore",
    "maxSize": 40,
    "maxExpand": 1000,
    # The theme's authors write \amp for & (docs/theme.md#math); \lt and \gt are built in.
    # \mbox is MathJax's (and LaTeX's) and missing from KaTeX: a text box.
    "macros": {"\\amp": "&", "\\mbox": "\\text{#1}"},
}
# \sideset, also missing from KaTeX, as MathJax typesets it: the scripts before and after the
# operator, which stays an operator, so that scripts written after \sideset are limits
# (underneath) in display style and beside it otherwise (\mathchoice). Read once per context
# into the macros above (the scripts after it are found by \@ifnextchar, in either order).
BASE_DEFINITIONS = (
    r"\gdef\sideset#1#2#3{\@sdside{{}#1\!#3\nolimits#2}}"
    r"\gdef\@sdside#1{\@ifnextchar_{\@sdsub{#1}}{\@ifnextchar^{\@sdsup{#1}}{\mathop{#1}}}}"
    r"\gdef\@sdsub#1_#2{\@ifnextchar^{\@sdsubsup{#1}{#2}}{\@sdop{#1}{_{#2}}}}"
    r"\gdef\@sdsubsup#1#2^#3{\@sdop{#1}{_{#2}^{#3}}}"
    r"\gdef\@sdsup#1^#2{\@ifnextchar_{\@sdsupsub{#1}{#2}}{\@sdop{#1}{^{#2}}}}"
    r"\gdef\@sdsupsub#1#2_#3{\@sdop{#1}{^{#2}_{#3}}}"
    r"\gdef\@sdop#1#2{\mathchoice{\mathop{#1}\limits#2}{\mathop{#1}\nolimits#2}"
    r"{\mathop{#1}\nolimits#2}{\mathop{#1}\nolimits#2}}"
)
# Links in math (\href, \url): these schemes only. scidraft.markup.mathlinks turns any other
# into plain text with a warning first; the trust function below refuses them again.
LINK_SCHEMES = ("http", "https", "mailto")
# How a formula's error says that the definitions before it, not the formula, were refused.
MACROS_FAILED = "Macros failed: "

_PRELUDE = """
var SCIDRAFT_KATEX_OPTIONS = %s;
var SCIDRAFT_LINK_SCHEMES = %s;
katex.renderToString(%s, Object.assign({}, SCIDRAFT_KATEX_OPTIONS,
                                       {macros: SCIDRAFT_KATEX_OPTIONS.macros, globalGroup: true}));
// KaTeX asks before writing any link or attribute: only \\href and \\url, only to these schemes
// (never \\htmlId, \\htmlData, \\includegraphics or a relative or javascript: address).
SCIDRAFT_KATEX_OPTIONS.trust = function (context) {
  return (context.command === "\\\\href" || context.command === "\\\\url") &&
    SCIDRAFT_LINK_SCHEMES.indexOf(context.protocol) >= 0;
};
// Macros after a note's definitions (scidraft.markup.mathmacros), by their digest: a context
// reads each set once, from the set it extends when it still has it (`parent`, plus the TeX
// `added`), else from all the definitions; each formula then copies it, so that nothing a
// formula does changes the set.
var scidraftMacroSets = new Map();
function scidraftMacros(preamble, digest, parent, added) {
  if (!preamble) return SCIDRAFT_KATEX_OPTIONS.macros;
  var found = scidraftMacroSets.get(digest);
  if (found === undefined) {
    var from = parent ? scidraftMacroSets.get(parent) : undefined;
    found = Object.assign({}, from !== undefined ? from : SCIDRAFT_KATEX_OPTIONS.macros);
    katex.renderToString(from !== undefined ? added : preamble,
                         Object.assign({}, SCIDRAFT_KATEX_OPTIONS,
                                       {macros: found, globalGroup: true}));
    if (scidraftMacroSets.size >= 64) {
      scidraftMacroSets.delete(scidraftMacroSets.keys().next().value);
    }
  } else {
    scidraftMacroSets.delete(digest);  // most recently used last
  }
  scidraftMacroSets.set(digest, found);
  return found;
}
function scidraftTexOptions(display, macros) {
  return Object.assign({}, SCIDRAFT_KATEX_OPTIONS, {displayMode: display,
                       macros: Object.assign({}, macros || SCIDRAFT_KATEX_OPTIONS.macros)});
}
// A definition KaTeX refuses fails here with MACROS_FAILED before its message, so the caller
// can tell it from an error in the formula.
function scidraftTex(tex, display, preamble, digest, parent, added) {
  var macros;
  try {
    macros = scidraftMacros(preamble, digest, parent, added);
  } catch (error) {
    throw new Error("%s" + error.message);
  }
  return katex.renderToString(tex, scidraftTexOptions(display, macros));
}
function scidraftDefine(preamble, digest) {
  scidraftMacros(preamble, digest, "", "");
  return true;
}
// pseudocode.js calls the global katex.renderToString(tex) with KaTeX's defaults, among them
// no maxSize: \\rule{3000em}{3000em} in an algorithm was drawn 3,000 em wide. For
// the call, the global is a KaTeX that applies the math stage's options.
function scidraftPseudocode(source, captionCount) {
  var katexItself = katex;
  katex = {renderToString: function (tex) {
    return katexItself.renderToString(tex, scidraftTexOptions(false));
  }};
  try {
    return pseudocode.renderToString(source, {lineNumber: true, captionCount: captionCount,
                                               noEnd: false});
  } finally {
    katex = katexItself;
  }
}
"""


class AssetsMissing(RuntimeError):
    pass


class JSError(Exception):
    """KaTeX or pseudocode.js refused the input; `message` is the library's one-line reason."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class MacrosRefused(JSError):
    """KaTeX refused the macro definitions a formula was to be typeset after (not the formula)."""


class JSStopped(JSError):
    """The call was cut short by the render's time budget, not by the input alone: the
    result is not cached, a later render with time to spare may succeed (the render is
    marked cut short: limits.Outcome)."""


class JSTimedOut(JSError):
    """The call ran its whole time limit and was stopped: maybe the formula, maybe a busy
    machine. Shown as the formula's error, but never cached or shared, so the render's
    completion in the background (with more time) calls it again."""


class ContextFull(Exception):
    """Raised by a call's `before`: this context holds enough already; the call goes to a
    fresh one and this one is closed."""


@functools.cache
def versions() -> dict[str, str]:
    path = ASSETS / "versions.json"
    if not path.is_file():
        raise AssetsMissing(f"{path} is missing: run `make vendor` (npm ci + copy).")
    return json.loads(path.read_text())


@functools.cache
def katex_version() -> str:
    return versions()["katex"]


# On CPUs with memory protection keys (Intel PKU), V8 write-protects its code pages with a key
# whose access right lives in each thread's PKRU register, which a thread inherits from the one
# that started it. If V8 starts in a thread other than the main one, threads started later by
# the main thread lack the right and the next context they make crashes the process
# (a segfault in mini-racer's context creation). The keys only harden V8 against bugs in its own
# JIT; the scripts it runs here are our vendored libraries, with time and memory limits.
V8_FLAGS = (*DEFAULT_V8_FLAGS, "--no-memory-protection-keys")

# Idle contexts kept beyond this many are closed: a burst of concurrent renders must not leave
# a V8 (tens of MB) per thread behind.
IDLE_CONTEXTS_MAX = 8
# An idle context beyond its pool's floor (one for KaTeX, CITATION_CALLS_AT_ONCE for citations:
# what one request uses) is closed once nobody has used it for this long. A burst of
# author–date lists leaves a citation context per thread and slice, 50–75 MB each under APA or
# Chicago; a quiet worker gives that memory back at its next call instead of keeping it for good.
IDLE_SECONDS = 300.0

# Citation calls one caller may run at once, each in a context of its own (the independent
# slices of a numbered reference list): V8 runs each context in a thread of its own and the
# caller waits with the GIL released, so a list takes about 1/n of its time on n idle cores.
CITATION_CALLS_AT_ONCE = max(1, min(4, os.cpu_count() or 1))

# V8's process-wide set-up is not safe against threads creating their first contexts at the
# same moment (a gthread worker's first requests): contexts are created one at a time.
_creation_lock = threading.Lock()


def _context(*scripts: str) -> MiniRacer:
    for name in scripts:
        if not (ASSETS / name).is_file():
            raise AssetsMissing(f"{ASSETS / name} is missing: run `make vendor`.")
    init_mini_racer(flags=V8_FLAGS, ignore_duplicate_init=True)
    context = MiniRacer()
    for name in scripts:
        context.eval((ASSETS / name).read_text(encoding="utf-8"))
    return context


MHCHEM = "katex/contrib/mhchem.js"
# KaTeX's mhchem extension (\ce, \pu), from the same locked katex package. A static/vendor/ built
# before it was vendored lacks the copy: node_modules' is read instead, when it is there and of
# the KaTeX version vendored (else \ce stays undefined and is reported as such).
_MHCHEM_PACKAGE = ASSETS.parents[1] / "node_modules" / "katex"


def _mhchem() -> Path | None:
    if (ASSETS / MHCHEM).is_file():
        return ASSETS / MHCHEM
    package = _MHCHEM_PACKAGE / "package.json"
    script = _MHCHEM_PACKAGE / "dist" / "contrib" / "mhchem.js"
    same = package.is_file() and json.loads(package.read_text()).get("version") == katex_version()
    return script if same and script.is_file() else None


def _load() -> MiniRacer:
    context = _context("katex/katex.min.js", "pseudocode/pseudocode.min.js")
    mhchem = _mhchem()
    if mhchem is not None:
        context.eval(mhchem.read_text(encoding="utf-8"))
    context.eval(
        _PRELUDE
        % (
            json.dumps(KATEX_OPTIONS),
            json.dumps(list(LINK_SCHEMES)),
            json.dumps(BASE_DEFINITIONS),
            MACROS_FAILED,
        )
    )
    return context


def _no_citations() -> MiniRacer:
    raise AssetsMissing("no citation bundle loader: import bibliography.jsbundle")


_citation_loader = _no_citations


def use_citation_loader(loader) -> None:
    """`loader()` makes each citation context (bibliography.jsbundle: its bundle evaluated);
    contexts made before are closed, so none lacks what it loads."""
    global _citation_loader
    if loader is not _citation_loader:
        _citation_loader = loader
        _citation_pool.close_all()


def _load_citations() -> MiniRacer:
    return _citation_loader()


class _Pool:
    """This process's V8 contexts: each lent to one call at a time."""

    def __init__(self, loader=_load, floor: int = 1):
        self.loader = loader
        self.floor = floor
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


_pool = _Pool()
_citation_pool = _Pool(_load_citations, floor=CITATION_CALLS_AT_ONCE)


# Contexts inherited across fork() belong to the parent's V8 threads, which the child does not
# have: it must neither use them nor close them (closing waits on those threads forever), so
# they are kept referenced here instead of being collected.
_inherited: list[MiniRacer] = []


def _pool_after_fork() -> None:
    global _pool, _citation_pool, _slice_threads, _slice_threads_lock
    _inherited.extend(_pool.every)
    _inherited.extend(_citation_pool.every)
    _pool = _Pool()  # a fresh lock too: the parent's may have been held at the fork
    _citation_pool = _Pool(_load_citations, floor=CITATION_CALLS_AT_ONCE)
    # The parent's executor counts threads the child does not have: it would never run a call.
    _slice_threads, _slice_threads_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_pool_after_fork)


@contextlib.contextmanager
def borrowed() -> MiniRacer:
    """A context for this caller alone until the block ends, then lent again."""
    context = _pool.take()
    try:
        yield context
    finally:
        _pool.give_back(context)


def start() -> None:
    """Have one context ready (V8 started, libraries loaded) before the first render needs it."""
    with borrowed():
        pass


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    # mini-racer prefixes "<anonymous>:1: " and appends the library's source line.
    line = text.splitlines()[0] if text else type(error).__name__
    line = re.sub(r"^<anonymous>:\d+: ", "", line)  # the line of the script that threw
    for prefix in ("Error: ", "Error: ", "ParseError: "):
        if line.startswith(prefix):
            line = line[len(prefix) :]
    return line


# A reference list's call is not cut shorter than this by the render's budget: citeproc-js
# takes 3-20 ms an entry (APA and Chicago are the slow ones, a busy machine doubles it), and a
# list cut off would show raw entries at every render, as nothing stopped is cached. Only one
# such call can overrun a render: the budget is spent after it, and later lists are not
# formatted (scidraft.markup.citations).
CITATION_FLOOR_SECONDS = CALL_TIMEOUT_SECONDS


def _timeout(floor: float) -> float:
    # A call gets at most what is left of the render's budget (and never less than `floor`);
    # a render given more time (limits.budget's scale) gives its calls more too.
    cap = CALL_TIMEOUT_SECONDS * limits.time_scale()
    left = limits.remaining()
    return min(max(min(cap, left), floor), cap)


class _Clock:
    """The engine's work since it started: the process's CPU time, which V8's threads are
    part of, or the wall clock when that is less (the process's other threads were busy too).
    Waiting for a core while other processes load the machine costs nothing: whether a note
    renders in full depends on the note, not on the machine's load."""

    def __init__(self):
        self.wall, self.cpu = time.monotonic(), time.process_time()

    def seconds(self) -> float:
        return min(time.monotonic() - self.wall, time.process_time() - self.cpu)


def _run(function: str, args: tuple, pool: _Pool, before, timeout: float, spent: list[float]):
    """`function(*args)` in a context of `pool`; the engine's seconds (_Clock) the call and
    `before` took (not the loading of the libraries into a new context) are appended to
    `spent`, whether it returned or raised."""
    context = pool.take()  # loading the libraries into a new context is not the input's cost
    clock = _Clock()
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


def _checked_call(context: MiniRacer, pool: _Pool, function: str, args: tuple, timeout: float):
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
            raise JSError(_first_line(error)) from None
        raise


def _call(function: str, *args, pool: _Pool | None = None, before=None, floor: float = 0.05):
    spent: list[float] = []
    try:
        return _run(function, args, pool or _pool, before, _timeout(floor), spent)
    finally:
        limits.charge_engine(sum(spent))


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


def shared_get_many(keys: list[str]) -> dict:
    """The shared cache's values for `keys` (those it has); {} without one or in an outage."""
    if _shared_cache is None or not keys:
        return {}
    try:
        getter = getattr(_shared_cache, "get_many", None)
        if getter is not None:
            return dict(getter(keys))
        return {key: value for key in keys if (value := _shared_cache.get(key)) is not None}
    except Exception:  # noqa: BLE001 - a cache outage costs a formatting, never a render
        logger.warning("shared cache get_many failed", exc_info=True)
        return {}


def shared_set_many(values: dict) -> None:
    if _shared_cache is None or not values:
        return
    try:
        setter = getattr(_shared_cache, "set_many", None)
        if setter is not None:
            setter(values)
        else:
            for key, value in values.items():
                _shared_cache.set(key, value)
    except Exception:  # noqa: BLE001
        logger.warning("shared cache set_many failed", exc_info=True)


@functools.lru_cache(maxsize=20_000)
def _tex_cached(tex: str, display: bool, version: str, macros: Macros) -> tuple[bool, str]:
    # Macros hash and compare by their digest: the key holds the definitions in force, and a
    # formula typeset after other definitions is another entry.
    defined = f"\0{macros.digest}" if macros.definitions else ""
    text = f"{version}\0{int(display)}{defined}\0{tex}"
    key = "katex:" + hashlib.sha256(text.encode()).hexdigest()
    shared = _shared("get", key)
    if shared is not None:
        return tuple(shared)
    try:
        markup = _call(
            "scidraftTex", tex, display, macros.text, macros.digest, macros.parent, macros.added
        )
        result = (True, cap_spacing(markup))
    except (JSStopped, JSTimedOut):
        raise  # not a property of the formula: neither cached here nor shared
    except JSError as error:
        result = (False, error.message)
    _shared("set", key, list(result))
    return result


# KaTeX caps sizes at maxSize but only from above: \hspace{-3000em} or \kern-3000em is a margin
# of -3,000 em that moves the text after it far outside the note. Spacing is a
# margin in KaTeX's HTML (and an <mspace> in its MathML); no real formula needs one wider than
# maxSize either way.
_SPACING = re.compile(r'(margin-(?:left|right):|<mspace width=")(-?\d+(?:\.\d+)?)em')
# Part of the cache keys: output cached before spacing was capped, or before \mbox, \sideset,
# \ce and links in math were typeset, is not reused.
OUTPUT_REVISION = "spacing-capped+macros"


def cap_spacing(markup: str) -> str:
    """KaTeX's `markup` with every horizontal margin within ±maxSize em."""
    limit = KATEX_OPTIONS["maxSize"]

    def capped(match: re.Match) -> str:
        value = float(match.group(2))
        if abs(value) <= limit:
            return match.group(0)
        return f"{match.group(1)}{limit if value > 0 else -limit}em"

    return _SPACING.sub(capped, markup) if "margin-" in markup or "<mspace" in markup else markup


@input_path("tex-math")
def render_tex(tex: str, *, display: bool, macros: Macros = NO_MACROS) -> str:
    """KaTeX HTML+MathML for `tex` after the `macros` definitions; raises JSError with KaTeX's
    message on bad input."""
    ok, result = _tex_cached(tex, display, f"{katex_version()}+{OUTPUT_REVISION}", macros)
    if not ok:
        if result.startswith(MACROS_FAILED):
            raise MacrosRefused(result[len(MACROS_FAILED) :])
        raise JSError(result)
    return result


@functools.lru_cache(maxsize=2_000)
def _macros_checked(macros: Macros, version: str) -> str:
    try:
        _call("scidraftDefine", macros.text, macros.digest)
    except (JSStopped, JSTimedOut):
        raise
    except JSError as error:
        return error.message
    return ""


def check_macros(macros: Macros) -> str:
    """KaTeX's message if reading the `macros` definitions fails, else ""."""
    if not macros.definitions:
        return ""
    return _macros_checked(macros, katex_version())


def tex_cache_info():
    return _tex_cached.cache_info()


def tex_cache_clear() -> None:
    """Empty the formula and algorithm caches (benchmarks measure cold renders with it)."""
    _tex_cached.cache_clear()
    _pseudocode_cached.cache_clear()
    _macros_checked.cache_clear()


@functools.lru_cache(maxsize=2_000)
def _pseudocode_cached(source: str, caption_count: int, version: str) -> tuple[bool, str]:
    try:
        return True, cap_spacing(_call("scidraftPseudocode", source, caption_count))
    except (JSStopped, JSTimedOut):
        raise
    except JSError as error:
        return False, error.message


def render_pseudocode(source: str, *, caption_count: int) -> str:
    """pseudocode.js HTML; `caption_count` algorithms precede this one on the page.

    Cached like formulas: an algorithm is typeset once per (source, position, versions).
    """
    assets = versions()
    ok, result = _pseudocode_cached(
        source, caption_count, f"{assets['pseudocode']}/{assets['katex']}+{OUTPUT_REVISION}"
    )
    if not ok:
        raise JSError(result)
    return result


def call_citations(function: str, *args, before=None):
    """`function(*args)` in a citation-js context, bounded like a formula (time, memory, the
    render's budget); `before(context)` runs first (loading a style), under its own time
    limits, and the render's budget is charged for it too."""
    return _call(function, *args, pool=_citation_pool, before=before, floor=CITATION_FLOOR_SECONDS)


_slice_threads: ThreadPoolExecutor | None = None
_slice_threads_lock = threading.Lock()


def warm(*, citations_before=None) -> None:
    """Make this process's contexts before its first requests need them: one for formulas and
    CITATION_CALLS_AT_ONCE for citations (as many as one list uses at once), each given
    `citations_before(context)` (a style to build), as a call's `before` is, all at once (each
    context runs in a V8 thread of its own). A context whose preparation failed is closed; the
    first failure is raised once every context is done."""
    _pool.give_back(_pool.take())
    contexts = [_citation_pool.take() for _ in range(CITATION_CALLS_AT_ONCE)]

    def prepare(context: MiniRacer) -> None:
        try:
            if citations_before is not None:
                citations_before(context)
        except BaseException:
            _citation_pool.discard(context)
            raise
        _citation_pool.give_back(context)

    calls = [_slice_executor().submit(prepare, context) for context in contexts]
    failures = [failure for failure in (call.exception() for call in calls) if failure]
    if failures:
        raise failures[0]


def _slice_executor() -> ThreadPoolExecutor:
    global _slice_threads
    with _slice_threads_lock:
        if _slice_threads is None:
            # Shared by the process's requests: at most this many calls wait on V8 through it.
            _slice_threads = ThreadPoolExecutor(
                max_workers=2 * CITATION_CALLS_AT_ONCE, thread_name_prefix="citation-slices"
            )
        return _slice_threads


def _run_citations(function: str, args: tuple, before, timeout: float, spent: list[float]):
    try:
        return _run(function, args, _citation_pool, before, timeout, spent)
    except JSError as error:
        return error


def _run_citations_for(outcome: limits.Outcome, *call):
    """_run_citations in a slice thread, which has no budget of its own: a call stopped by
    time there is recorded in the caller's `outcome`."""
    with limits.budget(float("inf"), float("inf"), scale=outcome.scale) as inner:
        try:
            return _run_citations(*call)
        finally:
            outcome.cut_short = outcome.cut_short or inner.cut_short


def call_citations_at_once(function: str, arg_lists: list[tuple], *, before=None) -> list:
    """`function(*args)` for each of `arg_lists`, at once, in citation-js contexts of their
    own; each call is bounded as `call_citations` bounds one, and the render's budget is
    charged the slowest call's engine time. Each call's result, or the JSError it raised."""
    timeout = _timeout(CITATION_FLOOR_SECONDS)
    spent: list[float] = []
    clock = _Clock()
    outcome = limits.Outcome(scale=limits.time_scale())
    try:
        if len(arg_lists) <= 1:
            return [_run_citations(function, args, before, timeout, spent) for args in arg_lists]
        calls = [
            _slice_executor().submit(
                _run_citations_for, outcome, function, args, before, timeout, spent
            )
            for args in arg_lists
        ]
        return [call.result() for call in calls]
    finally:
        if outcome.cut_short:
            limits.cut_short()
        # The calls ran at once: the process's CPU time covers them all, the wall clock the
        # slowest.
        limits.charge_engine(min(max(spent, default=0.0), clock.seconds()))


@atexit.register
def _close_all() -> None:
    _pool.close_all()
    _citation_pool.close_all()
