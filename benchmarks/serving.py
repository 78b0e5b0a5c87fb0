"""How fast one gunicorn serves SciDraft pages next to a static file, and queries per page.

Standalone: `python benchmarks/serving.py`, or `make bench` for every benchmark. (Not named
http.py: a script's folder comes first on sys.path, so benchmarks/http.py would shadow the
standard library's `http` for every script in this folder.)

It creates a fresh PostgreSQL database and uses Redis database 9 (flushed before and after),
runs migrate, seed_demo and collectstatic with the production settings (DEBUG=0), and starts
one gunicorn (gthread, 1 worker, 4 threads) pinned to core 0. wrk, pinned to core 1, loads:
1. the cached heaviest demo note, 2. the cached feed, 3. a 304 revalidation, 4. an uncached
render of the same note (each request carries a session cookie, which the page cache never
answers; a query string no longer makes a render: the page cache drops parameters a page does
not read), 5. a whitenoise static file of the
same size as that note page. Then, in a child interpreter started with the same environment
(another benchmark may already have set Django up in this process), it counts queries per page
and times uncached feed renders at 10 / 1,000 / 10,000 notes seeded with bulk_create.

It reports and never gates: the exit code is 0 even when a target fails, so FAIL is printed
where a reader cannot miss it. Processes and the database are removed on the way out.

Its parts beside it (helpers, which the runner skips): _serving_processes.py (the database,
Redis, gunicorn and wrk) and _serving_children.py (what the child interpreters measure).
"""

from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

from _serving_children import FEED_RENDERS, child_probe, child_queries  # benchmarks/ on sys.path
from _serving_processes import (
    CONNECTIONS,
    GUNICORN,
    PYTHON,
    VENV_BIN,
    Gunicorn,
    admin_sql,
    bench_redis_url,
    clean_up,
    ensure_wrk,
    flush_redis,
    http_get,
    machine,
    postgres_admin_url,
    site_set_up,
    wrk,
)
from _table import status, table, verdict

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WARMUP_S = 3
RUN_S = 10
RUNS = 3
# Targets from the issue.
TARGET_RATIO = 0.9
TARGET_FEED_MS = 50.0

DASH = "—"
# A session cookie (of no session): the page cache never answers such a request, so the note
# is rendered every time, as for a reader the cache cannot serve.
UNCACHED = {"Cookie": "sessionid=benchmark-no-such-session"}


def _child(env: dict, mode: str, result: Path, *extra: str, timeout: float = 900) -> dict:
    """Run this file in a new interpreter (Django set up there with `env`); return its JSON."""
    subprocess.run(  # noqa: S603 - our interpreter and this file
        [PYTHON, str(Path(__file__).resolve()), "--child", mode, str(result), *extra],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=timeout,
        stdout=subprocess.DEVNULL,
    )
    return json.loads(result.read_text())


# --- Reporting -------------------------------------------------------------------------------


def _table(rows: list[list[str]]) -> str:
    return table(
        ["case", "req/s", "p50 ms", "p99 ms", "errors", "queries", "target", "status"],
        rows,
        {1, 2, 3, 4, 5},
    )


def http_rows(wrk_path: str, server: Gunicorn, heaviest: str, static_name: str):
    """The five wrk cases: (rows, failures, notes)."""
    note = f"/notes/{heaviest}/"
    note_status, headers, body = http_get(server.base + note)
    etag = headers.get("ETag")
    static_path = f"/static/{static_name}"
    _, static_headers, static_body = http_get(server.base + static_path)
    http_get(server.base + "/")
    _, feed_headers, _ = http_get(server.base + "/")
    _, note_headers, _ = http_get(server.base + note)
    _, fresh_headers, _ = http_get(server.base + note, UNCACHED)
    not_modified, _, _ = http_get(server.base + note, {"If-None-Match": etag or ""})
    checks = [
        f"note page {len(body):,} bytes, static file {len(static_body):,} bytes "
        f"(static Cache-Control: {static_headers.get('Cache-Control', DASH)})",
        f"X-Cache on a second request: note {note_headers.get('X-Cache')}, feed "
        f"{feed_headers.get('X-Cache')}; with a session cookie: "
        f"{fresh_headers.get('X-Cache', 'not cached')}; "
        f"If-None-Match answered {not_modified}",
    ]
    cases = [
        {"name": f"1. cached note page ({heaviest})", "path": note},
        {"name": "2. cached feed page /", "path": "/"},
        {"name": "3. 304 revalidation (note, If-None-Match)", "path": note},
        {"name": "4. uncached note render (session cookie)", "path": note, "headers": UNCACHED},
        {"name": f"5. static file ({len(static_body):,} B)", "path": static_path},
    ]
    cases[2]["headers"] = {"If-None-Match": etag}
    for case in cases:
        case["url"] = server.base + case["path"]
        case["runs"] = []
    for case in cases:
        wrk(wrk_path, case, WARMUP_S)
    for _ in range(RUNS):  # interleaved, so drift on the machine spreads over every case
        for case in cases:
            case["runs"].append(wrk(wrk_path, case, RUN_S))

    rows, failures = [], []
    medians = {}
    for case in cases:
        runs = case["runs"]
        median = {key: statistics.median(run[key] for run in runs) for key in ("rps", "p50", "p99")}
        errors = sum(run["errors"] for run in runs)
        medians[case["name"][0]] = median
        if errors:
            failures.append(f"{case['name']}: {errors} errors")
        rows.append(
            [
                case["name"],
                f"{median['rps']:,.0f}",
                f"{median['p50']:.2f}",
                f"{median['p99']:.2f}",
                str(errors),
                DASH,
                "0 errors",
                status(not errors),
            ]
        )
    ratio = medians["1"]["rps"] / medians["5"]["rps"]
    if ratio < TARGET_RATIO:
        failures.append(f"ratio (1)/(5) {ratio:.2f} < {TARGET_RATIO}")
    rows.append(
        [
            "ratio req/s (1) cached note / (5) static file",
            f"{ratio:.2f}",
            DASH,
            DASH,
            DASH,
            DASH,
            f">= {TARGET_RATIO}",
            status(ratio >= TARGET_RATIO),
        ]
    )
    if note_status != 200 or etag is None:
        failures.append(f"note page answered {note_status} without an ETag")
    return rows, failures, checks


def query_rows(report: dict) -> tuple[list[list[str]], list[str]]:
    rows, failures = [], []
    sizes = report["sizes"]
    label = " / ".join(f"{entry['notes']:,}" for entry in sizes)
    for name in report["pages"]:
        counts = [entry["queries"][name] for entry in sizes]
        statuses = {entry["statuses"][name] for entry in sizes}
        ok = len(set(counts)) == 1 and statuses == {200}
        if not ok:
            failures.append(f"queries for {name}: {counts} (statuses {sorted(statuses)})")
        rows.append(
            [
                f"queries, {name} at {label} notes",
                DASH,
                DASH,
                DASH,
                DASH,
                " / ".join(map(str, counts)),
                "constant",
                status(ok),
            ]
        )
    for entry in sizes:
        last = entry is sizes[-1]
        ok = entry["feed_p50_ms"] < TARGET_FEED_MS
        if last and not ok:
            failures.append(f"uncached feed {entry['feed_p50_ms']:.1f} ms at {entry['notes']:,}")
        rows.append(
            [
                f"uncached feed page / at {entry['notes']:,} notes (Django Client)",
                DASH,
                f"{entry['feed_p50_ms']:.2f}",
                DASH,
                DASH,
                str(entry["queries"]["feed page 1"]),
                f"< {TARGET_FEED_MS:g} ms" if last else DASH,
                status(ok) if last else DASH,
            ]
        )
    return rows, failures


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    print("Serving benchmark (one gunicorn, production settings, PostgreSQL + Redis)")
    print(machine())
    admin_url = postgres_admin_url()
    redis_url = bench_redis_url()
    name = f"scidraft_bench_{os.getpid()}_{secrets.token_hex(3)}"
    try:
        admin_sql(admin_url, f'CREATE DATABASE "{name}"')
        flush_redis(redis_url)
    except Exception as error:  # noqa: BLE001 - report and skip, never crash the bench run
        print(f"SKIP: PostgreSQL or Redis unavailable ({type(error).__name__}: {error}).")
        return 0
    if GUNICORN is None:
        print(f"SKIP: {VENV_BIN / 'gunicorn'} is missing (make setup).")
        return 0

    server = None
    work = Path(tempfile.mkdtemp(prefix="scidraft-bench-serving-"))
    rows: list[list[str]] = []
    failures: list[str] = []
    lines: list[str] = []
    try:
        env, setup_s = site_set_up(admin_url, name, redis_url, work, "bench")
        lines.append(
            f"setup: migrate, seed_demo, collectstatic in {setup_s:.0f} s; "
            f"database {name}, Redis {redis_url}"
        )
        static_name = "bench/heaviest-note.html"
        probe = _child(env, "probe", work / "probe.json", str(work / "static" / static_name))
        heaviest = probe["heaviest"]
        flush_redis(redis_url)

        wrk_path, why = ensure_wrk()
        if wrk_path is None:
            print(f"SKIP wrk part: {why}; the request-rate rows are missing.")
        else:
            version = subprocess.run(  # noqa: S603
                [wrk_path, "-v"], capture_output=True, text=True, timeout=10
            )
            server = Gunicorn(env, work / "gunicorn.log")
            server.wait(f"/static/{static_name}")
            lines.append(
                f"server: taskset -c 0 {' '.join(server.command[:1] + server.command[1:])} "
                f"(gunicorn.conf.py {'read' if (ROOT / 'gunicorn.conf.py').exists() else 'absent'})"
            )
            lines.append(
                f"load: taskset -c 1 wrk {(version.stdout + version.stderr).split()[1]} "
                f"-t1 -c{CONNECTIONS} --latency; {WARMUP_S} s warm-up per case, then {RUNS} "
                f"interleaved runs of {RUN_S} s; medians; errors summed over the runs"
            )
            http, problems, checks = http_rows(wrk_path, server, heaviest, static_name)
            rows += http
            failures += problems
            lines += checks
            server.stop()
            server = None

        report = _child(env, "queries", work / "queries.json", heaviest)
        lines.append(
            f"synthetic notes: bulk_create copies of {report['source']} "
            f"({report['source_chars']:,} chars of HTML), tag page /tags/{report['tag']}/; "
            "seeding took "
            + ", ".join(
                f"{entry['seed_s']:.1f} s to {entry['notes']:,}" for entry in report["sizes"][1:]
            )
            + f"; page cache cleared before each request; feed p50 of {FEED_RENDERS} renders"
        )
        more_rows, more_failures = query_rows(report)
        rows += more_rows
        failures += more_failures
    except Exception as error:  # noqa: BLE001 - report it; the exit code stays 0
        traceback.print_exc()
        failures.append(f"the benchmark crashed ({type(error).__name__}: {error})")
    finally:
        if server is not None:
            server.stop()
        clean_up(admin_url, name, redis_url, work)

    for line in lines:
        print(line)
    print()
    print(_table(rows))
    print()
    print(verdict(failures, "every serving target is met."))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        mode, result = sys.argv[2], Path(sys.argv[3])
        if mode == "probe":
            child_probe(result, Path(sys.argv[4]))
        else:
            child_queries(result, sys.argv[4])
        sys.exit(0)
    sys.exit(main())
