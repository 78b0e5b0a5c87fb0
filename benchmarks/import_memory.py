"""Peak memory of `import_hugo` as a site grows: the example site's notes copied under new slugs
to N notes, imported into a fresh SQLite database, each size in a child process of its own.

Standalone: `python benchmarks/import_memory.py [N ...]` (default 500 1000 2000), or
`make bench` for every benchmark. The child reports its peak resident set
(resource.getrusage ru_maxrss) after Django, the migrations and one render (the baseline:
V8 and KaTeX loaded) and after the import; the import's share is the difference, which should
stay flat as N grows (notes are read and written in batches). It reports and never gates.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _table import table  # benchmarks/ is on sys.path: the script's folder

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT.parent / "shared/reference/scidraft-exampleSite"
if not EXAMPLE.is_dir():
    EXAMPLE = ROOT.parent.parent / "shared/reference/scidraft-exampleSite"
SIZES = (500, 1_000, 2_000)


def generated_site(target: Path, count: int) -> Path:
    """The example site with `count` notes: its own, then copies of them under new slugs."""
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("resume-templates"))
    notes = target / "content/notes"
    originals = sorted(notes.glob("*.md"))
    for number in range(count - len(originals)):
        source = originals[number % len(originals)]
        shutil.copyfile(source, notes / f"{source.stem}-copy-{number:05d}.md")
    return target


def _child(site: str, directory: str) -> None:
    import resource

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")
    # DEBUG off, as in production: with it on, Django keeps the last 9,000 queries' SQL (the
    # notes' text in their INSERTs), hundreds of megabytes that no deployment holds.
    os.environ["DEBUG"] = "0"
    os.environ.setdefault("SECRET_KEY", "benchmark-only-" + "k" * 50)
    os.environ.setdefault("ALLOWED_HOSTS", "localhost")
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/bench.sqlite3"
    os.environ["MEDIA_ROOT"] = f"{directory}/media"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from hugosite.importing import import_site
    from notes.rendering import context_for
    from scidraft.markup import render

    render("Warm up $x^2$.", context_for(None))
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    report, _, _ = import_site(site)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    notes = sum(report.counts.get("notes", {}).values())
    print(
        json.dumps({"baseline_kb": baseline, "peak_kb": peak, "seconds": elapsed, "notes": notes})
    )


def measure(count: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="scidraft-import-memory-") as directory:
        site = generated_site(Path(directory) / "site", count)
        result = subprocess.run(  # noqa: S603 - ourselves
            [sys.executable, __file__, "--child", str(site), directory],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        _child(argv[1], argv[2])
        return 0
    sizes = [int(arg) for arg in argv] or list(SIZES)
    if not EXAMPLE.is_dir():
        print("import memory benchmark skipped: the example site is not beside the checkout")
        return 0
    print("Import memory benchmark (import_hugo of the example site's notes copied to N notes)")
    print(
        f"machine: {os.cpu_count()} CPUs, Python {platform.python_version()} "
        f"({platform.machine()}); fresh SQLite database, one child process per size"
    )
    rows = []
    for count in sizes:
        found = measure(count)
        baseline, peak = found["baseline_kb"] / 1024, found["peak_kb"] / 1024
        rows.append(
            [
                f"{found['notes']:,}",
                f"{found['seconds']:.1f} s",
                f"{1000 * found['seconds'] / max(1, found['notes']):.1f} ms",
                f"{baseline:.0f} MB",
                f"{peak:.0f} MB",
                f"{peak - baseline:.0f} MB",
            ]
        )
    print(
        table(
            ["notes", "time", "per note", "RSS before import", "peak RSS", "import's share"],
            rows,
            numeric={0, 1, 2, 3, 4, 5},
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
