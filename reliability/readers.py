"""Anonymous readers of the load, over real HTTP with keep-alive (traffic.py).

Readers are threads, each with its own connection (http.client) asking for its next page as soon
as the last one answered: cached pages and, now and then, a page the cache cannot hold (a new
search: a full render; a new query string on another page is that page from the cache). They run
in processes of their own (about 50 threads each), so that neither they nor the authors are held
back by the generator's interpreter lock. Every answer is recorded with its time, status and
X-Cache header, so a scenario can count what happened in each phase (before, during and after an
outage).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import random
import threading
from dataclasses import dataclass

from traffic import TIMEOUT, Connection, Recorder


@dataclass(frozen=True)
class ReadPlan:
    """What the readers ask for: the cacheable pages, and the searches that one request in
    `uncached_every` asks for, each made new by a unique `or` term (a render)."""

    port: int
    cached: list[str]
    uncached: list[str]
    uncached_every: int
    # A flood (scenario d): every read carries a random query string, one in three a random
    # search (kinds "junk" and "search") instead.
    flood: bool = False


class _ReaderThreads:
    """`count` threads reading `plan` until stopped."""

    def __init__(self, plan: ReadPlan, recorder: Recorder, count: int, label: str):
        self.plan = plan
        self.recorder = recorder
        self.count = count
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self._serial = itertools.count()
        self._label = label  # makes the uncached searches unique across processes and runs

    def _read(self, seed: int) -> None:
        plan = self.plan
        conn = Connection(plan.port)
        chooser = random.Random(seed)  # noqa: S311 - load pattern, not a secret
        try:
            while not self.stopping.is_set():
                number = next(self._serial)
                if plan.flood:
                    token = f"{self._label}x{number}x{chooser.getrandbits(32):08x}"
                    if number % 3 == 0:
                        path, kind = f"/search/?q={token}", "search"
                    else:
                        path = f"{chooser.choice(plan.cached)}?utm_{token[-4:]}={token}"
                        kind = "junk"
                elif plan.uncached and number % plan.uncached_every == 0:
                    path = f"{chooser.choice(plan.uncached)}+or+x{self._label}x{number}"
                    kind = "uncached"
                else:
                    path, kind = chooser.choice(plan.cached), "cached"
                self.recorder.timed(conn, kind, "GET", path)
        finally:
            conn.close()

    def start(self) -> None:
        for number in range(self.count):
            thread = threading.Thread(target=self._read, args=(number,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=TIMEOUT + 5)


def _read_in_process(plan: ReadPlan, count: int, label: str, stopping, results):
    """A reader process: its threads read until `stopping` is set, then it sends back every
    answer and the CPU seconds it used."""
    recorder = Recorder()
    threads = _ReaderThreads(plan, recorder, count, label)
    threads.start()
    stopping.wait()
    threads.stop()
    used = os.times()
    results.send((recorder.answers, used.user + used.system))
    results.close()


class Readers:
    """`count` anonymous readers, each a thread with its own keep-alive connection asking for
    the next page as soon as the last one answered; one request in `uncached_every` is a
    render. The threads run in `processes` processes of their own, so that they never hold
    the interpreter lock the authors' threads need (the generator is not what is measured)."""

    def __init__(self, port: int, recorder: Recorder, cached: list[str], uncached: list[str],
                 count: int, uncached_every: int = 10, processes: int = 0,
                 flood: bool = False):  # fmt: skip
        self.plan = ReadPlan(port, cached, uncached, uncached_every, flood)
        self.recorder = recorder
        self.count = count
        # About 50 threads a process: more in one process queue on its interpreter lock and
        # hold the readers back (200 in one process asked for about half as many pages).
        self.processes = max(1, processes or -(-count // 50))
        # spawn: a fresh interpreter, without the parent's sockets or threads.
        self._context = multiprocessing.get_context("spawn")
        self._stopping = self._context.Event()
        self._children: list[tuple] = []
        self.cpu_seconds = 0.0  # the reader processes' own CPU time, once stopped

    def start(self) -> None:
        run = f"{random.getrandbits(32):08x}"  # noqa: S311 - a label, not a secret
        for number in range(self.processes):
            share = self.count // self.processes + (number < self.count % self.processes)
            receiver, sender = self._context.Pipe(duplex=False)
            process = self._context.Process(
                target=_read_in_process,
                args=(self.plan, share, f"{run}{number}", self._stopping, sender),
                daemon=True,
            )  # fmt: skip
            process.start()
            sender.close()
            self._children.append((process, receiver))

    def stop(self) -> None:
        self._stopping.set()
        for process, receiver in self._children:
            # Received before joining: a child blocks on a full pipe until its answers are read.
            if receiver.poll(TIMEOUT + 30):
                answers, seconds = receiver.recv()
                self.recorder.answers.extend(answers)
                self.cpu_seconds += seconds
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
        self._children = []
