"""gunicorn started as gunicorn.conf.py configures it, and its workers' memory sampled from
/proc, for the scale benchmark (a helper module: the benchmark runner skips `_` files)."""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path

from _serving_processes import GUNICORN, ROOT, LoopbackServer


def code_tree(ref: str, work: Path) -> Path:
    """The project's files at git commit `ref`, in `work`, with this checkout's installed
    assets (static/vendor, node_modules): a second server runs the code of before a change
    beside the code of now, on the same site, in the same run."""
    tree = work / f"code-{re.sub(r'[^A-Za-z0-9_.-]+', '-', ref)}"
    if not tree.is_dir():
        tree.mkdir(parents=True)
        archive = subprocess.run(  # noqa: S603 - git, on this repository
            ["git", "-C", str(ROOT), "archive", ref],  # noqa: S607 - git from the PATH
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(  # noqa: S603 - tar into the benchmark's own folder
            ["tar", "-x", "-C", str(tree)],  # noqa: S607 - tar from the PATH
            input=archive,
            check=True,
        )
        for installed in ("static/vendor", "node_modules"):
            if (ROOT / installed).exists() and not (tree / installed).exists():
                (tree / installed).symlink_to(ROOT / installed)
    return tree


class Gunicorn(LoopbackServer):
    """gunicorn on loopback as gunicorn.conf.py configures it (read from the working folder);
    always stopped by stop()."""

    WAIT_S = 90.0
    POLL_S = 0.3
    STOP_S = 30.0

    def __init__(self, env: dict, log: Path, nice: int = 0, code: Path | None = None):
        super().__init__(log)
        # `nice` runs the pool below the other processes' priority (as a lower CPU weight does
        # under docker compose); nice(1) execs gunicorn, so the pid is gunicorn's.
        prefix = ["nice", "-n", str(nice)] if nice else []
        self.command = [*prefix, str(GUNICORN), "scidraft.wsgi"]
        env = {
            **env,
            "GUNICORN_BIND": f"127.0.0.1:{self.port}",
            # A worker recycled mid-run would measure its start-up, and hide its memory growth.
            "GUNICORN_MAX_REQUESTS": "0",
        }
        # `code`: a source tree to serve instead of this checkout's (gunicorn puts its working
        # folder first on the import path).
        self.start(self.command, env, **({"cwd": code} if code else {}))

    def workers(self) -> list[int]:
        """The worker processes: the master's children, from /proc."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # Fields after the command's closing parenthesis: state, then the parent's pid.
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            if parent == self.process.pid:
                found.append(int(entry.name))
        return sorted(found)


def _status_kb(pid: int) -> dict[str, int]:
    values = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, rest = line.partition(":")
            if name in {"VmRSS", "VmHWM"}:
                values[name] = int(rest.split()[0])
    except OSError:
        pass
    return values


class MemorySampler:
    """The gunicorn workers' resident memory, sampled every half second: the highest VmRSS seen
    and the kernel's own high-water mark (VmHWM), per worker."""

    def __init__(self, server: Gunicorn):
        self.server = server
        self.peak_kb: dict[int, int] = {}
        self.workers_seen: set[int] = set()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        for pid in self.server.workers():
            self.workers_seen.add(pid)
            values = _status_kb(pid)
            peak = max(values.values(), default=0)
            self.peak_kb[pid] = max(self.peak_kb.get(pid, 0), peak)

    def _run(self) -> None:
        while not self._stopping.wait(0.5):
            self.sample()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.sample()
        self._stopping.set()
        self._thread.join(timeout=5)

    @property
    def peak_mb(self) -> float:
        return max(self.peak_kb.values(), default=0) / 1024
