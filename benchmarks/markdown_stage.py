"""The Markdown stage, old (Python-Markdown, engine 3) and new (markdown-it-py as Goldmark,
engine 4), side by side in one run; and the longest example note rendered whole, cold and
warm, by each engine.

Standalone: `python benchmarks/markdown_stage.py`, or `make bench` for every benchmark.

The stage is timed on what it is given in a render: each body after the code, shortcode,
math, command and environment stages (prepared once, outside the timing). The old engine is
the same pipeline with the frozen old stage (benchmarks/_legacy_markdown.py) in place of the
new one. Old and new runs alternate, so a busy machine slows both alike; each figure is the
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
    pipeline,
    render,
    shortcodes,
)
from scidraft.markup.formulas import MathState  # noqa: E402
from scidraft.markup.protect_math import protect_math  # noqa: E402
from scidraft.markup.stash import Stash  # noqa: E402

try:
    import _legacy_markdown as legacy  # needs the dev dependencies Markdown, pymdown-extensions
except ImportError as error:  # pragma: no cover - reported in the table
    legacy, LEGACY_MISSING = None, str(error)
else:
    LEGACY_MISSING = ""

NOTES = ROOT.parent / "shared" / "reference" / "scidraft-exampleSite" / "content" / "notes"
DEMO = ROOT / "demo" / "content" / "notes"

STAGE_RUNS = 21
CORPUS_RUNS = 7
COLD_RUNS = 5
WARM_RUNS = 11
# The goals: the stage at least twice as fast, the longest note warm in 20 ms.
TARGET_SPEEDUP = 2.0
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


def alternate(functions: dict[str, callable], runs: int) -> dict[str, float]:
    """Median CPU milliseconds of each function, their runs interleaved."""
    samples: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(runs):
        for name, function in functions.items():
            samples[name].append(_cpu_ms(function))
    return {name: statistics.median(values) for name, values in samples.items()}


class Engine:
    """render() with the new Markdown stage, or with the old one swapped in."""

    def __init__(self, stage):
        self.stage = stage

    def render(self, source: str):
        saved = pipeline.convert.to_html
        pipeline.convert.to_html = self.stage.to_html
        try:
            return render(source)
        finally:
            pipeline.convert.to_html = saved


def whole_note(engine: Engine, source: str) -> dict[str, float]:
    """Cold (formula cache cleared) and warm renders: median wall and CPU milliseconds."""
    jsengine.start()
    cold_wall, cold_cpu = [], []
    for _ in range(COLD_RUNS):
        jsengine.tex_cache_clear()
        wall, cpu = time.perf_counter(), time.process_time()
        engine.render(source)
        cold_wall.append((time.perf_counter() - wall) * 1000)
        cold_cpu.append((time.process_time() - cpu) * 1000)
    warm_wall, warm_cpu = [], []
    for _ in range(WARM_RUNS):
        wall, cpu = time.perf_counter(), time.thread_time()
        engine.render(source)
        warm_wall.append((time.perf_counter() - wall) * 1000)
        warm_cpu.append((time.thread_time() - cpu) * 1000)
    return {
        "cold_wall": statistics.median(cold_wall),
        "cold_cpu": statistics.median(cold_cpu),
        "warm_wall": statistics.median(warm_wall),
        "warm_cpu": statistics.median(warm_cpu),
    }


def _ms(value: float | None) -> str:
    return DASH if value is None else f"{value:,.2f}"


def main(argv: list[str] | None = None) -> int:
    print("Markdown stage benchmark: engine 3 (Python-Markdown) against engine 4 (markdown-it-py)")
    print(
        f"machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), "
        f"Python {platform.python_version()}; CPU ms of this thread, medians, old and new "
        "runs interleaved"
    )
    if legacy is None:
        print(f"SKIP old engine: {LEGACY_MISSING} (install the dev dependencies: make setup)")
    print()

    examples = bodies(NOTES)
    corpus = examples or bodies(DEMO)
    corpus_name = "70 example notes" if examples else f"{len(corpus)} demo notes"
    if not examples:
        print(f"SKIP example notes: {NOTES} is absent; the demo notes stand in.")
    longest_name = max(corpus, key=lambda name: len(corpus[name]))
    inputs = {name: stage_input(body) for name, body in corpus.items()}
    old, new = (legacy, convert) if legacy else (None, convert)

    def stage(module, items):
        return lambda: [module.to_html(text, stash) for text, stash in items]

    rows, failures = [], []

    def stage_row(label: str, items, runs: int, gate: bool) -> None:
        functions = {"new": stage(new, items)}
        if old is not None:
            functions["old"] = stage(old, items)
        timed = alternate(functions, runs)
        speedup = timed["old"] / timed["new"] if "old" in timed else None
        ok = speedup is not None and speedup >= TARGET_SPEEDUP
        if gate and not ok:
            failures.append(f"{label}: {DASH if speedup is None else f'{speedup:.2f}'}×")
        rows.append(
            [
                label,
                _ms(timed.get("old")),
                _ms(timed["new"]),
                DASH if speedup is None else f"{speedup:.2f}×",
                f"≥{TARGET_SPEEDUP:g}×" if gate else DASH,
                status(ok) if gate else DASH,
            ]
        )

    stage_row(
        f"stage: longest note ({longest_name})", [inputs[longest_name]], STAGE_RUNS, gate=True
    )
    stage_row(f"stage: {corpus_name}, one after another", list(inputs.values()), CORPUS_RUNS,
              gate=False)  # fmt: skip

    engines = {"new": Engine(convert)}
    if legacy is not None:
        engines["old"] = Engine(legacy)
    body = corpus[longest_name]
    measured = {name: whole_note(engine, body) for name, engine in engines.items()}
    labels = {
        "cold_wall": "cold, wall ms",
        "cold_cpu": "cold, process CPU ms",
        "warm_wall": "warm, wall ms",
        "warm_cpu": "warm, thread CPU ms",
    }
    for key, label in labels.items():
        gate = key == "warm_cpu"
        new_value = measured["new"][key]
        old_value = measured["old"][key] if "old" in measured else None
        ok = new_value <= TARGET_WARM_CPU_MS
        if gate and not ok:
            failures.append(f"warm {new_value:.1f} ms of CPU > {TARGET_WARM_CPU_MS:g}")
        rows.append(
            [
                f"render: longest note, {label}",
                _ms(old_value),
                _ms(new_value),
                DASH if old_value is None else f"{old_value / new_value:.2f}×",
                f"≤{TARGET_WARM_CPU_MS:g} ms" if gate else DASH,
                status(ok) if gate else DASH,
            ]
        )

    print(table(["case", "old ms", "new ms", "old/new", "target", "status"], rows, {1, 2, 3}))
    print()
    print(
        "stage: convert.to_html on the stage's input (math, code and shortcodes already "
        "stashed); render: the whole pipeline, cold = formula cache cleared before each run."
    )
    if failures:
        print(f"FAIL: {'; '.join(failures)}.")
    else:
        print("PASS: the stage is at least twice as fast and the longest note renders warm "
              "within its target.")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
