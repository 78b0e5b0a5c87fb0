"""How much memory one gunicorn worker holds: after start, at its peak under load, and once its
idle V8 contexts are closed.

Standalone: `python benchmarks/worker_memory.py`, or `make bench` for every benchmark.

A worker-like process is started with the production settings (DEBUG=0, benchmarks/_server.py's
environment) on a fresh SQLite database in a temporary directory and Redis database 11 (flushed
before and after; REDIS_DB below), as many threads as a gunicorn worker has (GUNICORN_THREADS,
gunicorn.conf.py's default 4). It loads the application and warms its V8 contexts as
gunicorn's post_worker_init does (scidraft.site.warming, the site's style: Vancouver), then its
threads render at once, round after round: notes of a few hundred distinct formulas, notes of
algorithms (pseudocode.js), and APA and Chicago author–date reference lists of LIST_ENTRIES
entries each (a synthetic .bib, keys never formatted before in the process or in Redis). The
worker then stays idle until its idle contexts are closed (SCIDRAFT_V8_IDLE_SECONDS and the
pool's sweep) and the C allocator has handed back what it can.

Figures are the process's resident set (VmRSS of /proc/<pid>/status): after start, the peak
(sampled every 20 ms, and the kernel's high-water mark VmHWM), and after idle, beside the goal
of GOAL_MB a worker after start and after idle (the peak is reported: it grows with the
citation contexts in use at once, docs/deployment.md#memory). It reports and never gates: the
exit code is 0 even when the goal is missed, so FAIL is printed where a reader cannot miss it.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import platform
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _server import production_environment  # benchmarks/ is on sys.path: the script's folder
from _table import status, table

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

REDIS_DB = 11
GOAL_MB = 300
THREADS = int(os.environ.get("GUNICORN_THREADS", "4"))
ROUNDS = 2
LIST_ENTRIES = 150  # entries of each author–date list
FORMULAS = 300  # distinct formulas of each math note
ALGORITHMS = 12  # algorithms of each pseudocode note
STYLES = ("apa", "chicago-author-date")
BIB_NAME = "bib/memory.bib"
SAMPLE_SECONDS = 0.02


def _status_kb(field: str, pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _mb(kb: int) -> float:
    return kb / 1024


# --- The worker ------------------------------------------------------------------------------


def _load_bibliography_benchmark():
    """benchmarks/bibliography.py under a private name (its file name is the app's package)."""
    path = Path(__file__).resolve().parent / "bibliography.py"
    spec = importlib.util.spec_from_file_location("_benchmark_bibliography_memory", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _math_note(round_: int, thread: int) -> str:
    lines = []
    for n in range(FORMULAS):
        k = (round_ * THREADS + thread) * FORMULAS + n
        lines.append(
            f"Let $\\sum_{{i=1}}^{{{k}}} \\frac{{x_i^{{{n % 7 + 2}}}}}{{\\sqrt{{{k} + i}}}}$ "
            f"and\n\n$$\\int_0^{{{k}}} e^{{-{n}t}} \\, \\mathrm{{d}}t = "
            f"\\begin{{pmatrix}} {k} & {n} \\\\ {n} & {k} \\end{{pmatrix}}$$\n"
        )
    return "\n".join(lines)


def _pseudocode_note(round_: int, thread: int) -> str:
    blocks = []
    for n in range(ALGORITHMS):
        k = (round_ * THREADS + thread) * ALGORITHMS + n
        steps = "\n".join(
            f"    \\State \\(x_{{{j}}} \\gets x_{{{j}}} + {k}\\) \\Comment{{step {j}}}"
            for j in range(20)
        )
        blocks.append(
            "```pseudo-algorithm\n\\begin{algorithm}\n"
            f"\\caption{{Iteration {k}}}\n\\begin{{algorithmic}}[1]\n"
            f"\\Require tolerance \\(\\tau_{{{k}}}\\)\n\\While{{\\(r \\gt \\tau\\)}}\n{steps}\n"
            "\\EndWhile\n\\Return \\(x\\)\n\\end{algorithmic}\n\\end{algorithm}\n```"
        )
    return "\n\n".join(blocks)


def _list_note(keys: list[str]) -> str:
    cites = " ".join(f"see \\cite{{{key}}}" for key in keys)
    return f'Works {cites}.\n\n{{{{< references bib="{BIB_NAME}" >}}}}\n'


class _Peak:
    """The resident set sampled in a thread of its own while the load runs."""

    def __init__(self):
        self.peak_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_kb = max(self.peak_kb, _status_kb("VmRSS"))
            time.sleep(SAMPLE_SECONDS)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _pools() -> dict[str, int]:
    from bibliography import jsbundle
    from scidraft.markup import jsengine

    return {"katex": len(jsengine._pool.every), "citations": len(jsbundle.pool.every)}


def worker() -> dict:
    """The worker's side: start, load, idle; its figures as a dict."""
    import django

    from scidraft.allocator import limit_arenas

    # As gunicorn.conf.py's post_fork does in a worker, before any thread starts.
    limit_arenas(int(os.environ.get("GUNICORN_MALLOC_ARENAS", "2")))
    django.setup()
    from django.conf import settings
    from django.urls import get_resolver

    from bibliography.formatting import ParsedBibliography
    from bibliography.parsing import parse_bibtex
    from scidraft.markup import RenderContext, render
    from scidraft.site.warming import warm_process
    from scidraft.wsgi import application  # noqa: F401 - as a worker loads it

    get_resolver().url_patterns  # noqa: B018 - the URL configuration, views imported
    warm_process()  # gunicorn.conf.py's post_worker_init, here in the foreground
    found = {"start_kb": _status_kb("VmRSS"), "start_pools": _pools()}

    bench = _load_bibliography_benchmark()
    entries = THREADS * ROUNDS * len(STYLES) * LIST_ENTRIES
    parsed = parse_bibtex(bench.synthetic_bib(entries=entries))
    # The benchmark's own data, let go before the idle phase (a worker reads entries per request).
    data = {
        "bibliography": ParsedBibliography(BIB_NAME, parsed.entries),
        "keys": [entry.key for entry in parsed.entries],
    }
    del parsed

    def context(style: str | None) -> RenderContext:
        return RenderContext(
            resolve_bibliography=lambda name: data["bibliography"] if name == BIB_NAME else None,
            citation_style=style,
        )

    def job(round_: int, thread: int) -> int:
        rendered = [render(_math_note(round_, thread), context(None))]
        rendered.append(render(_pseudocode_note(round_, thread), context(None)))
        for number, style in enumerate(STYLES):
            start = ((round_ * THREADS + thread) * len(STYLES) + number) * LIST_ENTRIES
            note = _list_note(data["keys"][start : start + LIST_ENTRIES])
            rendered.append(render(note, context(style)))
        return sum(len(result.html) for result in rendered)

    started = time.monotonic()
    with _Peak() as peak, ThreadPoolExecutor(THREADS, thread_name_prefix="request") as threads:
        for round_ in range(ROUNDS):
            list(threads.map(job, [round_] * THREADS, range(THREADS)))
    found.update(
        load_seconds=time.monotonic() - started,
        peak_kb=max(peak.peak_kb, _status_kb("VmRSS")),
        hwm_kb=_status_kb("VmHWM"),
        loaded_kb=_status_kb("VmRSS"),
        loaded_pools=_pools(),
    )

    data.clear()
    gc.collect()
    idle = settings.SCIDRAFT_V8_IDLE_SECONDS
    # The pools' sweep looks every idle/2 seconds: a context is closed at most 1.5 × idle
    # after its last use.
    deadline = time.monotonic() + 1.5 * idle + 5
    while time.monotonic() < deadline:
        time.sleep(1)
    found.update(idle_kb=_status_kb("VmRSS"), idle_pools=_pools(), idle_seconds=idle)
    return found


# --- The runner ------------------------------------------------------------------------------


def _redis(url: str):
    import redis

    return redis.Redis.from_url(url)


def measure() -> dict:
    redis_url = f"redis://127.0.0.1:6379/{REDIS_DB}"
    with tempfile.TemporaryDirectory(prefix="scidraft-memory-") as directory:
        env = production_environment(
            f"sqlite:///{directory}/memory.sqlite3",
            redis_url,
            Path(directory) / "static",
            f"memory-{secrets.token_hex(4)}",
        )
        _redis(redis_url).flushdb()
        try:
            result = subprocess.run(  # noqa: S603 - this script, fixed arguments
                [sys.executable, __file__, "--worker"],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=1800,
                check=False,
            )
        finally:
            _redis(redis_url).flushdb()
    if result.returncode != 0:
        raise RuntimeError(f"the worker failed:\n{result.stderr[-4000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def report(found: dict) -> str:
    def pools(name: str) -> str:
        counts = found[name]
        return f"KaTeX {counts['katex']}, citations {counts['citations']}"

    rows = [
        [
            "after start (warmed)",
            f"{_mb(found['start_kb']):.0f}",
            pools("start_pools"),
            status(_mb(found["start_kb"]) <= GOAL_MB),
        ],
        [
            f"peak under load ({THREADS} threads)",
            f"{_mb(found['peak_kb']):.0f}",
            pools("loaded_pools"),
            "reported",
        ],
        [
            "after the load",
            f"{_mb(found['loaded_kb']):.0f}",
            pools("loaded_pools"),
            "",
        ],
        [
            f"after {found['idle_seconds']:g} s idle",
            f"{_mb(found['idle_kb']):.0f}",
            pools("idle_pools"),
            status(_mb(found["idle_kb"]) <= GOAL_MB),
        ],
    ]
    lines = [
        f"One worker-like process, {THREADS} threads, production settings; {ROUNDS} rounds of "
        f"a math note ({FORMULAS} formulas), an algorithm note ({ALGORITHMS}) and "
        f"{' and '.join(STYLES)} lists of {LIST_ENTRIES} entries per thread; "
        f"load {found['load_seconds']:.1f} s. Goal: {GOAL_MB} MB a worker.",
        f"Kernel high-water mark (VmHWM): {_mb(found['hwm_kb']):.0f} MB. "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f}.",
        "",
        table(["phase", "RSS MB", "V8 contexts", f"≤ {GOAL_MB} MB"], rows, numeric={1}),
    ]
    return "\n".join(lines)


def main() -> None:
    print(report(measure()))


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        print(json.dumps(worker()))
    else:
        main()
