"""The bibliography benchmark's measurements: a note's reference list cold, from the shared
cache and warm, a citation added, citeproc-js's own time, and the longest citing example note
before and after, for benchmarks/bibliography.py."""

from __future__ import annotations

import json
import os
import re
import statistics
import time
from pathlib import Path

from _bibliography_before import legacy_formatter
from _bibliography_file import BIB_NAME, citing_note

ROOT = Path(__file__).resolve().parents[1]
RUNS = 5
FORMAT_RUNS = 15  # cold runs per style: each is short, and the median needs several
# ../shared beside the checkout, or where SCIDRAFT_SHARED says (a worktree elsewhere).
SHARED = Path(os.environ.get("SCIDRAFT_SHARED") or ROOT.parent / "shared")
EXAMPLE = SHARED / "reference" / "scidraft-exampleSite"

DASH = "—"


def time_call(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


class _TimedBibliography:
    """The engine's Bibliography, adding up the time spent formatting (wall clock and CPU)."""

    def __init__(self, inner):
        self.inner = inner
        self.url = inner.url
        self.seconds = 0.0
        self.cpu_seconds = 0.0

    def _timed(self, function, *args):
        cpu = time.process_time()
        elapsed, result = time_call(function, *args)
        self.cpu_seconds += time.process_time() - cpu
        self.seconds += elapsed
        return result

    def format(self, keys, style, locale=None):
        return self._timed(self.inner.format, keys, style, locale)


def _cold() -> None:
    from django.core.cache import cache

    from bibliography.formatting import format_cache_clear
    from scidraft.markup import jsengine

    format_cache_clear()
    cache.clear()  # the shared cache holds formatted entries too
    jsengine.tex_cache_clear()


def measure_note(bibfile, source: str, style: str | None, *, mode: str = "cold") -> dict:
    """mode: "cold" (every cache emptied before each run), "shared" (this process's caches
    emptied, the shared cache kept: another worker formatted the list before) or "warm"."""
    from bibliography.formatting import StoredBibliography, format_cache_clear
    from scidraft.markup import RenderContext, jsengine, render

    renders, formats, cpu, references, incomplete = [], [], [], 0, 0
    for run in range(FORMAT_RUNS + 1):
        # Cold every run: formatted entries and formulas are cached by content, and the
        # target is about formatting, not about reading a cache. Warm: the caches are kept.
        if mode == "cold" or run == 0:
            _cold()
        elif mode == "shared":
            format_cache_clear()
            jsengine.tex_cache_clear()
        timed = _TimedBibliography(StoredBibliography(bibfile))
        context = RenderContext(
            resolve_bibliography=lambda name, timed=timed: timed if name == BIB_NAME else None,
            citation_style=style,
        )
        elapsed, result = time_call(render, source, context)
        if run == 0:  # warm-up: imports, style objects, the database's first query
            references = result.html.count("<li")
            incomplete = result.html.count('class="ref-unformatted"')
            continue
        renders.append(elapsed * 1000)
        formats.append(timed.seconds * 1000)
        cpu.append(timed.cpu_seconds * 1000)
    return {
        "render_ms": statistics.median(renders),
        "format_ms": statistics.median(formats),
        "format_cpu_ms": statistics.median(cpu),
        "items": references,
        "incomplete": incomplete,
        "warnings": len(result.warnings),
    }


def measure_cold(bibfile, style: str, pools: dict) -> dict:
    """Cold lists through each pool ({label: pool}, None for today's), alternating run by run
    so a busy machine slows all alike. Run n of every pool formats the note of part n, whose
    50 keys no earlier run cited: each list is new to the contexts, whose processors were
    built and exercised for the style by processor.warm and the warm-up run (part 99, never
    measured)."""
    from bibliography import jsbundle, processor
    from bibliography.formatting import StoredBibliography
    from scidraft.markup import RenderContext, render

    today = jsbundle.pool
    found = {label: {"format": [], "cpu": [], "render": []} for label in pools}
    items = {}
    for run in range(FORMAT_RUNS + 1):
        source = citing_note(part=99 if run == 0 else run)
        for label, pool in pools.items():
            jsbundle.pool = pool or today
            try:
                if run == 0:
                    processor.warm(style, None)  # as a worker starts: the style built and exercised
                _cold()
                timed = _TimedBibliography(StoredBibliography(bibfile))
                context = RenderContext(
                    resolve_bibliography=lambda name, t=timed: t if name == BIB_NAME else None,
                    citation_style=style,
                )
                elapsed, result = time_call(render, source, context)
            finally:
                jsbundle.pool = today
            if run == 0:
                items[label] = (
                    result.html.count("<li"),
                    result.html.count('class="ref-unformatted"'),
                    len(result.warnings),
                )
                continue
            found[label]["format"].append(timed.seconds * 1000)
            found[label]["cpu"].append(timed.cpu_seconds * 1000)
            found[label]["render"].append(elapsed * 1000)
    return {
        label: {
            "format_ms": statistics.median(runs["format"]),
            "format_cpu_ms": statistics.median(runs["cpu"]),
            "render_ms": statistics.median(runs["render"]),
            "items": items[label][0],
            "incomplete": items[label][1],
            "warnings": items[label][2],
        }
        for label, runs in found.items()
    }


def formatting_style_is_numeric(style: str | None) -> bool:
    from bibliography import csl

    return csl.style_info(style).numeric


def measure_added(bibfile, style: str, pools: dict) -> dict:
    """A citation added to a note whose list was formatted (the editor's preview as an author
    writes): each run formats a note of new keys, then times the same note citing one key
    more: only the added key's group is formatted."""
    from bibliography import jsbundle
    from bibliography.formatting import StoredBibliography
    from scidraft.markup import RenderContext, render

    today = jsbundle.pool
    found = {label: [] for label in pools}
    for run in range(FORMAT_RUNS + 1):
        source = citing_note(part=16 + run)  # parts no other measurement cites
        extra = re.findall(r"\\cite\{([^}]+)\}", citing_note(part=32 + run))[0]
        added = source.replace("{{< references", f"And \\cite{{{extra}}}.\n\n{{{{< references")
        for label, pool in pools.items():
            jsbundle.pool = pool or today
            try:
                _cold()
                for text, timed_run in ((source, False), (added, True)):
                    timed = _TimedBibliography(StoredBibliography(bibfile))
                    context = RenderContext(
                        resolve_bibliography=lambda name, t=timed: t if name == BIB_NAME else None,
                        citation_style=style,
                    )
                    render(text, context)
                    if timed_run and run:
                        found[label].append(timed.seconds * 1000)
            finally:
                jsbundle.pool = today
    return {label: statistics.median(runs) for label, runs in found.items()}


# The parts of one list inside V8, timed by V8's clock: citation-js's BibTeX mapping, the
# processor's updateItems (sort keys, disambiguation), makeBibliography, the in-text citations.
_FLOOR_JS = r"""
function scidraftBenchFloor(entries, template, lang, citations) {
  var errors = {}, t0 = Date.now();
  var items = scidraftCslItems(entries, errors), t1 = Date.now();
  var data = citationJs.util.downgradeCsl(items);
  var engine = SCIDRAFT_CSL.engine(data, template, lang, "html");
  var ids = data.map(function (item) { return item.id; });
  engine.updateItems(ids);
  var t2 = Date.now();
  engine.sys.wrapBibliographyEntry = function () { return ["", ""]; };
  engine.makeBibliography();
  var t3 = Date.now();
  if (citations) scidraftCslMarkers(engine, ids);
  return JSON.stringify([t1 - t0, t2 - t1, t3 - t2, Date.now() - t3]);
}
"""


def measure_floor(bibfile, style: str) -> list[str]:
    """Milliseconds an entry in each part of a cold list (median over FORMAT_RUNS lists of
    keys no earlier list cited): what citeproc-js itself needs, whatever surrounds it."""

    from bibliography import csl, jsbundle, processor
    from bibliography.entries import bibtex_object, entry_data

    info = csl.style_info(style)
    context = jsbundle.pool.take()
    try:
        if not getattr(context, "scidraft_bench_floor", False):
            context.eval(_FLOOR_JS)
            context.scidraft_bench_floor = True
        processor._prepare(context, info, csl.DEFAULT_LOCALE)
        parts = []
        for run in range(FORMAT_RUNS):
            keys = re.findall(r"\\cite\{([^}]+)\}", citing_note(part=50 + run))
            entries = {e.key: e for e in bibfile.entries.filter(key__in=keys)}
            objects = [bibtex_object(entry_data(entries[key]))[0] for key in keys]
            answer = context.call(
                "scidraftBenchFloor", objects, info.template, csl.DEFAULT_LOCALE,
                not info.numeric, timeout_sec=60,
            )  # fmt: skip
            parts.append([ms / len(objects) for ms in json.loads(answer)])
    finally:
        jsbundle.pool.give_back(context)
    return [f"{statistics.median(column):.2f}" for column in zip(*parts, strict=True)]


# --- The longest citing example note, before and after ---------------------------------------


def longest_citing_note() -> tuple[str, str] | None:
    r"""(file name, body) of the example note with the most \cite{…}, or None without
    ../shared."""
    notes = EXAMPLE / "content" / "notes"
    if not notes.is_dir():
        return None
    from hugosite.reading import split_front_matter

    best = max(notes.glob("*.md"), key=lambda path: path.read_text().count("\\cite{"))
    return best.name, split_front_matter(best.read_text(encoding="utf-8")).body


def measure_example(directory: str) -> list[list[str]]:
    """The longest citing example note, rendered cold with its bibliographies: before (main's
    pybtex styles) and after (CSL), median of RUNS each, alternating so both see the same
    machine."""
    from bibliography.formatting import ParsedBibliography
    from bibliography.parsing import parse_bibtex
    from scidraft.markup import RenderContext, render

    found = longest_citing_note()
    if found is None:
        return [["longest citing example note (../shared absent)", DASH, DASH, DASH, DASH, DASH]]
    name, body = found
    parsed = {
        f"bib/{path.name}": parse_bibtex(path.read_text(encoding="utf-8")).entries
        for path in (EXAMPLE / "assets" / "bib").glob("*.bib")
    }
    Legacy, legacy_clear = legacy_formatter(directory)
    kinds = {
        "before (pybtex styles, 23793ee^)": (
            {n: Legacy(n, e) for n, e in parsed.items()},
            legacy_clear,
        ),
        "after (CSL, citation-js)": (
            {n: ParsedBibliography(n, e) for n, e in parsed.items()},
            _cold,
        ),
    }
    times: dict[str, list[float]] = {}
    items = {}
    for warm in (False, True):
        for run in range(RUNS + 1):
            for kind, (bibs, clear) in kinds.items():
                if not warm:
                    clear()
                    _cold()
                context = RenderContext(resolve_bibliography=bibs.get, citation_style="vancouver")
                elapsed, result = time_call(render, body, context)
                label = f"{kind}, {'warm' if warm else 'cold'}"
                if run:
                    times.setdefault(label, []).append(elapsed * 1000)
                items[label] = result.html.count('<li id="ref-')
    return [
        [f"{name}, render {label}", f"{items[label]}", f"{statistics.median(ms):.1f} ms"]
        + [DASH, DASH, DASH]
        for label, ms in times.items()
    ]
