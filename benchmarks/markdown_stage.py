"""The Markdown stage (markdown-it-py as Goldmark) on the example notes, and the longest
example note rendered whole, cold and warm.

Standalone: `python benchmarks/markdown_stage.py`, or `make bench` for every benchmark.

The stage is timed on what it is given in a render: each body after the code, shortcode,
math, command and environment stages (prepared once, outside the timing). Each figure is the
median of the runs, in milliseconds of this thread's CPU time (the wall clock beside the whole
renders, whose cold runs wait on KaTeX in V8's threads). It reports and never gates.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from pathlib import Path

from _table import status, table  # benchmarks/ is on sys.path: the script's folder

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hugosite.reading import split_front_matter  # noqa: E402
from scidraft.markup import (  # noqa: E402
    RenderContext,
    code,
    commands,
    convert,
    deep_blocks,
    environments,
    jsengine,
    render,
    shortcodes,
)
from scidraft.markup.formulas import MathState  # noqa: E402
from scidraft.markup.protect_math import protect_math  # noqa: E402
from scidraft.markup.stash import Stash  # noqa: E402

NOTES = ROOT.parent / "shared" / "reference" / "scidraft-exampleSite" / "content" / "notes"
DEMO = ROOT / "demo" / "content" / "notes"

STAGE_RUNS = 21
CORPUS_RUNS = 7
COLD_RUNS = 5
WARM_RUNS = 11
# The longest example note renders warm within this much CPU time.
TARGET_WARM_CPU_MS = 20.0
DASH = "—"


def bodies(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    return {
        path.name: split_front_matter(path.read_text(encoding="utf-8")).body
        for path in sorted(folder.glob("*.md"))
    }


def stage_input(source: str) -> tuple[str, Stash]:
    """The text the Markdown stage receives for `source`, and the stash it refers to."""
    context, stash, warnings = RenderContext(), Stash(), []
    text = code.protect_code(source, stash, warnings, {})
    text = shortcodes.process(text, stash, context, warnings, shortcodes.ShortcodeState())
    text = protect_math(text, stash, MathState(), warnings)
    text = commands.protect_references(text, stash)
    text = commands.text_styles(text, stash)
    text = environments.process(text, stash, context, warnings, environments.EnvironmentState())
    return deep_blocks.refuse_deep_blocks(text, stash, warnings), stash


def _cpu_ms(function) -> float:
    start = time.thread_time()
    function()
    return (time.thread_time() - start) * 1000


def median_ms(function, runs: int) -> float:
    """Median CPU milliseconds of `function` over `runs` runs."""
    return statistics.median(_cpu_ms(function) for _ in range(runs))


def whole_note(source: str) -> dict[str, float]:
    """Cold (formula cache cleared) and warm renders: median wall and CPU milliseconds."""
    jsengine.start()
    cold_wall, cold_cpu = [], []
    for _ in range(COLD_RUNS):
        jsengine.tex_cache_clear()
        wall, cpu = time.perf_counter(), time.process_time()
        render(source)
        cold_wall.append((time.perf_counter() - wall) * 1000)
        cold_cpu.append((time.process_time() - cpu) * 1000)
    warm_wall, warm_cpu = [], []
    for _ in range(WARM_RUNS):
        wall, cpu = time.perf_counter(), time.thread_time()
        render(source)
        warm_wall.append((time.perf_counter() - wall) * 1000)
        warm_cpu.append((time.thread_time() - cpu) * 1000)
    return {
        "cold_wall": statistics.median(cold_wall),
        "cold_cpu": statistics.median(cold_cpu),
        "warm_wall": statistics.median(warm_wall),
        "warm_cpu": statistics.median(warm_cpu),
    }


def main(argv: list[str] | None = None) -> int:
    print("Markdown stage benchmark: markdown-it-py as Goldmark")
    print(
        f"machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), "
        f"Python {platform.python_version()}; CPU ms of this thread, medians"
    )
    print()

    examples = bodies(NOTES)
    corpus = examples or bodies(DEMO)
    corpus_name = "70 example notes" if examples else f"{len(corpus)} demo notes"
    if not examples:
        print(f"SKIP example notes: {NOTES} is absent; the demo notes stand in.")
    longest_name = max(corpus, key=lambda name: len(corpus[name]))
    inputs = {name: stage_input(body) for name, body in corpus.items()}

    def stage(items):
        return lambda: [convert.to_html(text, stash) for text, stash in items]

    rows = [
        [f"stage: longest note ({longest_name})",
         f"{median_ms(stage([inputs[longest_name]]), STAGE_RUNS):,.2f}", DASH, DASH],
        [f"stage: {corpus_name}, one after another",
         f"{median_ms(stage(list(inputs.values())), CORPUS_RUNS):,.2f}", DASH, DASH],
    ]  # fmt: skip
    measured = whole_note(corpus[longest_name])
    labels = {
        "cold_wall": "cold, wall ms",
        "cold_cpu": "cold, process CPU ms",
        "warm_wall": "warm, wall ms",
        "warm_cpu": "warm, thread CPU ms",
    }
    ok = measured["warm_cpu"] <= TARGET_WARM_CPU_MS
    for key, label in labels.items():
        gate = key == "warm_cpu"
        rows.append(
            [
                f"render: longest note, {label}",
                f"{measured[key]:,.2f}",
                f"≤{TARGET_WARM_CPU_MS:g} ms" if gate else DASH,
                status(ok) if gate else DASH,
            ]
        )

    print(table(["case", "ms", "target", "status"], rows, {1}))
    print()
    print(
        "stage: convert.to_html on the stage's input (math, code and shortcodes already "
        "stashed); render: the whole pipeline, cold = formula cache cleared before each run."
    )
    if ok:
        print("PASS: the longest note renders warm within its target.")
    else:
        print(f"FAIL: warm {measured['warm_cpu']:.1f} ms of CPU > {TARGET_WARM_CPU_MS:g}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
