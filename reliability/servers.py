"""The processes `make reliability` runs and breaks: its own Redis, PostgreSQL and gunicorn.

Each listens on loopback only, on ports of its own (Redis 6391, PostgreSQL 5491, gunicorn from
8350), with its files in the run's temporary folder, so stopping and starting them never
touches the machine's shared services. PostgreSQL refuses to run as root: as root, its
commands run as the `postgres` user (runuser).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = ROOT / ".venv" / "bin"

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
PG_BIN = Path(
    next(
        (
            str(Path(found).resolve().parent)
            for found in (shutil.which("initdb"), "/usr/local/bin/initdb")
            if found and Path(found).exists()
        ),
        "/usr/lib/postgresql/15/bin",
    )
)


def wait_for_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout:g} s")


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        # As the servers bind: connections of an earlier run still in TIME_WAIT do not count.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class RedisServer:
    """redis-server without persistence: a restart comes back empty, as after a crash. Capped
    at `maxmemory` with `policy`, as docker-compose.yml runs it (256mb, allkeys-lru)."""

    def __init__(self, port: int, work: Path, maxmemory: str = "256mb",
                 policy: str = "allkeys-lru"):  # fmt: skip
        self.port = port
        self.work = work
        self.maxmemory = maxmemory
        self.policy = policy
        self.process: subprocess.Popen | None = None
        self.url = f"redis://127.0.0.1:{port}/0"

    def start(self) -> None:
        log = (self.work / "redis.log").open("ab")
        self.process = subprocess.Popen(  # noqa: S603 - Debian's redis-server, fixed arguments
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.work), "--protected-mode", "yes",
             "--maxmemory", self.maxmemory, "--maxmemory-policy", self.policy],
            stdout=log, stderr=log,
        )  # fmt: skip
        wait_for_port(self.port, 10)

    def client(self):
        import redis

        return redis.Redis.from_url(self.url, socket_timeout=5)

    def memory(self) -> dict[str, int | str]:
        """used_memory, maxmemory and its policy, the keys held and evicted so far."""
        client = self.client()
        memory, stats = client.info("memory"), client.info("stats")
        return {
            "used_memory": int(memory["used_memory"]),
            "maxmemory": int(memory["maxmemory"]),
            "policy": str(memory["maxmemory_policy"]),
            "keys": int(client.dbsize()),
            "evicted_keys": int(stats["evicted_keys"]),
        }

    def configure(self, **values: str) -> None:
        """CONFIG SET each value (maxmemory, maxmemory-policy…) on the running server."""
        client = self.client()
        for name, value in values.items():
            client.config_set(name.replace("_", "-"), value)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None

    def keys(self) -> list[str]:
        return [key.decode() for key in self.client().scan_iter(count=1000)]


class PostgresCluster:
    """A throwaway cluster (initdb) in the run's folder, trust authentication on loopback."""

    def __init__(self, port: int, work: Path):
        self.port = port
        folder = work / "postgres"
        self.data = folder / "data"
        self.sockets = folder
        self.log = folder / "postgres.log"
        self.url = f"postgres://postgres@127.0.0.1:{port}"
        self.as_postgres = os.geteuid() == 0
        folder.mkdir(parents=True, exist_ok=True)
        if self.as_postgres:
            work.chmod(0o711)  # postgres must reach its folder inside ours
            entry = pwd.getpwnam("postgres")
            os.chown(folder, entry.pw_uid, entry.pw_gid)

    def _run(self, *command: str, timeout: float = 60) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_postgres else []
        subprocess.run(  # noqa: S603 - PostgreSQL's own tools, fixed arguments
            [*prefix, *command], check=True, timeout=timeout, stdout=subprocess.DEVNULL
        )

    def init(self) -> None:
        self._run(
            str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
            "-E", "UTF8", "--no-sync", "--locale=C",
        )  # fmt: skip

    def start(self) -> None:
        # fsync off: the run needs a database that stops and starts, not one that survives a
        # power cut; it keeps the machine's shared disk out of the measurements.
        options = (
            f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.log),
            "-w", "-t", "60", "start",
        )  # fmt: skip

    def stop(self) -> None:
        # fast: active transactions are rolled back and clients disconnected, as in a crash
        # of the database host from the application's point of view.
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(f"{self.url}/postgres", autocommit=True, connect_timeout=5) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return f"{self.url}/{name}"


def answering(process: subprocess.Popen, name: str, url: str, log: Path, timeout: float) -> None:
    """Until the server at `url` answers 200; an error when its process exits or time runs
    out (its log says why)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited ({process.returncode}); see {log}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{name} did not answer {url} within {timeout:g} s")


def terminated(process: subprocess.Popen) -> None:
    """Stop a server as an orchestrator does: SIGTERM, then SIGKILL after 20 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


class Gunicorn:
    """The app as production runs it: gunicorn with gunicorn.conf.py, on loopback."""

    def __init__(self, env: dict, port: int, log: Path, workers: int = 2, threads: int = 8,
                 niceness: int = 0):  # fmt: skip
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        env = {
            **env,
            "WEB_CONCURRENCY": str(workers),
            "GUNICORN_THREADS": str(threads),
            "GUNICORN_BIND": f"127.0.0.1:{port}",
            "GUNICORN_MAX_REQUESTS": "0",
            "GUNICORN_ACCESS_LOG": "/dev/null",
        }
        self.log = log
        with log.open("ab") as out:
            self.process = subprocess.Popen(  # noqa: S603 - the venv's gunicorn
                [str(VENV_BIN / "gunicorn"), "scidraft.wsgi", "-c", str(ROOT / "gunicorn.conf.py")],
                cwd=ROOT, env=env, stdout=out, stderr=out,
                preexec_fn=(lambda: os.nice(niceness)) if niceness else None,  # noqa: PLW1509
            )  # fmt: skip

    def wait(self, path: str = "/healthz", timeout: float = 60) -> None:
        answering(self.process, "gunicorn", self.base + path, self.log, timeout)

    def stop(self) -> None:
        terminated(self.process)


class Daphne:
    """The live editing socket as production runs it (docker-compose.yml's service "live"):
    daphne over scidraft.asgi, on loopback. kill() is SIGKILL, a crash: nothing is flushed."""

    def __init__(self, env: dict, port: int, log: Path):
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.url = f"ws://127.0.0.1:{port}"
        self.log = log
        self.env = env
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(  # noqa: S603 - the venv's daphne
                [str(VENV_BIN / "daphne"), "-b", "127.0.0.1", "-p", str(self.port),
                 "scidraft.asgi:application"],
                cwd=ROOT, env=self.env, stdout=out, stderr=out,
            )  # fmt: skip

    def wait(self, path: str = "/healthz", timeout: float = 60) -> None:
        """Until the ASGI application answers HTTP (the same process serves the socket)."""
        answering(self.process, "daphne", self.base + path, self.log, timeout)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None:
            terminated(self.process)
