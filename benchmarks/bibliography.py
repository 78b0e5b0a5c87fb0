"""How long bibliographies take: parsing and importing a 5,000-entry .bib, formatting the
reference list of a note that cites 50 of its keys (cold and warm), and rendering the longest
citing example note with its real .bib files, before (the pybtex styles of 23793ee^) and after
(CSL through citation-js) in one run.

Standalone: `python benchmarks/bibliography.py`, or `make bench` for every benchmark. It uses a
fresh SQLite database in a temporary directory (DATABASE_URL is set before Django starts), so
it never touches the development database. `--profile` adds a cProfile summary of the import.
The example site is read from ../shared beside the checkout, or from $SCIDRAFT_SHARED.

Formatting is measured cold: before each run, `format_cache_clear()` empties the formatted-entry
cache, the shared cache (Django's) is cleared and the formula cache too, and each run's note
cites 50 keys no earlier run cited (disjoint slices of one shuffle of the file's keys), so no
entry of the list was ever formatted in the process. What stays warm from the warm-up (what a
worker does as it starts, bibliography.processor.warm: the style loaded, its citeproc-js processor
built and exercised with made-up lists, then one note of keys never measured): imports, the
database connection, and the V8 contexts with citation-js, as a server has them for its site's
style. Both pools are warmed alike. Cold lists are measured twice, alternating run by
run: before (BEFORE_COMMIT's citation functions, evaluated after citation-js's browser bundle
as that commit did, in a context pool of their own) and after (today's: the server bundle
scripts/build-citations.mjs builds from the pinned packages and bibliography/js/), on the same
Python code. Warm: the
same list again, from the caches. Added (author–date styles): a formatted list with one
citation more, as the editor's preview sees an author write (only the added key's group is
formatted). Each figure is the median of FORMAT_RUNS runs, in wall-clock time (the target) and
in CPU time (the work itself, steadier on a shared machine).

It reports and never gates: the exit code is 0 even when a target fails, so FAIL is printed
where a reader cannot miss it.
"""

from __future__ import annotations

import cProfile
import io
import logging
import os
import platform
import pstats
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _table import status, table  # benchmarks/ is on sys.path: the script's folder

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SEED = 20240601
ENTRIES = 5_000
CITED = 50
RUNS = 5
FORMAT_RUNS = 15  # cold runs per style: each is short, and the median needs several
BIB_NAME = "bib/bench.bib"
# Targets from the issue.
TARGET_IMPORT_S = 3.0
TARGET_FORMAT_MS = 50.0
TARGET_WARM_MS = 5.0
# The styles measured (each costs FORMAT_RUNS cold lists): the default, and one of each kind.
BENCH_STYLES = ["vancouver", "apa", "ieee", "chicago-author-date"]
# ../shared beside the checkout, or where SCIDRAFT_SHARED says (a worktree elsewhere).
SHARED = Path(os.environ.get("SCIDRAFT_SHARED") or ROOT.parent / "shared")
EXAMPLE = SHARED / "reference" / "scidraft-exampleSite"
# The formatting before the server bundle: that commit's citation functions (the JavaScript
# prelude of its bibliography/csl.py) after citation-js's own browser bundle, in a context pool
# of their own beside today's, on the same Python (lists sliced and grouped as today).
BEFORE_COMMIT = "08500e6"
BROWSER_BUNDLE = ROOT / "node_modules" / "citation-js" / "build" / "citation.js"
# The last commit with the pybtex styles (the one before 23793ee replaced them with CSL): main
# no longer has them, so "before" is read from there.
PYBTEX_COMMIT = "23793ee^"

DASH = "—"


# --- The synthetic file ----------------------------------------------------------------------

_FIRST = [
    "Donald E.",
    "Ada",
    "Andr{\\'e}",
    'J{\\"u}rgen',
    "Fran{\\c c}ois",
    "Yann",
    "Geoffrey",
    "Li",
    "Wei",
    "Mar{\\'\\i}a",
    "Kurt",
    "S{\\o}ren",
    "Jos{\\'e}",
    "Anna K.",
    "Pieter",
    "Ngozi",
    "{\\L}ukasz",
    "Hiroshi",
    "Ay{\\c s}e",
    "Olga",
]
_LAST = [
    "Knuth",
    "Lovelace",
    'M{\\"u}ller',
    "Schmidhuber",
    "Chollet",
    "LeCun",
    "Hinton",
    "Zhang",
    "Wang",
    "Garc{\\'\\i}a",
    'G{\\"o}del',  # braced: a bare \" would end a quoted BibTeX value
    "Kierkegaard",
    "van der Berg",
    "Stra{\\ss}e",
    "Nguyen",
    "Okonkwo",
    "de la Cruz",
    "Tanaka",
    "Y{\\i}lmaz",
    "Petrova",
]
_WORDS = (  # noqa: SIM905 - a sentence reads better than 28 quoted words
    "learning attention networks deep graph language models reasoning robust sparse efficient "
    "optimal bounds kernel neural transformers estimation inference scalable stochastic "
    "convergence gradient descent representation retrieval benchmark evaluation causal"
).split()
_TYPES = [
    "article",
    "article",
    "article",
    "inproceedings",
    "inproceedings",
    "book",
    "incollection",
    "phdthesis",
    "mastersthesis",
    "techreport",
    "misc",
    "online",
    "software",
]
_MACROS = {
    "jmlr": "Journal of Machine Learning Research",
    "tpami": "IEEE Transactions on Pattern Analysis and Machine Intelligence",
    "neurips": "Advances in Neural Information Processing Systems",
    "cacm": "Communications of the {ACM}",
}
_INITIALS = ["", *(f" {letter}." for letter in "ABCDEFGHIJKLMNOPRSTUVWYZ"), " de", " van"]
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]


def _value(rng: random.Random, text: str) -> str:
    # Both quoting styles, as real exports mix them.
    return f'"{text}"' if rng.random() < 0.5 else f"{{{text}}}"


def synthetic_bib(entries: int = ENTRIES, seed: int = SEED) -> str:
    """A deterministic .bib: varied types and case, 1–12 authors, accents, @string macros,
    `#` concatenation with month macros, % comment lines, DOIs and URLs."""
    rng = random.Random(seed)
    out = ["% Synthetic bibliography for benchmarks/bibliography.py", ""]
    out += [f'@string{{{name} = "{value}"}}' for name, value in _MACROS.items()]
    out.append("")
    for number in range(entries):
        kind = rng.choice(_TYPES)
        written = kind.upper() if number % 3 == 0 else kind
        # 20 × 20 × 27 spellings: names recur, as in real files, but most are new.
        authors = " and ".join(
            f"{rng.choice(_LAST)}, {rng.choice(_FIRST)}{rng.choice(_INITIALS)}"
            for _ in range(rng.randint(1, 12))
        )
        title = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 12))).capitalize()
        if rng.random() < 0.2:
            title += " with {BERT}"
        if rng.random() < 0.1:
            title += " for $\\alpha$-divergences"
        lines = [
            f"@{written}{{key{number:05d},",
            f"  author    = {_value(rng, authors)},",
            f"  title     = {_value(rng, title)},",
            f"  year      = {rng.randint(1950, 2025)},",
        ]
        if kind == "article":
            journal = rng.choice([*_MACROS, "{Nature}", '"Journal of {F}oo"'])
            lines += [
                f"  journal   = {journal},",
                f"  volume    = {rng.randint(1, 60)},",
                f"  number    = {rng.randint(1, 12)},",
                f"  pages     = {{{rng.randint(1, 500)}--{rng.randint(501, 900)}}},",
                f'  month     = "{rng.randint(1, 28)}~" # {rng.choice(_MONTHS)},',
            ]
        elif kind in ("inproceedings", "incollection"):
            lines.append(f"  booktitle = {rng.choice(['neurips', '{Proceedings of Foo}'])},")
            lines.append(f"  pages     = {{{rng.randint(1, 50)}--{rng.randint(51, 99)}}},")
        elif kind in ("phdthesis", "mastersthesis"):
            lines.append(f"  school    = {{Universit{{\\'e}} {rng.randint(1, 30)}}},")
        elif kind == "techreport":
            lines.append(f"  institution = {{Institute {rng.randint(1, 30)}}},")
        else:
            lines.append(f"  publisher = {{Publisher {rng.randint(1, 40)}}},")
        if rng.random() < 0.5:
            lines.append(
                f"  doi       = {{10.{rng.randint(1000, 9999)}/{rng.randint(10**5, 10**6)}}},"
            )
        if rng.random() < 0.3:
            lines.append(f"  url       = {{https://example.org/paper/{number}}},")
        if rng.random() < 0.05:
            lines.append("% note      = {commented out},")
        lines.append("}")
        out.append("\n".join(lines))
        out.append("")
    return "\n".join(out)


def citing_note(
    entries: int = ENTRIES, cited: int = CITED, seed: int = SEED, part: int | None = None
) -> str:
    """A note with `cited` distinct \\cite{} keys over 10 paragraphs, then one references list.
    With `part`, the keys are the part-th slice of one shuffle of the file's keys: notes of
    different parts share no key."""
    rng = random.Random(seed + 1)
    if part is None:
        keys = [f"key{number:05d}" for number in rng.sample(range(entries), cited)]
    else:
        order = list(range(entries))
        random.Random(seed + 2).shuffle(order)
        keys = [f"key{number:05d}" for number in order[part * cited : (part + 1) * cited]]
    paragraphs = []
    for start in range(0, cited, 5):
        words = " ".join(rng.choice(_WORDS) for _ in range(40))
        cites = " ".join(f"see \\cite{{{key}}}" for key in keys[start : start + 5])
        paragraphs.append(f"{words.capitalize()} {cites}.")
    paragraphs.append(f'{{{{< references bib="{BIB_NAME}" >}}}}')
    return "\n\n".join(paragraphs) + "\n"


# --- Django ----------------------------------------------------------------------------------


def django_setup(directory: str) -> None:
    """Start Django on a fresh SQLite database in `directory`, migrated."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")
    os.environ.setdefault("DEBUG", "1")
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/bench.sqlite3"
    import django
    from django.apps import apps

    if apps.ready:
        raise RuntimeError("Django was already set up by another benchmark; run this one alone")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


# --- Measuring -------------------------------------------------------------------------------


def _seconds(function, *args, **kwargs):
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
        elapsed, result = _seconds(function, *args)
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
        elapsed, result = _seconds(render, source, context)
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


def _before_pool():
    """A citation context pool whose contexts load citation-js's browser bundle with
    BEFORE_COMMIT's globals and functions (the prelude of its bibliography/csl.py, read from
    git; a faked browser so that the bundle's core-js keeps V8's fast paths; citeproc-js's
    module number for the prelude's shortcuts), or None when git cannot give them."""
    import json
    import subprocess

    from py_mini_racer import MiniRacer, init_mini_racer

    from bibliography import jsbundle
    from scidraft.markup import v8pool

    try:
        source = subprocess.run(  # noqa: S603 - git on this repository, fixed arguments
            ["git", "-C", str(ROOT), "show", f"{BEFORE_COMMIT}:bibliography/csl.py"],  # noqa: S607
            capture_output=True,
            check=True,
            text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    if not BROWSER_BUNDLE.is_file():
        return None
    prelude = re.search(r'_PRELUDE = r"""(.*?)"""', source, re.DOTALL).group(1)
    bundle = BROWSER_BUNDLE.read_text(encoding="utf-8")
    number = re.search(r'"citeproc":(\d+)[,}]', bundle)
    modules = {"citeproc": int(number.group(1))} if number else {}

    def load():
        init_mini_racer(flags=v8pool.V8_FLAGS, ignore_duplicate_init=True)
        context = MiniRacer()
        major, minor = context.v8_version.split(".")[:2]
        context.eval(
            "var window = this, self = this;"
            f' var navigator = {{userAgent: "Chrome/{int(major)}{int(minor)}"}};'
        )
        context.eval(bundle)
        context.eval(f"var SCIDRAFT_BUNDLE_MODULES = {json.dumps(modules)};")
        context.eval(prelude)
        return context

    return v8pool.Pool(load, floor=jsbundle.CALLS_AT_ONCE)


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
                elapsed, result = _seconds(render, source, context)
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
    import json

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


def _styles() -> list[str | None]:
    return list(BENCH_STYLES)


# --- The longest citing example note, before and after ---------------------------------------


def _legacy_formatter(directory: str):
    """main's pybtex styles (the formatting before CSL), loaded from git as a package of their
    own, with main's formatting step: key → HTML, cached by content as main cached it."""
    import functools
    import subprocess
    import tarfile

    package = Path(directory) / "legacy_bibliography"
    archive = subprocess.run(  # noqa: S603 - git on this repository, fixed arguments
        [  # noqa: S607 - git from PATH, as make and CI use it
            "git",
            "-C",
            str(ROOT),
            "archive",
            PYBTEX_COMMIT,
            "bibliography/styles",
            "bibliography/display.py",
        ],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(directory, filter="data")
    (Path(directory) / "bibliography").rename(package)
    (package / "__init__.py").write_text("")
    sys.path.insert(0, directory)
    from legacy_bibliography.styles import HtmlBackend, get_style, make_entry, style_name
    from legacy_bibliography.styles.memo import memo_clear

    @functools.lru_cache(maxsize=20_000)
    def one(key, entry_type, fields, persons, style):
        entry = make_entry(key, entry_type, dict(fields), {r: list(n) for r, n in persons})
        try:
            return get_style(style).format_entry("", entry).text.render(HtmlBackend())
        except Exception as error:  # noqa: BLE001 - main showed the key and why
            return f"{key}. (incomplete entry: {error})"

    class Legacy:
        def __init__(self, name, entries):
            self.url = f"/{name}"
            self.entries = {entry.key: entry for entry in entries}

        def format(self, keys, style, locale=None):
            name = style_name(style)
            found = {}
            for key in keys:
                entry = self.entries.get(key)
                if entry is not None:
                    persons = tuple(sorted((r, tuple(n)) for r, n in entry.persons.items()))
                    fields = tuple(sorted(entry.fields.items()))
                    found[key] = one(key, entry.entry_type, fields, persons, name)
            return found

    def clear():
        one.cache_clear()
        memo_clear()

    return Legacy, clear


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
    Legacy, legacy_clear = _legacy_formatter(directory)
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
                elapsed, result = _seconds(render, body, context)
                label = f"{kind}, {'warm' if warm else 'cold'}"
                if run:
                    times.setdefault(label, []).append(elapsed * 1000)
                items[label] = result.html.count('<li id="ref-')
    return [
        [f"{name}, render {label}", f"{items[label]}", f"{statistics.median(ms):.1f} ms"]
        + [DASH, DASH, DASH]
        for label, ms in times.items()
    ]


# --- Reporting -------------------------------------------------------------------------------


def _uptime() -> str:
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    try:
        seconds = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return f"load average {load}"
    return f"up {seconds / 3600:.1f} h, load average {load} (1, 5, 15 min)"


def _table(rows: list[list[str]]) -> str:
    return table(["case", "entries", "median", "CPU", "target", "status"], rows, {1, 2, 3})


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    print("Bibliography benchmark (parse, import, reference-list formatting)")
    print(
        f"machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), "
        f"Python {platform.python_version()} ({platform.machine()}), load average "
        f"{os.getloadavg()[0]:.1f} at the start"
    )
    print(f"uptime: {_uptime()}")
    text = synthetic_bib()
    source = citing_note(part=0)  # warm and shared-cache runs; cold runs cite other keys
    print(
        f"file: {ENTRIES:,} entries (seed {SEED}), {len(text.encode()) / 1_048_576:.1f} MB; "
        f"note: {CITED} \\cite keys and one references list; medians of {RUNS} runs "
        f"(import) and of {FORMAT_RUNS} cold runs (formatting)"
    )
    print()

    with tempfile.TemporaryDirectory(prefix="scidraft-bench-") as directory:
        django_setup(directory)
        from bibliography.models import BibFile
        from bibliography.parsing import parse_bibtex
        from bibliography.services import bibfile_import

        rows: list[list[str]] = []
        failures: list[str] = []

        parse_runs = []
        for _ in range(RUNS):
            elapsed, parsed = _seconds(parse_bibtex, text)
            parse_runs.append(elapsed)
        kept = len(parsed.entries)
        rows.append(
            [
                "parse_bibtex (no database)",
                f"{kept:,}",
                f"{statistics.median(parse_runs):.2f} s",
                DASH,
                DASH,
                DASH,
            ]
        )

        # A fresh database each run: delete the file (its entries cascade) before importing.
        import_runs = []
        for _ in range(RUNS):
            BibFile.objects.filter(name=BIB_NAME).delete()
            elapsed, result = _seconds(bibfile_import, name=BIB_NAME, raw=text.encode())
            import_runs.append(elapsed)
        imported = statistics.median(import_runs)
        ok = imported < TARGET_IMPORT_S and result.entries_kept == ENTRIES
        if not ok:
            failures.append(f"import {imported:.2f} s (target < {TARGET_IMPORT_S:g} s)")
        rows.append(
            [
                "bibfile_import, new file (parse + store)",
                f"{result.entries_kept:,}",
                f"{imported:.2f} s",
                DASH,
                f"< {TARGET_IMPORT_S:g} s",
                status(ok),
            ]
        )

        elapsed, again = _seconds(bibfile_import, name=BIB_NAME, raw=text.encode())
        rows.append(
            ["bibfile_import, same text again", f"{again.entries_kept:,}", f"{elapsed:.2f} s"]
            + [DASH, DASH, DASH]
        )

        changed = text.replace("  year      = ", "  year      = 1")
        elapsed, updated = _seconds(bibfile_import, name=BIB_NAME, raw=changed.encode())
        ok = elapsed < TARGET_IMPORT_S
        if not ok:
            failures.append(f"re-import {elapsed:.2f} s (target < {TARGET_IMPORT_S:g} s)")
        rows.append(
            [
                "bibfile_import, every entry changed",
                f"{updated.entries_kept:,}",
                f"{elapsed:.2f} s",
                DASH,
                f"< {TARGET_IMPORT_S:g} s",
                status(ok),
            ]
        )
        bibfile_import(name=BIB_NAME, raw=text.encode())  # back to the file the note cites

        bibfile = BibFile.objects.get(name=BIB_NAME)
        notes = []
        # Entries a style cannot format are logged at INFO; count them instead of printing.
        logging.getLogger("bibliography").setLevel(logging.WARNING)
        floors: list[list[str]] = []
        before = _before_pool()
        pools = {f"before ({BEFORE_COMMIT})": before, "after": None} if before else {"": None}
        for style in _styles():
            label = style or "default"
            try:
                cold = measure_cold(bibfile, style, pools)
            except Exception as error:  # noqa: BLE001 - report it and go on to the next style
                failures.append(f"style {label} crashed")
                rows.append([f"note citing {CITED} keys, style {label}", f"{CITED}", DASH, DASH])
                rows[-1] += [f"< {TARGET_FORMAT_MS:g} ms", "FAIL"]
                notes.append(f"style {label}: {type(error).__name__}: {error}")
                continue
            for path, measured in cold.items():
                if path.startswith("before"):
                    rows.append(
                        [
                            f"note citing {CITED} keys, style {label}: reference list, {path}",
                            f"{CITED}",
                            f"{measured['format_ms']:.1f} ms",
                            f"{measured['format_cpu_ms']:.1f} ms",
                            DASH,
                            DASH,
                        ]
                    )
            measured = cold[list(pools)[-1]]
            ok = measured["format_ms"] < TARGET_FORMAT_MS and measured["items"] >= CITED
            if not ok:
                failures.append(f"formatting ({label}) {measured['format_ms']:.1f} ms")
            warm = measure_note(bibfile, source, style, mode="warm")
            shared = measure_note(bibfile, source, style, mode="shared")
            warm_ok = warm["format_ms"] < TARGET_WARM_MS
            if not warm_ok:
                failures.append(f"warm formatting ({label}) {warm['format_ms']:.1f} ms")
            rows.append(
                [
                    f"note citing {CITED} keys, style {label}: reference list"
                    + (", after" if before else ""),
                    f"{CITED}",
                    f"{measured['format_ms']:.1f} ms",
                    f"{measured['format_cpu_ms']:.1f} ms",
                    f"< {TARGET_FORMAT_MS:g} ms",
                    status(ok),
                ]
            )
            rows.append(
                [
                    f"note citing {CITED} keys, style {label}: reference list, from the "
                    "shared cache",
                    f"{CITED}",
                    f"{shared['format_ms']:.2f} ms",
                    f"{shared['format_cpu_ms']:.2f} ms",
                    DASH,
                    DASH,
                ]
            )
            rows.append(
                [
                    f"note citing {CITED} keys, style {label}: reference list, warm",
                    f"{CITED}",
                    f"{warm['format_ms']:.2f} ms",
                    f"{warm['format_cpu_ms']:.2f} ms",
                    f"< {TARGET_WARM_MS:g} ms",
                    status(warm_ok),
                ]
            )
            rows.append(
                [
                    f"note citing {CITED} keys, style {label}: whole render",
                    f"{CITED}",
                    f"{measured['render_ms']:.1f} ms",
                    DASH,
                    DASH,
                    DASH,
                ]
            )
            if not formatting_style_is_numeric(style):
                for path, elapsed in measure_added(bibfile, style, pools).items():
                    rows.append(
                        [
                            f"note citing {CITED} keys, style {label}: one citation added to "
                            f"its formatted list{', ' + path if path else ''}",
                            f"{CITED + 1}",
                            f"{elapsed:.1f} ms",
                            DASH,
                            DASH,
                            DASH,
                        ]
                    )
            floors.append([label, *measure_floor(bibfile, style)])
            for path, counted in cold.items():
                notes.append(
                    f"style {label}{', ' + path if path else ''}: {counted['items']} list items, "
                    f"{counted['incomplete']} shown as incomplete, {counted['warnings']} render "
                    "warning(s)"
                )

        rows += measure_example(directory)
        print(_table(rows))
        print(f"uptime at the end: {_uptime()}")
        print()
        print("citeproc-js's own time, ms an entry (cold lists of 50, after; V8's clock):")
        print(
            table(
                ["style", "BibTeX mapping", "updateItems", "makeBibliography", "in-text"],
                floors,
                {1, 2, 3, 4},
            )
        )
        print()
        print(
            "reference list = time inside the bibliography's format()/labels() during render "
            "(database query + citation-js in V8), cold: every cache emptied before each run "
            "and keys no earlier run cited; "
            "median = wall clock (the target), CPU = process time of the same calls; "
            "whole render = scidraft.markup.render of the note."
        )
        for line in notes:
            print(line)
        if failures:
            print(f"FAIL: {'; '.join(failures)}.")
        else:
            print("PASS: every target met.")

        if "--profile" in argv:
            profiler = cProfile.Profile()
            BibFile.objects.filter(name=BIB_NAME).delete()
            profiler.enable()
            bibfile_import(name=BIB_NAME, raw=text.encode())
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(20)
            print()
            print("=== cProfile, bibfile_import of a new file (tottime, top 20) ===")
            print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
