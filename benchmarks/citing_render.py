"""How long a citing note's render takes beside a large bibliography file (5,000 entries, about
4 MB of BibTeX): the file's row read whole, raw text included, as renders read it before,
against the name and owner only with the cited entries by key (BibFile.objects.for_citing).

Standalone: `python benchmarks/citing_render.py`, or `make bench` for every benchmark. It uses
a fresh SQLite database in a temporary directory unless DATABASE_URL names another (then it
must be an empty database of your own); when another benchmark already started Django in this
process, it runs itself in a child process. It reports and never gates.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _fresh import ran_in_a_fresh_interpreter  # benchmarks/ is on sys.path: the script's folder
from _table import table

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ENTRIES = 5_000
NOTES = 40
ROUNDS = 3
# An abstract per entry brings the file to the size of a real bibliography's.
ABSTRACT = "We study the convergence of the method under mild assumptions. " * 12


def big_bib() -> str:
    return "".join(
        f"@article{{key{n},\n  author = {{Author, A{n} and Other, B}},\n"
        f"  title = {{Paper number {n}}},\n  journal = {{Journal {n % 40}}},\n"
        f"  year = {{{1990 + n % 35}}},\n  abstract = {{{ABSTRACT}}}\n}}\n"
        for n in range(ENTRIES)
    )


def _run(directory: str) -> list[list[str]]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")
    os.environ.setdefault("DEBUG", "1")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{directory}/bench.sqlite3")
    os.environ["MEDIA_ROOT"] = f"{directory}/media"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from django.db import connection

    from bibliography.formatting import StoredBibliography
    from bibliography.models import BibFile
    from bibliography.services import bibfile_import
    from notes.models import Note, Status
    from notes.rendering import NoteBibliographies, context_for
    from scidraft.markup import render

    raw = big_bib()
    bibfile_import(name="bib/big.bib", raw=raw)
    notes = Note.objects.bulk_create(
        Note(
            slug=f"citing-{n}",
            title=f"Citing {n}",
            status=Status.PUBLISHED,
            body=f"As shown \\cite{{key{n * 7}, key{n * 11 + 3}}} and "
            f"\\cite{{key{n * 13 + 5}}}.\n\n"
            '{{< references bib="bib/big.bib" >}}\n',
        )
        for n in range(NOTES)
    )

    def whole_row(name: str):
        bibfile = BibFile.objects.filter(name=name.strip().lstrip("/")).first()
        return StoredBibliography(bibfile) if bibfile is not None else None

    def now(note):
        return context_for(note)

    def before(note):
        context = context_for(note)
        return dataclasses.replace(
            context, resolve_bibliography=NoteBibliographies(whole_row, note, frozenset())
        )

    def per_note(make_context) -> float:
        times = []
        for _ in range(ROUNDS):
            for note in notes:
                start = time.perf_counter()
                rendered = render(note.body, make_context(note))
                times.append(time.perf_counter() - start)
                assert rendered.citations and rendered.citations[0].keys
        return statistics.median(times) * 1000

    per_note(now)  # warm up: formatted entries are cached, as on a running site
    rows = []
    for label, make_context in (("whole row, raw text included", before), ("for_citing", now)):
        rows.append([label, f"{per_note(make_context):.1f} ms"])
    size = len(raw.encode("utf-8")) / 1e6
    print(
        f"{connection.vendor}, {ENTRIES:,} entries, {size:.1f} MB of BibTeX, {NOTES} notes "
        f"citing 3 entries each, median of {ROUNDS} rounds"
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    if ran_in_a_fresh_interpreter(__file__):
        return 0
    print("Citing render benchmark (a note citing a large .bib file)")
    print(f"machine: {os.cpu_count()} CPUs, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="scidraft-citing-bench-") as directory:
        rows = _run(directory)
    print(table(["the file read as", "per note render"], rows, numeric={1}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
