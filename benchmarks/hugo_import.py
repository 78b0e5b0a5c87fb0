"""How long `import_hugo` takes: the theme's example site, and a synthetic site of 5,000 notes.

Standalone: `python benchmarks/hugo_import.py`, or `make bench` for every benchmark. It uses a
fresh SQLite database in a temporary directory (DATABASE_URL and MEDIA_ROOT are set before
Django starts); when another benchmark already started Django in this process, it runs itself
in a child process so that it still gets its own database. It reports and never gates.

The synthetic notes have TOML front matter, inline and display math, a lemma, a citation with
its references list, a code block and a promotion-textual shortcode; every 10th note joins an
entry set. A second import of the same site (everything unchanged) is timed too.
"""

from __future__ import annotations

import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

from _fresh import ran_in_a_fresh_interpreter  # benchmarks/ is on sys.path: the script's folder
from _table import table

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

NOTES = 5_000
SEED = 20261129
TARGET_S = 60.0
EXAMPLE = ROOT.parent / "shared/reference/scidraft-exampleSite"


def synthetic_site(root: Path, count: int = NOTES) -> Path:
    rng = random.Random(SEED)
    notes = root / "content/notes"
    notes.mkdir(parents=True)
    (root / "assets/bib").mkdir(parents=True)
    (root / "hugo.toml").write_text(
        'title = "Bench"\nbaseURL = "https://example.org/"\n[params]\nauthor = "lab"\n'
        '[params.entrySets.results]\ntitleField = "resultTitle"\n'
        'categoryField = "resultCategory"\ncountLabel = "Results"\n',
        encoding="utf-8",
    )
    (root / "assets/bib/refs.bib").write_text(
        "".join(
            f"@article{{key{n},\n  author = {{Author, A{n} and Other, B}},\n"
            f"  title = {{Paper number {n}}},\n  journal = {{J}},\n"
            f"  year = {{{2000 + n % 25}}}\n}}\n"
            for n in range(200)
        ),
        encoding="utf-8",
    )
    for n in range(count):
        day = 1 + n % 28
        tags = rng.sample(["Math", "Demo", "Proof", "Tables", "Code", "Citations"], 2)
        extra = (
            f'resultTitle = "Result {n}"\nresultCategory = "Family {n % 7}"\n'
            if n % 10 == 0
            else ""
        )
        keys = rng.sample(range(200), 2)
        body = (
            f"A note about $x_{n}^2 + y = {n}$ and \\(\\alpha_{{{n}}}\\).\n\n"
            f"$$\n\\sum_{{i=1}}^{{{n % 50 + 2}}} i = \\frac{{n(n+1)}}{{2}}\n$$\n\n"
            f":::lemma\nFor every $n$, $n + 0 = n$.\n:::\n\n"
            f"As shown before \\cite{{key{keys[0]}, key{keys[1]}}}.\n\n"
            "```python\nprint('hello')\n```\n\n"
            '{{< promotion-textual title="Read more" buttonText="Go" buttonLink="/x/" >}}\n\n'
            '{{< references bib="bib/refs.bib" >}}\n'
        )
        (notes / f"note-{n:05d}.md").write_text(
            f'+++\ntitle = "Synthetic note {n}"\n'
            f"date = 2025-03-{day:02d}T09:{n % 60:02d}:00+02:00\n"
            f"tags = {tags!r}\nmath = true\nshowTitle = true\n{extra}+++\n{body}".replace("'", '"'),
            encoding="utf-8",
        )
    return root


def _run(directory: str) -> list[list[str]]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")
    os.environ.setdefault("DEBUG", "1")
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/bench.sqlite3"
    os.environ["MEDIA_ROOT"] = f"{directory}/media"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from hugosite.importing import import_site
    from notes.models import Note

    rows = []
    sites = []
    if EXAMPLE.is_dir():
        sites.append(("example site", EXAMPLE, None))
    synthetic = synthetic_site(Path(directory) / "synthetic")
    sites.append((f"synthetic, {NOTES:,} notes", synthetic, TARGET_S))
    for label, root, target in sites:
        for run in ("first import", "second import (unchanged)"):
            before = Note.objects.count()
            start = time.perf_counter()
            report, warnings, _ = import_site(root)
            elapsed = time.perf_counter() - start
            notes = report.counts.get("notes", {})
            verdict = "—"
            if target is not None and run == "first import":
                verdict = "ok" if elapsed < target else "FAIL"
            rows.append(
                [
                    label,
                    run,
                    f"{notes.get('created', 0)}/{notes.get('updated', 0)}/"
                    f"{notes.get('unchanged', 0)}",
                    f"{elapsed:.1f} s",
                    f"{1000 * elapsed / max(1, sum(notes.values())):.1f} ms",
                    f"< {target:.0f} s {verdict}" if target else "—",
                ]
            )
            assert Note.objects.count() >= before
    return rows


def _print(rows: list[list[str]]) -> None:
    print(table(["site", "run", "notes c/u/u", "time", "per note", "target"], rows))


def main(argv: list[str] | None = None) -> int:
    if ran_in_a_fresh_interpreter(__file__):
        return 0
    print("Hugo import benchmark (import_hugo: example site, synthetic site)")
    print(
        f"machine: {os.cpu_count()} CPUs, Python {platform.python_version()} "
        f"({platform.machine()}); fresh SQLite database"
    )
    with tempfile.TemporaryDirectory(prefix="scidraft-hugo-bench-") as directory:
        _print(_run(directory))
    return 0


if __name__ == "__main__":
    sys.exit(main())
