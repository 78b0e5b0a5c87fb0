"""deploy/nginx.conf run by a real nginx, where one is installed: the writing paths reach the
authoring pool, everything else the public pool, and the public pool stands in for the
authoring pool while it is down; what nginx compresses and what it never does. Two small HTTP
servers play the pools."""

from __future__ import annotations

import base64
import gzip
import hashlib
import http.client
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from contextlib import contextmanager

import pytest

from tests.conftest import ROOT

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

pytestmark = pytest.mark.skipif(
    not os.path.exists(NGINX), reason="no nginx here (Debian package nginx-light)"
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# What the pools answer under /big/ (and /write/big/): a page worth compressing.
BIG = "".join(f"<p>Paragraph {n} of a page worth compressing.</p>\n" for n in range(300))
ENCODED = b"\x1b\x03\x00not really brotli, passed on as it is"


class Pool:
    """An HTTP server on loopback that answers every GET with its own name and the path (and
    a long HTML page under .../big/), saying in a header which Accept-Encoding it was sent."""

    def __init__(self, name: str):
        class Answer(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = f"{name} {self.path}".encode()
                kind, encoding = "text/plain", None
                if "/big/" in self.path:
                    body, kind = body + b"\n" + BIG.encode(), "text/html; charset=utf-8"
                if self.path.endswith("/encoded"):
                    body, encoding = ENCODED, "br"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                if encoding:
                    self.send_header("Content-Encoding", encoding)
                # Under /public/, what the app says of an anonymous page: keep it a minute.
                public = self.path.startswith("/public/")
                self.send_header(
                    "Cache-Control", "public, max-age=60" if public else "private, no-store"
                )
                self.send_header("Content-Length", str(len(body)))
                self.send_header("X-Seen-Accept-Encoding", self.headers.get("Accept-Encoding", ""))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class LiveServer:
    """Plays daphne: reads one request head per connection and keeps it; a WebSocket handshake
    is answered 101 and every byte after it is sent back, through whatever nginx does with the
    upgraded connection; any other request is answered 200 with the Connection header seen."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.heads: list[dict[str, str]] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = connection.recv(4096)
                if not chunk:
                    return
                head += chunk
            head, _, rest = head.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            headers = {"request": lines[0]}
            headers.update(
                (name.strip().lower(), value.strip())
                for name, _, value in (line.partition(":") for line in lines[1:])
            )
            self.heads.append(headers)
            if headers.get("upgrade", "").lower() != "websocket":
                body = f"live {lines[0]} connection={headers.get('connection', '')}".encode()
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                return
            accept = base64.b64encode(
                # RFC 6455 fixes SHA-1 for the handshake's accept value (not a secret).
                hashlib.sha1(  # noqa: S324
                    (headers["sec-websocket-key"] + WEBSOCKET_GUID).encode()
                ).digest()
            )
            connection.sendall(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"
            )
            if rest:
                connection.sendall(rest)
            while chunk := connection.recv(4096):
                connection.sendall(chunk)

    def stop(self) -> None:
        self.listener.close()


WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


@contextmanager
def nginx(tmp_path, web_port: int, authoring_port: int, live_port: int):
    """nginx running deploy/nginx.conf on a free loopback port, its upstreams pointed at the
    given ports; yields the port."""
    port = _free_port()
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    conf = conf.replace("server web:8000", f"server 127.0.0.1:{web_port}")
    conf = conf.replace("server authoring:8000", f"server 127.0.0.1:{authoring_port}")
    conf = conf.replace("server live:8001", f"server 127.0.0.1:{live_port}")
    conf = conf.replace("listen 80 default_server;", f"listen 127.0.0.1:{port} default_server;")
    conf = conf.replace("/var/cache/nginx/scidraft", str(tmp_path / "cache"))
    conf = re.sub(r"/data/media/", f"{tmp_path}/media/", conf)
    (tmp_path / "site.conf").write_text(conf)
    # Started as root, nginx's workers would run as nobody, who cannot enter tmp_path.
    user = "user root;\n" if os.geteuid() == 0 else ""
    (tmp_path / "nginx.conf").write_text(
        f"{user}events {{}}\npid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\n"
        f"http {{ access_log off; include {tmp_path}/site.conf; }}\n"
    )
    command = [NGINX, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")]
    checked = subprocess.run([*command, "-t"], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stderr
    subprocess.run(command, check=True, timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    try:
        yield port
    finally:
        subprocess.run([*command, "-s", "stop"], timeout=30)


@pytest.fixture
def proxy(tmp_path):
    """nginx with deploy/nginx.conf, its upstreams pointed at two local pools and a stand-in
    for daphne."""
    web, authoring, live = Pool("web"), Pool("authoring"), LiveServer()
    try:
        with nginx(tmp_path, web.port, authoring.port, live.port) as port:
            yield port, web, authoring, live
    finally:
        web.stop()
        authoring.stop()
        live.stop()


def _answer(port: int, path: str) -> str:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path)
        return connection.getresponse().read().decode()
    finally:
        connection.close()


def test_writing_paths_reach_the_authoring_pool_and_pages_the_public_one(proxy):
    """/write/, /accounts/ and /admin/ go to the authoring pool; pages, feeds and a path that
    merely starts like one (/writers/) go to the public pool."""
    port, _, _, _ = proxy
    for path in ("/write/", "/write/3/autosave/", "/accounts/login/", "/admin/notes/"):
        assert _answer(port, path) == f"authoring {path}"
    for path in ("/", "/notes/x/", "/index.xml", "/writers/", "/tags/write/"):
        assert _answer(port, path) == f"web {path}"


def test_the_public_pool_answers_for_the_authoring_pool_while_it_is_down(proxy):
    """The authoring upstream lists web as its backup: authors can still write."""
    port, _, authoring, _ = proxy
    authoring.stop()
    assert _answer(port, "/write/") == "web /write/"


def _fetch(port: int, path: str, **headers) -> http.client.HTTPResponse:
    """The raw response (http.client decodes no Content-Encoding), body read."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        response.body = response.read()
        return response
    finally:
        connection.close()


def test_anonymous_pages_the_app_sent_plain_are_gzipped(proxy):
    """A public page the app left uncompressed reaches an anonymous reader gzipped, with Vary;
    a short answer (under 1 KB) is not worth it."""
    port, _, _, _ = proxy
    response = _fetch(port, "/big/page", **{"Accept-Encoding": "gzip, deflate"})
    assert response.getheader("Content-Encoding") == "gzip"
    assert "Accept-Encoding" in response.getheader("Vary", "")
    assert gzip.decompress(response.body).decode() == "web /big/page\n" + BIG
    short = _fetch(port, "/notes/x/", **{"Accept-Encoding": "gzip"})
    assert short.getheader("Content-Encoding") is None and short.body == b"web /notes/x/"


def test_signed_in_readers_and_the_writing_paths_are_never_compressed(proxy):
    """BREACH: a request with a session, and anything of /write/, /accounts/ or /admin/ (forms
    with CSRF tokens), is sent as the app sent it."""
    port, _, _, _ = proxy
    gzip_ok = {"Accept-Encoding": "gzip"}
    signed_in = _fetch(port, "/big/page", Cookie="sessionid=abc", **gzip_ok)
    assert signed_in.getheader("Content-Encoding") is None
    assert signed_in.body.decode() == "web /big/page\n" + BIG
    for path in ("/write/big/x", "/accounts/big/login", "/admin/big/notes"):
        response = _fetch(port, path, **gzip_ok)
        assert response.getheader("Content-Encoding") is None, path
        assert response.body.decode() == f"authoring {path}\n" + BIG


def test_the_app_is_asked_with_the_one_encoding_it_will_use(proxy):
    """Whatever the browser lists, the app sees br, gzip or nothing; its own encoded answer
    passes through unchanged (never compressed twice)."""
    port, _, _, _ = proxy
    for sent, seen in [
        ("gzip, deflate, br, zstd", "br"),
        ("br", "br"),
        ("gzip, deflate", "gzip"),
        ("deflate", ""),
        (None, ""),
    ]:
        headers = {"Accept-Encoding": sent} if sent is not None else {}
        response = _fetch(port, "/notes/x/", **headers)
        assert response.getheader("X-Seen-Accept-Encoding") == seen, sent
    encoded = _fetch(port, "/big/encoded", **{"Accept-Encoding": "gzip, br"})
    assert encoded.getheader("Content-Encoding") == "br" and encoded.body == ENCODED


def _cache_files(tmp_path) -> list:
    return [path for path in (tmp_path / "cache").rglob("*") if path.is_file()]


def test_query_strings_add_no_cache_files(proxy, tmp_path):
    """A public page is kept once, by its path; the same path with junk query strings (or a
    search's) is passed to the app, which answers the canonical page, and adds no file."""
    port, _, _, _ = proxy
    first = _fetch(port, "/public/page")
    assert first.getheader("X-Proxy-Cache") == "MISS"
    assert _fetch(port, "/public/page").getheader("X-Proxy-Cache") == "HIT"
    assert len(_cache_files(tmp_path)) == 1
    for number in range(20):
        junk = _fetch(port, f"/public/page?utm_source=x{number}&fbclid={number}")
        assert junk.getheader("X-Proxy-Cache") == "BYPASS"
        assert junk.body.startswith(b"web /public/page?utm_source=")
    for query in ("q=matrix", "q=matrix&page=2", "q=other"):
        assert _fetch(port, f"/public/search/?{query}").getheader("X-Proxy-Cache") == "BYPASS"
    assert len(_cache_files(tmp_path)) == 1
    assert _fetch(port, "/public/page").getheader("X-Proxy-Cache") == "HIT"


def _websocket_handshake(port: int, path: str) -> tuple[socket.socket, bytes]:
    """A browser's WebSocket opening handshake through nginx: the socket and the answer's head."""
    key = base64.b64encode(os.urandom(16)).decode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(
        f"GET {path} HTTP/1.1\r\nHost: notes.example.org\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        "Origin: http://notes.example.org\r\nCookie: sessionid=abc\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, f"nginx closed the handshake: {head!r}"
        head += chunk
    return sock, head


def test_the_live_socket_is_upgraded_through_to_daphne_and_carries_frames_both_ways(proxy):
    """A WebSocket handshake on /live/notes/<id>/ reaches the live upstream with Upgrade,
    Connection: upgrade, the Host, the Origin and the session cookie (what the consumer checks),
    nginx answers 101, and bytes then flow both ways at once, unbuffered."""
    port, _, _, live = proxy
    sock, head = _websocket_handshake(port, "/live/notes/7/")
    with sock:
        assert head.startswith(b"HTTP/1.1 101 "), head
        seen = live.heads[-1]
        assert seen["request"] == "GET /live/notes/7/ HTTP/1.1"
        assert seen["upgrade"] == "websocket"
        assert seen["connection"].lower() == "upgrade"
        assert seen["host"] == "notes.example.org"
        assert seen["origin"] == "http://notes.example.org"
        assert seen["cookie"] == "sessionid=abc"
        assert seen["x-forwarded-proto"] == "http"
        for frame in (b"\x82\x03\x00\x01\x00", b"\x81\x05hello"):
            sock.sendall(frame)
            echoed = b""
            while len(echoed) < len(frame):
                echoed += sock.recv(4096)
            assert echoed == frame


def test_a_plain_request_under_live_is_not_upgraded_and_other_paths_never_reach_daphne(proxy):
    """Without Upgrade, nginx asks daphne with Connection: close (the map's empty case); pages
    and the writing paths never go to the live upstream."""
    port, _, _, live = proxy
    assert _answer(port, "/live/notes/7/") == "live GET /live/notes/7/ HTTP/1.1 connection=close"
    assert _answer(port, "/write/7/") == "authoring /write/7/"
    assert _answer(port, "/notes/live/") == "web /notes/live/"
    assert [head["request"] for head in live.heads] == ["GET /live/notes/7/ HTTP/1.1"]


# --- Through nginx to the real daphne -------------------------------------------------------

_CO_AUTHORS = """
import json
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.test import Client
from notes.models import NoteAuthor
from notes.services.editing import author_for_user, note_create
people = [User.objects.create_user(name, None, None) for name in ("ada", "grace")]
for user in people:
    user.groups.add(Group.objects.get(name="Author"))
note = note_create(user=people[0], title="Through the proxy")
NoteAuthor.objects.create(note=note, author=author_for_user(people[1]), position=1)
User.objects.create_user("carol", "carol@example.org", "a long passphrase for carol")
cookies = []
for user in people:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME]
    cookies.append(f"{cookie.key}={cookie.value}")
print("CO-AUTHORS " + json.dumps({"note": note.pk, "cookies": cookies}))
"""


@pytest.fixture
def daphne_site(tmp_path):
    """daphne serving scidraft.asgi on a migrated SQLite site of its own (the in-memory
    channel layer: one process), with two co-authors of one note signed in."""
    from reliability.servers import Daphne
    from tests.ops.helpers import manage, shell

    env = {
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'site.sqlite3'}",
        "MEDIA_ROOT": str(tmp_path / "media"),
        "LOG_LEVEL": "WARNING",
    }
    migrated = manage("migrate", "--noinput", env=env)
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    made = shell(_CO_AUTHORS, env=env)
    assert made.returncode == 0, made.stderr[-3000:]
    found = json.loads(made.stdout.split("CO-AUTHORS ", 1)[1])
    server_env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    daphne = Daphne({**server_env, **env}, _free_port(), tmp_path / "daphne.log")
    try:
        daphne.wait()
        yield daphne, found["note"], found["cookies"]
    finally:
        daphne.stop()


@pytest.mark.slow
def test_co_authors_write_together_through_nginx_and_a_foreign_origin_is_refused(
    daphne_site, tmp_path
):
    """Two editors speaking y-websocket through deploy/nginx.conf to a real daphne: each
    keystroke is acknowledged ("stored") and reaches the other; the session cookie and the
    Origin pass the proxy (a page of another site is refused at the handshake, a signed-out
    socket is closed with 4401)."""
    import asyncio

    from reliability.live_editor import LiveClosed, LiveEditor

    daphne, note, cookies = daphne_site
    nothing = _free_port()  # the pools are not asked in this test
    (tmp_path / "proxy").mkdir()
    with nginx(tmp_path / "proxy", nothing, nothing, daphne.port) as port:
        url = f"ws://127.0.0.1:{port}/live/notes/{note}/"
        origin = f"http://127.0.0.1:{port}"

        async def session():
            ada, grace = LiveEditor(url, cookies[0], origin), LiveEditor(url, cookies[1], origin)
            await ada.connect()
            await grace.connect()
            for number, character in enumerate("typed through nginx"):
                editor = (ada, grace)[number % 2]
                editor.insert(len(editor.text), character)
                assert await editor.stored(), character
            deadline = time.monotonic() + 10
            while ada.text != grace.text and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert ada.text == grace.text
            assert sorted(ada.text) == sorted("typed through nginx")
            await ada.close()
            await grace.close()

            stranger = LiveEditor(url, cookies[0], "https://elsewhere.example")
            with pytest.raises(LiveClosed) as refused:
                await stranger.connect()
            assert refused.value.code is None  # no socket at all: the handshake was refused
            signed_out = LiveEditor(url, "", origin)
            with pytest.raises(LiveClosed) as closed:
                await signed_out.connect()
            assert closed.value.code == 4401

        asyncio.run(session())


def _csrf_form(port: int, path: str) -> tuple[str, str]:
    """The CSRF cookie and the form's token of the page at `path`, read through nginx."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        page = response.read().decode()
        assert response.status == 200, page[:500]
        cookie = re.search(r"csrftoken=([^;]+)", response.getheader("Set-Cookie", "")).group(1)
    finally:
        connection.close()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    return cookie, token


@pytest.mark.slow
def test_a_browser_signs_in_through_nginx_on_a_port_other_than_80(daphne_site, tmp_path):
    """On any port, nginx passes the Host with its port: a login form posted with the
    browser's Origin (http://host:port) passes Django's CSRF origin check and signs in."""
    from urllib.parse import urlencode

    daphne, _, _ = daphne_site
    (tmp_path / "proxy").mkdir()
    with nginx(tmp_path / "proxy", daphne.port, daphne.port, daphne.port) as port:
        assert port != 80
        cookie, token = _csrf_form(port, "/accounts/login/")
        form = {
            "csrfmiddlewaretoken": token,
            "username": "carol",
            "password": "a long passphrase for carol",
        }
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            connection.request(
                "POST",
                "/accounts/login/",
                body=urlencode(form),
                headers={
                    "Content-Type": "application/x-www-form-urlencoded",
                    "Cookie": f"csrftoken={cookie}",
                    "Origin": f"http://127.0.0.1:{port}",
                    "Referer": f"http://127.0.0.1:{port}/accounts/login/",
                },
            )
            response = connection.getresponse()
            body = response.read().decode(errors="replace")
        finally:
            connection.close()
        assert response.status == 302, body[:2000]
        assert "sessionid=" in response.getheader("Set-Cookie", "")
