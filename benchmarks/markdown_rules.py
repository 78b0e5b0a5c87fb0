"""What the Markdown stage's rules are worth in a stored render: the stage's share of whole
renders of the example and demo notes, with its rules registered on its own parser (now),
beside the same rules when they also replaced markdown-it's module globals (block rules'
loggers and the table split, process-wide), and beside markdown-it's own rules.

Standalone: `python benchmarks/markdown_rules.py`, or `make bench` for every benchmark.

Each variant runs in its own interpreter (the old module changed the library for the whole
process, so it cannot share one with the others); the variants' interpreters alternate, round
after round, so a busy machine slows them alike. In each, the stage is convert.to_html on
what it is given in a render (benchmarks/markdown_stage.py prepares it), and the render is
scidraft.markup.render of the note, warm (formulas cached), both in CPU milliseconds of the
thread, summed over the corpus: the median of a child's runs, then the median over rounds.
The old module is read from git (OLD_COMMIT); without that history its column is skipped.
It reports and never gates.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

from _table import table  # benchmarks/ is on sys.path: the script's folder

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The last commit whose fast_rules.py replaced markdown-it's module globals.
OLD_COMMIT = "aea1c03ccae3cecec71b43009af83b8030a7d4c2"
ROUNDS = 3
RUNS = 7
DASH = "—"
VARIANTS = {
    "patched": "rules on the parser + library globals replaced (before)",
    "own": "rules on the parser only (now)",
    "own-quiet": "now, logging.getLogger('markdown_it') at CRITICAL",
    "library": "markdown-it's own rules (no fast paths)",
}


def _shared() -> Path:
    # ../shared beside the checkout, or beside the folder that holds it (a git worktree).
    for path in (ROOT.parent / "shared", ROOT.parent.parent / "shared"):
        if path.is_dir():
            return path
    return ROOT.parent / "shared"


CORPORA = {
    "example notes": _shared() / "reference" / "scidraft-exampleSite" / "content" / "notes",
    "demo notes": ROOT / "demo" / "content" / "notes",
}


# --- One variant, in a child interpreter ---------------------------------------------------


def _cpu_ms(function) -> float:
    start = time.thread_time()
    function()
    return (time.thread_time() - start) * 1000


def child(variant: str, old_module: str | None) -> dict:
    """Medians for each corpus of this variant: stage and whole-render CPU ms."""
    from markdown_stage import bodies, stage_input

    from scidraft.markup import convert, jsengine, render

    if variant == "patched":
        # Importing the old module is what replaced the library's globals.
        spec = importlib.util.spec_from_file_location(
            "scidraft.markup._patched_fast_rules", old_module
        )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        convert.fast_rules = module  # new_parser() installs the old module's rules
    elif variant == "own-quiet":
        logging.getLogger("markdown_it").setLevel(logging.CRITICAL)
    elif variant == "library":
        convert._local.parser = convert.new_parser(fast_paths=False)
    jsengine.start()
    out = {}
    for corpus, folder in CORPORA.items():
        notes = bodies(folder)
        if not notes:
            continue
        inputs = [stage_input(body) for body in notes.values()]
        for body in notes.values():  # formulas cached, parsers built
            render(body)

        def stage(inputs=inputs):
            for text, stash in inputs:
                convert.to_html(text, stash)

        def renders(notes=notes):
            for body in notes.values():
                render(body)

        stage_ms, render_ms = [], []
        for _ in range(RUNS):
            stage_ms.append(_cpu_ms(stage))
            render_ms.append(_cpu_ms(renders))
        out[corpus] = {
            "notes": len(notes),
            "stage": statistics.median(stage_ms),
            "render": statistics.median(render_ms),
        }
    return out


def _logger_call_ns() -> float:
    """One disabled LOGGER.debug call as markdown-it's block rules make it, in nanoseconds."""
    logger = logging.getLogger("markdown_it.rules_block.code")
    runs = 200_000
    seconds = timeit.timeit(
        lambda: logger.debug("entering code: %s, %s, %s, %s", None, 0, 1, False), number=runs
    )
    empty = timeit.timeit(lambda: None, number=runs)
    return (seconds - empty) / runs * 1e9


def _logger_calls() -> dict:
    """markdown-it's block-rule LOGGER.debug calls in one pass of the stage over each corpus,
    counted by a logging handler (public logging API) at DEBUG in this process only."""
    from markdown_stage import bodies, stage_input

    from scidraft.markup import convert

    counted = {"calls": 0}

    class Count(logging.Handler):
        def emit(self, record):
            counted["calls"] += 1

    parent = logging.getLogger("markdown_it")
    handler = Count()
    parent.addHandler(handler)
    parent.setLevel(logging.DEBUG)
    out = {}
    try:
        for corpus, folder in CORPORA.items():
            notes = bodies(folder)
            if not notes:
                continue
            counted["calls"] = 0
            for body in notes.values():
                text, stash = stage_input(body)
                convert.to_html(text, stash)
            out[corpus] = counted["calls"]
    finally:
        parent.removeHandler(handler)
        parent.setLevel(logging.NOTSET)
    return out


# --- The comparison ------------------------------------------------------------------------


def _old_module(folder: Path) -> Path | None:
    done = subprocess.run(  # noqa: S603 - git on this repository, fixed arguments
        ["git", "-C", str(ROOT), "show", f"{OLD_COMMIT}:scidraft/markup/fast_rules.py"],  # noqa: S607
        capture_output=True,
        text=True,
    )
    if done.returncode:
        return None
    path = folder / "patched_fast_rules.py"
    path.write_text(done.stdout, encoding="utf-8")
    return path


def _run_child(variant: str, old_module: Path | None) -> dict:
    command = [sys.executable, __file__, "--child", variant]
    if old_module:
        command.append(str(old_module))
    done = subprocess.run(  # noqa: S603 - our own interpreter and script
        command, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _ms(value: float | None) -> str:
    return DASH if value is None else f"{value:,.1f}"


def main(argv: list[str] | None = None) -> int:
    print("Markdown rules benchmark: the stage's share of stored renders, per way of installing")
    print(
        f"machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), "
        f"Python {platform.python_version()}; thread CPU ms summed over each corpus, warm "
        f"renders; median of {RUNS} runs in a child, then of {ROUNDS} rounds, children "
        "interleaved"
    )
    with tempfile.TemporaryDirectory() as folder:
        old_module = _old_module(Path(folder))
        variants = [name for name in VARIANTS if name != "patched" or old_module]
        if not old_module:
            print(f"SKIP before: {OLD_COMMIT[:7]} is not in this clone's history")
        samples: dict = {name: [] for name in variants}
        for _ in range(ROUNDS):
            for name in variants:
                samples[name].append(_run_child(name, old_module))
    print()
    rows = []
    for corpus in CORPORA:
        for name in variants:
            runs = [sample[corpus] for sample in samples[name] if corpus in sample]
            if not runs:
                continue
            stage = statistics.median(run["stage"] for run in runs)
            whole = statistics.median(run["render"] for run in runs)
            rows.append(
                [
                    f"{corpus} ({runs[0]['notes']})",
                    VARIANTS[name],
                    _ms(stage),
                    _ms(whole),
                    f"{stage / whole:.1%}",
                ]
            )
    print(table(["corpus", "Markdown rules", "stage ms", "render ms", "share"], rows, {2, 3, 4}))
    print()
    call_ns = _logger_call_ns()
    for corpus, calls in _logger_calls().items():
        print(
            f"{corpus}: markdown-it's block rules call LOGGER.debug {calls:,} times a pass "
            f"of the stage; a disabled call costs {call_ns:,.0f} ns here: "
            f"{calls * call_ns / 1e6:,.2f} ms a pass"
        )
    print()
    print(
        "stage: convert.to_html on the stage's input (math, code and shortcodes already "
        "stashed); render: scidraft.markup.render of each note, formulas cached; share: "
        "stage / render."
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)))
        sys.exit(0)
    sys.exit(main())
