"""Logged-in authors of the load, over real HTTP with keep-alive (traffic.py).

An author logs in through the login form (session and CSRF cookies, as a browser), creates a
note, loads the editor page once and then, every second, autosaves (the editor's JSON endpoint,
on the version the last answer gave) and publishes (the editor's form, on the version the
autosave answered; the publish answers with the next version). Every save the server
acknowledges is remembered with its revision number and text, so the revision table can be
checked afterwards. Once a publish has answered, checkers beside the author read the note page
and the feed as anonymous readers: a page without that publication's title or a later one is a
stale read. An autosave that fails is kept and sent again, as the browser keeps the text and
retries, until it is saved or the run ends (then it is a lost write).
"""

from __future__ import annotations

import http.client
import itertools
import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from html.parser import HTMLParser

from traffic import TIMEOUT, Answer, Connection, Recorder


@dataclass
class Save:
    body: str
    revision: int
    kind: str  # "autosave", or "publish" (its save and publish revisions are not numbered)


@dataclass
class AuthorLog:
    saves: list[Save] = field(default_factory=list)
    publishes: int = 0
    refused: int = 0  # 503 answers (the database was down)
    unclear: int = 0  # autosave 503s without the JSON the editor's script reads
    conflicts: int = 0
    stale: int = 0
    checks: int = 0
    pending: str | None = None  # an autosave not acknowledged yet (retried)
    retried_ok: int = 0


class Author:
    """A logged-in author with one note of their own, writing on `port` (the authoring pool,
    as the proxy routes the editor's paths) and checked by anonymous readers on `reader_port`
    (the public pool; `port` when not given)."""

    def __init__(self, port: int, recorder: Recorder, username: str, password: str,
                 reader_port: int | None = None):  # fmt: skip
        self.port = port
        self.reader_port = reader_port or port
        self.recorder = recorder
        self.username = username
        self.password = password
        self.conn = Connection(port)
        self.note_id = 0
        self.slug = ""
        self.version = 0
        self.log = AuthorLog()
        self._serial = itertools.count(1)
        self.title = ""
        self.fields: dict[str, str] | None = None  # the editor form the browser has
        self.checkers: list[Checker] = []

    # --- Setting up --------------------------------------------------------------------------

    def _csrf_form(self, path: str) -> str:
        status, _, content = self.conn.request("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path} answered {status}")
        match = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', content)
        if match is None:
            raise RuntimeError(f"no CSRF token on {path}")
        return match.group(1).decode()

    def _post_form(self, path: str, fields: dict, kind: str | None = None):
        body = urllib.parse.urlencode(fields).encode()
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if kind is None:
            return self.conn.request("POST", path, body=body, headers=headers)
        return self.recorder.timed(self.conn, kind, "POST", path, body=body, headers=headers)

    def login(self) -> None:
        token = self._csrf_form("/accounts/login/")
        status, headers, _ = self._post_form(
            "/accounts/login/",
            {"csrfmiddlewaretoken": token, "username": self.username, "password": self.password},
        )
        if status != 302:
            raise RuntimeError(f"login of {self.username} answered {status}")

    def create_note(self, title: str) -> None:
        token = self._csrf_form("/write/")
        status, headers, _ = self._post_form(
            "/write/new/", {"csrfmiddlewaretoken": token, "title": title}
        )
        location = headers.get("Location", "") if headers else ""
        match = re.search(r"/write/(\d+)/", location)
        if status != 302 or match is None:
            raise RuntimeError(f"creating a note answered {status} {location}")
        self.note_id = int(match.group(1))
        self.title = title
        self.sync()

    def sync(self) -> dict[str, str]:
        """The editor form as the browser has it: every field's value, base_version included."""
        status, _, content = self.conn.request("GET", f"/write/{self.note_id}/")
        if status != 200:
            raise RuntimeError(f"editor page answered {status}")
        return self._read_form(content)

    def _read_form(self, content: bytes) -> dict[str, str]:
        fields = form_fields(content.decode("utf-8", "replace"), "editor-form")
        self.version = int(fields["base_version"])
        # The public address: the form's slug field, or the page's "View" link once published.
        link = re.search(rb'<a href="/notes/([^/"]+)/">View</a>', content)
        self.slug = fields.get("slug") or (link.group(1).decode() if link else self.slug)
        return fields

    # --- Writing -----------------------------------------------------------------------------

    def _csrf(self) -> str:
        return self.conn.cookies.get("csrftoken", "")

    def autosave(self) -> None:
        """Autosave a new text, or again the text a failed autosave left pending."""
        body = self.log.pending or (
            f"Autosave {next(self._serial)} by {self.username} at {time.time():.3f}.\n\n"
            f"$$\\int_0^1 x^{{{len(self.log.saves)}}}\\,dx$$\n"
        )
        retry = self.log.pending is not None
        payload = json.dumps({"body": body, "title": self.title, "base_version": self.version})
        status, _, content = self.recorder.timed(
            self.conn, "autosave", "POST", f"/write/{self.note_id}/autosave/",
            body=payload.encode(),
            headers={"Content-Type": "application/json", "X-CSRFToken": self._csrf()},
        )  # fmt: skip
        data = _json(content)
        if status == 200 and data.get("status") == "saved":
            self.log.saves.append(Save(body, int(data["revision"]), "autosave"))
            self.version = int(data["version"])
            self.log.pending = None
            self.log.retried_ok += retry
            return
        self.log.pending = body
        if status == 503:
            self.log.refused += 1
            self.log.unclear += data != {
                "status": "error",
                "error": "database unavailable, retrying",
            }
        elif status == 409:
            self.log.conflicts += 1

    def publish(self, fields: dict[str, str]) -> bool:
        """Publish a new title through the editor form (its other fields as loaded, the version
        the autosave left); once it has answered, the checkers read it as anonymous readers."""
        serial = next(self._serial)
        title = publication_title(self.note_id, self.username, serial)
        body = f"Published by {self.username} as {title}.\n"
        fields = {**fields, "csrfmiddlewaretoken": self._csrf(), "base_version": self.version,
                  "title": title, "body": body, "action": "publish"}  # fmt: skip
        status, headers, _ = self._post_form(f"/write/{self.note_id}/", fields, kind="publish")
        location = headers.get("Location", "") if headers else ""
        if status == 302 and location.rstrip("/").endswith(f"/write/{self.note_id}"):
            self.log.publishes += 1
            self.log.saves.append(Save(body, 0, "publish"))
            self.title = title
            # The version to save on next, which the page would have after the redirect.
            version = headers.get("X-Note-Version", "")
            self.version = int(version) if version.isdigit() else 0
            for checker in self.checkers:
                checker.published(serial)
            return True
        if status == 503:
            self.log.refused += 1
        elif status == 409:
            self.log.conflicts += 1
        return False

    def load_editor(self) -> dict[str, str] | None:
        """The editor page as the browser loads it: its form, with the version to save on."""
        began = time.monotonic()
        try:
            status, _, content = self.conn.request("GET", f"/write/{self.note_id}/")
        except (OSError, http.client.HTTPException):
            status, content = 0, b""
        self.recorder.answers.append(Answer(began, time.monotonic() - began, status, "editor"))
        # Any other answer is in the recorder's count; the next cycle loads the page again.
        return self._read_form(content) if status == 200 else None

    def cycle(self, publish: bool) -> None:
        """An author's second: autosave (the JSON endpoint, on the version the last answer
        gave), then publish (the editor's form, its fields as the page was loaded). The
        publish answers with the note's new version (X-Note-Version on its redirect), so the
        editor page is loaded only at first, when its last load failed, when that header is
        missing, or when a publish did not go through (the version it had may be gone)."""
        if self.fields is None or not self.version:
            self.fields = self.load_editor()
        if not self.version:
            return  # no version to save on until the page loads
        self.autosave()
        ready = publish and self.fields is not None and self.log.pending is None
        if ready and not self.publish(self.fields):
            self.fields = None

    def start_checking(self, check_feed: bool) -> None:
        paths = [f"/notes/{self.slug}/"] + (["/"] if check_feed else [])
        self.checkers = [Checker(self, path) for path in paths]
        for checker in self.checkers:
            checker.start()

    def stop_checking(self) -> None:
        for checker in self.checkers:
            checker.stop()


def publication_title(note_id: int, username: str, serial: int) -> str:
    """The title a publish gives: unique to the note, with the publication's number last."""
    return f"Note {note_id} of {username}, publication {serial}"


class Checker:
    """An anonymous reader of one page of an author's (the note, the feed) that, as soon as a
    publish has answered, reads the page: it must show that publication's title or a later
    one of the same author's, never an earlier one (a stale read).

    It runs beside the author, so the author's next save does not wait for the read. When
    several publishes answer while a read is on its way, the next read checks the newest of
    them (a page showing it, or a later one, shows every earlier publish as replaced too)."""

    def __init__(self, author: Author, path: str):
        self.author = author
        self.path = path
        # Anonymous: no cookies, so the page cache answers.
        self.reader = Connection(author.reader_port)
        # This note's publications only: another scenario's note of the same author's on the
        # feed must not pass for this one.
        before, _, after = publication_title(author.note_id, author.username, 0).rpartition("0")
        self._serial = re.compile(
            re.escape(_html_text(before).encode()) + rb"(\d+)" + re.escape(after.encode())
        )
        self._wanted = 0  # the newest publication answered
        self._answered_at = 0.0
        self._checked = 0
        self._stopping = False
        self._changed = threading.Condition()
        self.lags: list[float] = []  # seconds from a publish's answer to the read checking it
        self._thread = threading.Thread(target=self._run, daemon=True)

    def published(self, serial: int) -> None:
        with self._changed:
            self._wanted, self._answered_at = serial, time.monotonic()
            self._changed.notify()

    def _run(self) -> None:
        while True:
            with self._changed:
                while self._wanted == self._checked and not self._stopping:
                    self._changed.wait()
                if self._wanted == self._checked:
                    return  # stopping, and every publish is checked
                wanted, answered_at = self._wanted, self._answered_at
            self.lags.append(time.monotonic() - answered_at)
            self._check(wanted)
            with self._changed:
                self._checked = wanted

    def _check(self, wanted: int) -> None:
        log = self.author.log
        status, _, content = self.author.recorder.timed(self.reader, "check", "GET", self.path)
        log.checks += 1
        shown = [int(number) for number in self._serial.findall(content)]
        if status != 200 or not shown or max(shown) < wanted:
            log.stale += 1

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        with self._changed:
            self._stopping = True
            self._changed.notify()
        self._thread.join(timeout=TIMEOUT * 2 + 5)
        self.reader.close()


class _FormReader(HTMLParser):
    """The fields of one <form> (by class) with the values a browser would submit."""

    def __init__(self, form_class: str):
        super().__init__(convert_charrefs=True)
        self.form_class = form_class
        self.inside = False
        self.fields: dict[str, str] = {}
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.inside = self.form_class in (attrs.get("class") or "").split()
        if not self.inside:
            return
        name = attrs.get("name")
        if tag == "input" and name:
            kind = (attrs.get("type") or "text").lower()
            if kind in {"checkbox", "radio"}:
                if "checked" in attrs:
                    self.fields[name] = attrs.get("value") or "on"
            elif kind not in {"submit", "button", "file", "image", "reset"}:
                self.fields[name] = attrs.get("value") or ""
        elif tag == "textarea" and name:
            self._textarea = name
            self.fields[name] = ""
        elif tag == "select" and name:
            self._select = name
        elif (
            tag == "option"
            and self._select
            and ("selected" in attrs or self._select not in self.fields)
        ):
            self.fields[self._select] = attrs.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data):
        if self._textarea:
            self.fields[self._textarea] += data


def form_fields(html: str, form_class: str) -> dict[str, str]:
    reader = _FormReader(form_class)
    reader.feed(html)
    # Django's textarea rendering starts with a newline that browsers drop.
    return {
        name: value[1:] if value.startswith("\n") else value
        for name, value in reader.fields.items()
    }


def _json(content: bytes) -> dict:
    try:
        data = json.loads(content or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _html_text(text: str) -> str:
    from html import escape

    return escape(text, quote=False)


class Authors:
    """Each author saves and publishes every `period` seconds in a thread, until stopped; a
    cycle that takes longer is followed at once by the next (the rate achieved is reported)."""

    def __init__(self, authors: list[Author], period: float = 1.0, publish: bool = True,
                 check_feed: bool = True):  # fmt: skip
        self.authors = authors
        self.period = period
        self.publish = publish
        self.check_feed = check_feed
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []
        self.began = self.ended = 0.0

    def _write(self, author: Author, offset: float) -> None:
        next_at = time.monotonic() + offset
        while not self.stopping.is_set():
            delay = next_at - time.monotonic()
            if delay > 0 and self.stopping.wait(delay):
                break
            next_at = max(next_at + self.period, time.monotonic() - self.period)
            author.cycle(self.publish)

    def start(self) -> None:
        self.began = time.monotonic()
        for number, author in enumerate(self.authors):
            author.start_checking(self.check_feed)
            offset = self.period * number / max(1, len(self.authors))
            thread = threading.Thread(target=self._write, args=(author, offset), daemon=True)
            self.threads.append(thread)
            thread.start()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=TIMEOUT * 3)
        self.ended = time.monotonic()
        for author in self.authors:
            author.stop_checking()

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.began
