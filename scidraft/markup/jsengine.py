"""KaTeX and pseudocode.js run on the server, in V8 contexts of their own pool
(scidraft.markup.v8pool): formulas (render_tex), a note's macro definitions (check_macros) and
algorithms (render_pseudocode). Formula results are cached by (TeX, display mode, KaTeX
version, math macros in force) in a process-wide LRU, and in the shared cache
(scidraft.markup.shared_cache) across processes.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
from pathlib import Path

from py_mini_racer import MiniRacer

from scidraft.bounds import input_path

from . import shared_cache, v8pool
from .bounded_cache import BoundedCache
from .mathmacros import NONE as NO_MACROS
from .mathmacros import Macros
from .v8pool import ASSETS, AssetsMissing, JSError, JSStopped, JSTimedOut, versions

__all__ = ["AssetsMissing", "JSError", "JSStopped", "JSTimedOut", "MacrosRefused", "versions"]

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


class MacrosRefused(JSError):
    """KaTeX refused the macro definitions a formula was to be typeset after (not the formula)."""


@functools.cache
def katex_version() -> str:
    return versions()["katex"]


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
    context = v8pool.new_context("katex/katex.min.js", "pseudocode/pseudocode.min.js")
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


_pool = v8pool.Pool(_load)


@contextlib.contextmanager
def borrowed() -> MiniRacer:
    """A KaTeX context for this caller alone until the block ends, then lent again."""
    with _pool.borrowed() as context:
        yield context


def start() -> None:
    """Have one context ready (V8 started, libraries loaded) before the first render needs it."""
    with borrowed():
        pass


def _call(function: str, *args):
    return v8pool.call(function, *args, pool=_pool)


# Formulas and algorithms this process keeps typeset, bounded by count and by the characters
# of their TeX and HTML (SCIDRAFT_KATEX_CACHE_MB: configure); the algorithms, larger and fewer,
# take a quarter of that. Past them the shared cache is asked, then KaTeX.
CACHE_BYTES = 16 * 1024 * 1024


def _weigh(key: tuple, value: tuple[bool, str]) -> int:
    return len(key[0]) + len(value[1]) + 200  # the entry's own objects, roughly


_formulas = BoundedCache(20_000, CACHE_BYTES, _weigh)
_algorithms = BoundedCache(2_000, CACHE_BYTES // 4, _weigh)


def configure(*, cache_bytes: int | None = None) -> None:
    """The process's bound on typeset formulas and algorithms kept, from the settings."""
    global CACHE_BYTES
    if cache_bytes is not None:
        CACHE_BYTES = max(0, int(cache_bytes))
        _formulas.resize(max_bytes=CACHE_BYTES)
        _algorithms.resize(max_bytes=CACHE_BYTES // 4)


def _tex_cached(tex: str, display: bool, version: str, macros: Macros) -> tuple[bool, str]:
    key = (tex, display, version, macros)
    found = _formulas.get(key)
    if found is None:
        found = _tex_typeset(tex, display, version, macros)
        _formulas.put(key, found)
    return found


def _tex_typeset(tex: str, display: bool, version: str, macros: Macros) -> tuple[bool, str]:
    # Macros hash and compare by their digest: the key holds the definitions in force, and a
    # formula typeset after other definitions is another entry.
    defined = f"\0{macros.digest}" if macros.definitions else ""
    text = f"{version}\0{int(display)}{defined}\0{tex}"
    key = "katex:" + hashlib.sha256(text.encode()).hexdigest()
    shared = shared_cache.get(key)
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
    shared_cache.put(key, list(result))
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
    return _formulas.info()


def tex_cache_clear() -> None:
    """Empty the formula and algorithm caches (benchmarks measure cold renders with it)."""
    _formulas.clear()
    _algorithms.clear()
    _macros_checked.cache_clear()


def _pseudocode_cached(source: str, caption_count: int, version: str) -> tuple[bool, str]:
    key = (source, caption_count, version)
    found = _algorithms.get(key)
    if found is None:
        found = _pseudocode_typeset(source, caption_count, version)
        _algorithms.put(key, found)
    return found


def _pseudocode_typeset(source: str, caption_count: int, version: str) -> tuple[bool, str]:
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
