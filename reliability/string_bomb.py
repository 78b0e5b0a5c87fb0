"""An @string bomb uploaded through the editor while readers read (scenario g).

g. An @string bomb (about 750 bytes of macros that each double the last, once three titles of
   33.5 M characters) uploaded through the editor's bibliography form while 20 readers read:
   refused with the line of the @string within BOMB_SECONDS_BOUND, the authoring workers'
   RSS grows by less than BOMB_RSS_BOUND, nothing is stored, and no read fails meanwhile.

Each returns a Result (results.py) for run.py's table.
"""

from __future__ import annotations

import os
import random
import re
import threading
import time

from authors import Author
from readers import Readers
from results import Result, describe, latencies, server_errors
from traffic import Recorder

# --- g. An @string bomb uploaded through the editor --------------------------------------------

# Macros that each double the last: about 750 bytes that once spelled three titles of 33.5 M
# characters (the upload's worker grew by 442 MB). The parse refuses it at the first @string
# past the bound for one value.
BOMB_LEVELS = 24
# What the upload may cost the authoring worker that reads it, and how long it may take.
BOMB_RSS_BOUND = 64 * 1024 * 1024
BOMB_SECONDS_BOUND = 10.0


def string_bomb(levels: int = BOMB_LEVELS, titles: int = 3) -> bytes:
    lines = ['@string{ a0 = "xx" }']
    lines += [f"@string{{ a{k} = a{k - 1} # a{k - 1} }}" for k in range(1, levels + 1)]
    lines += [f"@misc{{ bomb{i},\n  title = a{levels}\n}}" for i in range(titles)]
    return ("\n".join(lines) + "\n").encode()


def _children(parent: int) -> list[int]:
    """The processes whose parent is `parent` (a gunicorn master's workers)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                # The command may hold spaces and parentheses: the fields after its last ")".
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            found.append(int(entry))
    return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status_file:
            for line in status_file:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class RssSampler:
    """The largest growth of any of `pids`' resident memory over its own starting size,
    sampled every 50 ms while running."""

    def __init__(self, pids: list[int]):
        self.start_rss = {pid: _rss(pid) for pid in pids}
        self.growth = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stopping.wait(0.05):
            for pid, start in self.start_rss.items():
                self.growth = max(self.growth, _rss(pid) - start)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=5)


def _multipart(fields: dict[str, str], name: str, filename: str, content: bytes):
    boundary = f"----reliability{random.getrandbits(64):016x}"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
        for key, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"'
        "\r\nContent-Type: application/x-bibtex\r\n\r\n".encode()
        + content
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def string_bomb_upload(site, readers: int = 20, before: float = 3, after: float = 3) -> Result:
    """The bomb uploaded through /write/bibliographies/ to the authoring pool while readers
    read the public pool: refused (400, the line of the @string) within BOMB_SECONDS_BOUND, the
    authoring workers' RSS grows by less than BOMB_RSS_BOUND, nothing is stored, and no read
    fails meanwhile."""
    result = Result("g. @string bomb uploaded in the editor")
    recorder = Recorder()
    username, password = site.accounts[0]
    author = Author(site.authoring_port, recorder, username, password, reader_port=site.port)
    author.login()
    token = author._csrf_form("/write/bibliographies/")
    body, content_type = _multipart(
        {"csrfmiddlewaretoken": token, "name": "bomb"}, "upload", "bomb.bib", string_bomb()
    )
    authoring = site.authoring or site.server
    sampler = RssSampler(_children(authoring.process.pid))
    crowd = Readers(site.port, recorder, site.cached, site.uncached, readers)
    began = time.monotonic()
    crowd.start()
    sampler.start()
    try:
        time.sleep(before)
        sent = time.monotonic()
        status_code, _, content = recorder.timed(
            author.conn, "upload", "POST", "/write/bibliographies/", body=body,
            headers={"Content-Type": content_type, "Referer": f"http://127.0.0.1:{author.port}/"},
        )  # fmt: skip
        answered = time.monotonic()
        time.sleep(after)
        # The author's own list of files, as the editor shows it: the bomb must not be there.
        listed = author.conn.request("GET", "/write/bibliographies/")
        stored = listed[0] != 200 or b"bib/bomb.bib" in listed[2]
    finally:
        sampler.stop()
        crowd.stop()
        author.conn.close()
    elapsed = time.monotonic() - began
    reads = [a for a in recorder.answers if a.kind in ("cached", "uncached")]
    failed = server_errors(reads) + [a for a in reads if 400 <= a.status < 500]
    result.requests = len(recorder.answers)
    result.errors = len(failed)
    if failed:
        result.notes.append(describe(failed, began))
    latencies(reads, elapsed, result)
    # The reads sent from a second before the upload to a second after its answer: a refusal
    # in well under a second leaves few reads inside the upload itself.
    during = [a for a in reads if sent - 1 <= a.at < answered + 1]
    text = content.decode("utf-8", "replace")
    refused = status_code == 400 and "reading stopped here" in text and "expands to more" in text
    line = re.search(r"Line (\d+): reading stopped here", text)
    result.notes.append(
        f"upload of {len(string_bomb())} bytes answered {status_code} in "
        f"{answered - sent:.2f} s ({'refused at line ' + line.group(1) if line else 'not refused'}"
        f"); authoring workers' RSS grew by at most {sampler.growth / 1_048_576:.1f} MB; "
        f"{len(during)} reads sent from 1 s before to 1 s after it, "
        f"{sum(1 for a in during if a.status == 200)} answered 200; stored: {stored}"
    )
    if not refused:
        result.problems.append(f"the bomb was not refused (status {status_code})")
    if answered - sent > BOMB_SECONDS_BOUND:
        result.problems.append(f"the upload took {answered - sent:.1f} s")
    if sampler.growth > BOMB_RSS_BOUND:
        result.problems.append(f"a worker grew by {sampler.growth / 1_048_576:.0f} MB")
    if stored:
        result.problems.append("bib/bomb.bib was stored (or the list did not answer)")
    if not during or any(a.status != 200 for a in during):
        result.problems.append("public pages did not all answer 200 around the upload")
    return result
