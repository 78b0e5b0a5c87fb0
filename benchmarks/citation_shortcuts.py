"""What each citeproc-js shortcut of bibliography/js/ is worth: cold lists of made-up entries
(bibliography.processor.exercise_entries, 25 each, never formatted before in the context) in two
contexts of the server bundle, one with the shortcut's flag turned off, alternating list by
list after the same warm-up (processor.warm's practice lists). The figure is the CPU time of the
process over the call, the median of RUNS lists, and the share of the list's time the
shortcut saves. Each shortcut is measured in a style where it applies.

Standalone: `python benchmarks/citation_shortcuts.py`, or `make bench`. It reports and never
gates (exit code 0).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

from _table import table  # benchmarks/ is on sys.path: the script's folder

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RUNS = 15
# (flag, style): each shortcut where it applies (the name register is skipped only by styles
# that never add given names; whole sort keys are costly in Chicago).
SHORTCUTS = [
    ("SCIDRAFT_PLAIN_NAMES", "vancouver"),
    ("SCIDRAFT_PLAIN_NAMES", "ieee"),
    ("SCIDRAFT_LONE_CITES", "apa"),
    ("SCIDRAFT_SHORT_SORT_KEYS", "chicago-author-date"),
    ("SCIDRAFT_PLAIN_STRINGS", "apa"),
    ("SCIDRAFT_PLAIN_STRINGS", "vancouver"),
    ("SCIDRAFT_NAME_PARTS", "apa"),
    ("SCIDRAFT_PLAIN_ESCAPE", "apa"),
    ("SCIDRAFT_CACHED_COLLATORS", "chicago-author-date"),
]


def _list_cpu(context, style, locale: str, round_: int) -> float:
    from bibliography import processor

    entries = processor.exercise_entries(round_)
    start = time.process_time()
    context.call(
        "scidraftCslFormat",
        entries,
        style.template,
        locale,
        not style.numeric,
        not style.numeric,
        timeout_sec=60,
    )
    return (time.process_time() - start) * 1000


def measure(flag: str, style_name: str) -> tuple[float, float]:
    """Median CPU ms of a cold list with the shortcut, and without it."""
    from bibliography import csl, jsbundle, processor

    style, locale = csl.style_info(style_name), csl.DEFAULT_LOCALE
    taking, leaving = jsbundle.load(), jsbundle.load()
    try:
        leaving.eval(f"{flag} = false")
        for context in (taking, leaving):
            processor._prepare(context, style, locale)
            processor._exercise(context, style, locale)
        found = {"on": [], "off": []}
        for run in range(RUNS):
            round_ = 1000 + run  # rounds the warm-up never formatted
            found["on"].append(_list_cpu(taking, style, locale, round_))
            found["off"].append(_list_cpu(leaving, style, locale, round_))
        return statistics.median(found["on"]), statistics.median(found["off"])
    finally:
        taking.close()
        leaving.close()


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "scidraft.settings")
    import django

    django.setup()
    rows = []
    for flag, style in SHORTCUTS:
        on, off = measure(flag, style)
        rows.append(
            [flag, style, f"{off:.1f} ms", f"{on:.1f} ms", f"{(off - on) / off * 100:.0f}%"]
        )
    print(f"citeproc-js shortcuts: CPU ms of a cold list of 25 entries, median of {RUNS}")
    print(table(["shortcut", "style", "without", "with", "saved"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
