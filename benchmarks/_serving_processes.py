"""The serving benchmark's processes: its PostgreSQL database and Redis database, manage.py,
one gunicorn pinned to a core, and wrk pinned to another, for benchmarks/serving.py; the
database, Redis, manage.py and loopback server parts serve the scale and page-cost benchmarks
too (a helper module: the benchmark runner skips `_` files)."""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from _server import production_environment  # benchmarks/ is on sys.path

ROOT = Path(__file__).resolve().parents[1]
# The project first: benchmarks/ (the script's folder, first on sys.path) has modules named
# after the project's apps (bibliography.py), which Django must not import in their place.
if str(ROOT) not in sys.path[:1]:
    sys.path.insert(0, str(ROOT))

VENV_BIN = ROOT / ".venv" / "bin"
GUNICORN = VENV_BIN / "gunicorn" if (VENV_BIN / "gunicorn").exists() else None
PYTHON = sys.executable

REDIS_DB = 9
CONNECTIONS = 16


# --- Services --------------------------------------------------------------------------------


def postgres_admin_url() -> str:
    """The server to create the benchmark database on: DATABASE_URL's when it is PostgreSQL."""
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        return url
    return "postgres://postgres@127.0.0.1:5432/postgres"


def with_database(url: str, name: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))


def bench_redis_url() -> str:
    base = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    parts = urllib.parse.urlsplit(base)
    return urllib.parse.urlunsplit(parts._replace(path=f"/{REDIS_DB}"))


def admin_sql(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(with_database(url, "postgres"), autocommit=True, connect_timeout=5) as c:
        c.execute(sql)


def flush_redis(url: str) -> None:
    import redis

    redis.Redis.from_url(url, socket_timeout=5).flushdb()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _pinned(core: int, command: list[str]) -> list[str]:
    taskset = shutil.which("taskset")
    if taskset and len(os.sched_getaffinity(0)) > core:
        return [taskset, "-c", str(core), *command]
    return command


def manage(env: dict, *args: str, timeout: float = 600) -> None:
    subprocess.run(  # noqa: S603 - our interpreter, manage.py, fixed arguments
        [PYTHON, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=timeout,
        stdout=subprocess.DEVNULL,
    )


def machine(load: bool = False) -> str:
    """The machine line a benchmark prints first; `load` adds the load averages."""
    line = (
        f"machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), "
        f"Python {platform.python_version()} ({platform.machine()})"
    )
    if load:
        averages = os.getloadavg()
        line += f", load average {averages[0]:.1f} {averages[1]:.1f} {averages[2]:.1f}"
    return line


def site_set_up(
    admin_url: str, name: str, redis_url: str, work: Path, cache_prefix: str
) -> tuple[dict, float]:
    """The production settings on database `name` of the server at `admin_url`, `redis_url`,
    static files collected into work/static; migrate, seed_demo and collectstatic run with
    them: (the environment, the seconds they took)."""
    env = production_environment(
        with_database(admin_url, name), redis_url, work / "static", cache_prefix
    )
    began = time.perf_counter()
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    manage(env, "collectstatic", "--noinput")
    return env, time.perf_counter() - began


def clean_up(admin_url: str, name: str, redis_url: str, work: Path) -> None:
    """On the way out: Redis flushed (best effort), the database dropped, `work` removed."""
    try:
        flush_redis(redis_url)
    except Exception:  # noqa: BLE001 - best effort on the way out
        print(f"warning: could not flush {redis_url}", file=sys.stderr)
    admin_sql(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    shutil.rmtree(work, ignore_errors=True)


def http_get(url: str, headers: dict | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers or {})  # noqa: S310 - loopback http
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


class LoopbackServer:
    """A server process on a free loopback port, its output in `log`; always stopped by
    stop(). Subclasses start it (start()) with their command."""

    WAIT_S = 60.0  # how long wait() gives it to answer, unless told
    POLL_S = 0.2
    STOP_S = 15.0  # how long stop() gives it to end before it is killed

    def __init__(self, log: Path):
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log

    def start(self, command: list[str], env: dict, cwd: Path = ROOT) -> None:
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(  # noqa: S603 - the venv's gunicorn
                command, cwd=cwd, env=env, stdout=out, stderr=out
            )

    def wait(self, path: str = "/", timeout: float | None = None) -> None:
        timeout = self.WAIT_S if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited ({self.process.returncode}); see {self.log}")
            try:
                status, _, _ = http_get(self.base + path)
                if status < 500:
                    return
            except OSError:
                pass
            time.sleep(self.POLL_S)
        raise RuntimeError(f"gunicorn did not answer within {timeout:g} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=self.STOP_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


class Gunicorn(LoopbackServer):
    """One gunicorn on loopback, pinned to core 0; always stopped by stop()."""

    def __init__(self, env: dict, log: Path):
        super().__init__(log)
        self.command = [
            str(GUNICORN),
            "scidraft.wsgi",
            "-k",
            "gthread",
            "--workers",
            "1",
            "--threads",
            "4",
            "-b",
            f"127.0.0.1:{self.port}",
        ]
        env = {
            **env,
            "WEB_CONCURRENCY": "1",
            "GUNICORN_THREADS": "4",
            "GUNICORN_BIND": f"127.0.0.1:{self.port}",
            # A worker recycled mid-run would measure its start-up, not serving.
            "GUNICORN_MAX_REQUESTS": "0",
        }
        self.start(_pinned(0, self.command), env)


# --- wrk -------------------------------------------------------------------------------------


def ensure_wrk() -> tuple[str | None, str]:
    """wrk's path, installing Debian's package if missing; (None, why) when it cannot."""
    found = shutil.which("wrk")
    if found:
        return found, ""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return None, "wrk is not installed and apt-get needs root"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-qq", "wrk"]
    for command in (install, ["apt-get", "update", "-qq"], install):
        if shutil.which("wrk"):
            break
        subprocess.run(command, env=env, capture_output=True, timeout=600)  # noqa: S603
    found = shutil.which("wrk")
    return (found, "") if found else (None, "`apt-get install -y -qq wrk` failed")


_UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(number) * _UNIT[unit]


def parse_wrk(output: str) -> dict:
    """requests/s, p50 and p99 in ms, and errors (non-2xx/3xx plus socket errors)."""
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1))
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1))
    errors = 0
    if match := re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output):
        errors += int(match.group(1))
    if match := re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    ):
        errors += sum(int(value) for value in match.groups())
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    return {"rps": rps, "p50": p50, "p99": p99, "errors": errors, "requests": requests}


def wrk(wrk_path: str, case: dict, seconds: int) -> dict:
    command = [wrk_path, "-t1", f"-c{CONNECTIONS}", f"-d{seconds}s", "--latency"]
    for name, value in case.get("headers", {}).items():
        command += ["-H", f"{name}: {value}"]
    command.append(case["url"])
    done = subprocess.run(  # noqa: S603 - wrk with fixed arguments
        _pinned(1, command), capture_output=True, text=True, timeout=seconds + 60, check=True
    )
    return parse_wrk(done.stdout)
