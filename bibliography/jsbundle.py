"""The server's citation bundle in a V8 context: citation-js's core, BibTeX, CSL and RIS
plugins and citeproc-js from the locked npm packages, with SciDraft's functions
(bibliography/js/), built by scripts/build-citations.mjs for V8 itself (no polyfill, no
browser globals). scidraft.markup.jsengine pools the contexts; bibliography.csl calls them.
"""

from __future__ import annotations

from pathlib import Path

from py_mini_racer import MiniRacer, init_mini_racer

from scidraft.markup import jsengine

BUNDLE = jsengine.ASSETS / "citations" / "citations.js"
SOURCES = Path(__file__).resolve().parent / "js"  # what the bundle is built from


def load() -> MiniRacer:
    """A fresh context with the bundle evaluated: the functions csl.py calls are globals."""
    if not BUNDLE.is_file():
        raise jsengine.AssetsMissing(f"{BUNDLE} is missing: run `make vendor`.")
    init_mini_racer(flags=jsengine.V8_FLAGS, ignore_duplicate_init=True)
    context = MiniRacer()
    try:
        context.eval(BUNDLE.read_text(encoding="utf-8"))
    except BaseException:
        context.close()
        raise
    return context


jsengine.use_citation_loader(load)
