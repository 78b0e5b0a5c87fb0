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

Its parts beside it (helpers, which the runner skips): _bibliography_file.py (the synthetic file
and the notes citing it), _bibliography_measures.py (the measurements) and
_bibliography_before.py (the formatting before, from git).
"""

from __future__ import annotations

import cProfile
import io
import logging
import os
import platform
import pstats
import statistics
import sys
import tempfile
from pathlib import Path

from _bibliography_before import BEFORE_COMMIT, before_pool
from _bibliography_file import BIB_NAME, CITED, ENTRIES, SEED, citing_note, synthetic_bib
from _bibliography_measures import (
    DASH,
    FORMAT_RUNS,
    RUNS,
    formatting_style_is_numeric,
    measure_added,
    measure_cold,
    measure_example,
    measure_floor,
    measure_note,
    time_call,
)
from _table import status, table, verdict  # benchmarks/ is on sys.path: the script's folder

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Targets from the issue.
TARGET_IMPORT_S = 3.0
TARGET_FORMAT_MS = 50.0
TARGET_WARM_MS = 5.0
# The styles measured (each costs FORMAT_RUNS cold lists): the default, and one of each kind.
BENCH_STYLES = ["vancouver", "apa", "ieee", "chicago-author-date"]


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


def _styles() -> list[str | None]:
    return list(BENCH_STYLES)


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
            elapsed, parsed = time_call(parse_bibtex, text)
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
            elapsed, result = time_call(bibfile_import, name=BIB_NAME, raw=text.encode())
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

        elapsed, again = time_call(bibfile_import, name=BIB_NAME, raw=text.encode())
        rows.append(
            ["bibfile_import, same text again", f"{again.entries_kept:,}", f"{elapsed:.2f} s"]
            + [DASH, DASH, DASH]
        )

        changed = text.replace("  year      = ", "  year      = 1")
        elapsed, updated = time_call(bibfile_import, name=BIB_NAME, raw=changed.encode())
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
        before = before_pool()
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
        print(verdict(failures, "every target met."))

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
