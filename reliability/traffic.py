"""The load's plumbing, over real HTTP with keep-alive: a connection with its cookies, the
recorder every answer goes to (with its time, status and X-Cache header, so that a scenario can
count what happened in each phase: before, during and after an outage), and a browser that logs
in. The load itself is readers.py (anonymous readers) and authors.py (logged-in authors).
"""

from __future__ import annotations

import http.client
import re
import time
import urllib.parse
from dataclasses import dataclass

TIMEOUT = 30.0


@dataclass
class Answer:
    at: float  # time.monotonic() when the request was sent
    seconds: float
    status: int  # 0: no HTTP answer (connection refused, reset, timeout)
    kind: str  # "cached", "uncached", "autosave", "publish", "check", ...
    cache: str = ""  # the X-Cache header
    error: str = ""  # why there was no HTTP answer (the exception's type)


class Connection:
    """One keep-alive connection with a cookie jar; reconnects after any failure."""

    def __init__(self, port: int):
        self.port = port
        self.cookies: dict[str, str] = {}
        self._conn: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: bytes | None = None, headers=None):
        headers = dict(headers or {})
        headers.setdefault("Host", "127.0.0.1")
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
            try:
                self._conn.request(method, path, body=body, headers=headers)
                response = self._conn.getresponse()
                content = response.read()
            except (OSError, http.client.HTTPException):
                self.close()
                # A kept-alive connection the server closed meanwhile: retry once on a new one.
                if attempt == 2:
                    raise
                continue
            for cookie in response.msg.get_all("Set-Cookie") or []:
                name, _, rest = cookie.partition("=")
                self.cookies[name.strip()] = rest.split(";", 1)[0]
            if response.will_close:
                self.close()
            return response.status, response.msg, content
        raise AssertionError("not reached")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class Recorder:
    """Every answer of a run, appended from many threads (list.append is atomic)."""

    def __init__(self):
        self.answers: list[Answer] = []

    def timed(self, conn: Connection, kind: str, method: str, path: str, **kwargs):
        began = time.monotonic()
        error = ""
        try:
            status, headers, content = conn.request(method, path, **kwargs)
        except (OSError, http.client.HTTPException) as failure:
            status, headers, content, error = 0, None, b"", type(failure).__name__
        cache = headers.get("X-Cache", "") if headers is not None else ""
        self.answers.append(Answer(began, time.monotonic() - began, status, kind, cache, error))
        return status, headers, content


class Browser:
    """A browser at a client address (sent as X-Forwarded-For, as the proxy in front does) that
    logs in through the login form, keeping its cookies (CSRF, the device cookie) between
    attempts, as a real one does."""

    CHECKED = b"Please enter a correct"

    def __init__(self, port: int, address: str):
        self.conn = Connection(port)
        self.headers = {"X-Forwarded-For": address}

    def login(self, username: str, password: str) -> str:
        """'logged in', 'wrong' (the password was checked), 'refused' (429), 'unavailable'
        (503) or 'error <status>'."""
        status, _, content = self.conn.request("GET", "/accounts/login/", headers=self.headers)
        match = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', content)
        if status != 200 or match is None:
            return f"error {status}"
        fields = {"csrfmiddlewaretoken": match.group(1).decode(), "username": username,
                  "password": password}  # fmt: skip
        status, _, content = self.conn.request(
            "POST", "/accounts/login/", body=urllib.parse.urlencode(fields).encode(),
            headers={**self.headers, "Content-Type": "application/x-www-form-urlencoded"},
        )  # fmt: skip
        if status == 302:
            # Signed out again at once: the session ends, the device cookie stays.
            self.conn.cookies.pop("sessionid", None)
            return "logged in"
        if status == 200 and self.CHECKED in content:
            return "wrong"
        return {429: "refused", 503: "unavailable"}.get(status, f"error {status}")

    def close(self) -> None:
        self.conn.close()
