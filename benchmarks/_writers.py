"""Authors publishing through the editor while readers read, for the scale benchmark (a helper
module: the benchmark runner skips `_` files). Built on the reliability suite's HTTP author
(reliability/traffic.py), which signs in through the login form as a browser does."""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
import time

from _serving_processes import ROOT

# Appended, not prepended: none of reliability/'s modules may shadow one of benchmarks/'.
if str(ROOT / "reliability") not in sys.path:
    sys.path.append(str(ROOT / "reliability"))
from authors import Author, form_fields  # noqa: E402
from traffic import Recorder  # noqa: E402


class Writer(Author):
    """An author signed in through the login form, with one published note of theirs, who
    publishes changes to its body through the editor's form (the page's fields as loaded, the
    version the last publish answered)."""

    def __init__(self, port: int, recorder: Recorder, username: str, password: str, body: str):
        super().__init__(port, recorder, username, password)
        self.base_body = body
        self.serial = 0

    def prepare(self, title: str, tags: list[str]) -> None:
        self.login()
        self.create_note(title)
        fields = self.sync()
        self.fields = {**fields, "tags": ", ".join(tags)}
        if not self.publish_change():
            raise RuntimeError(f"{self.username}'s first publish was refused")
        self.sync()  # the slug, from the editor's "View" link once published

    def sync(self) -> dict[str, str]:
        status, _, content = self.conn.request("GET", f"/write/{self.note_id}/")
        if status != 200:
            raise RuntimeError(f"editor page answered {status}")
        return self._read_form(content)

    def publish_change(self) -> bool:
        self.serial += 1
        body = f"Revision {self.serial} by {self.username}, {time.time():.3f}.\n\n{self.base_body}"
        fields = {**self.fields, "csrfmiddlewaretoken": self._csrf(), "body": body,
                  "base_version": self.version, "action": "publish"}  # fmt: skip
        code, headers, _ = self._post_form(f"/write/{self.note_id}/", fields, kind="publish")
        version = headers.get("X-Note-Version", "") if headers else ""
        if code == 302 and version.isdigit():
            self.version = int(version)
            return True
        # A refusal or a conflict: the page as the browser would load it again.
        with contextlib.suppress(OSError, KeyError, ValueError):
            page = self.conn.request("GET", self._edit)[2]
            self.fields = {**self._read_form(page), "tags": self.fields.get("tags", "")}
        return False

    @property
    def _edit(self) -> str:
        return f"/write/{self.note_id}/"

    def _read_form(self, content: bytes) -> dict[str, str]:
        fields = form_fields(content.decode("utf-8", "replace"), "editor-form")
        self.version = int(fields["base_version"])
        if fields.get("slug"):
            self.slug = fields["slug"]
        return fields


class Publishing:
    """Publishes at `rate` a second, evenly spaced: each is handed to a writer who is not
    publishing already, so that a publish slower than the spacing does not lower the rate while
    the server keeps up (a writer publishes one at a time, as a person does). A publish due when
    every writer is still busy is skipped and counted: the achieved rate says so."""

    def __init__(self, writers: list[Writer], rate: int):
        self.rate = rate
        self.writers = writers if rate else []
        self.stopping = threading.Event()
        self.due: queue.Queue[int] = queue.Queue(maxsize=max(1, len(self.writers)))
        self.threads = [
            threading.Thread(target=self._write, args=(writer,), daemon=True)
            for writer in self.writers
        ]
        if rate:
            self.threads.append(threading.Thread(target=self._schedule, daemon=True))
        self.skipped = 0

    def _schedule(self) -> None:
        next_at = time.monotonic()
        while not self.stopping.is_set():
            delay = next_at - time.monotonic()
            if delay > 0 and self.stopping.wait(delay):
                break
            next_at += 1.0 / self.rate
            try:
                self.due.put_nowait(1)
            except queue.Full:
                self.skipped += 1

    def _write(self, writer: Writer) -> None:
        while not self.stopping.is_set():
            try:
                self.due.get(timeout=0.2)
            except queue.Empty:
                continue
            writer.publish_change()

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=60)
