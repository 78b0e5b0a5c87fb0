"""Over a real server (daphne, in this process): the handshake, sync and an acknowledged
update travel through TCP as a browser's would; also the recipe the browser tests use."""

from __future__ import annotations

import json
import urllib.request

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from pycrdt import Decoder, Doc, Text, create_sync_message, create_update_message

from collaboration.models import DocumentUpdate
from collaboration.protocol import SERVER, frame_read
from reliability.live_editor import LiveClosed, WebSocket

from .editors import session_cookie
from .servers import live_asgi_server  # noqa: F401 - the fixture


def server_messages(frames: list[bytes]) -> list[dict]:
    return [
        json.loads(Decoder(frame[1:]).read_message().decode("utf-8"))
        for frame in frames
        if frame[0] == SERVER
    ]


@pytest.mark.usefixtures("live_asgi_server")
def test_a_browser_like_client_syncs_types_and_is_acknowledged(live_asgi_server, author, note):  # noqa: F811
    """TCP, the HTTP upgrade with the session cookie and Origin, sync step 1/2, an update
    answered by `stored`; the page itself is served by the same server."""
    cookie = session_cookie(author)
    origin = live_asgi_server.url
    page_url = f"{origin}/write/{note.pk}/"
    request = urllib.request.Request(page_url, headers={"Cookie": cookie})  # noqa: S310
    with urllib.request.urlopen(request, timeout=10) as page:  # noqa: S310 - loopback
        assert page.status == 200

    async def scenario():
        socket = await WebSocket.open(
            live_asgi_server.ws_url(note), {"Origin": origin, "Cookie": cookie}
        )
        doc = Doc()
        socket.send(create_sync_message(doc))
        frames = []
        while not any(f[:2] == b"\x00\x01" for f in frames):
            frames.append(await socket.receive())
        for frame in frames:
            if frame[:2] == b"\x00\x01":
                doc.apply_update(frame_read(frame).payload)
        assert str(doc.get("title", type=Text)) == "Heat equation"
        before = doc.get_state()
        doc.get("body", type=Text).insert(0, "Over TCP.")
        socket.send(create_update_message(doc.get_update(before)))
        while not any(m["type"] == "stored" for m in server_messages(frames)):
            frames.append(await socket.receive())
        socket.close()
        return await sync_to_async(DocumentUpdate.objects.filter(note=note, author=author).count)()

    assert async_to_sync(scenario)() == 1


def test_a_foreign_origin_is_refused_at_the_handshake(live_asgi_server, author, note):  # noqa: F811
    """A page of another site cannot open a socket with the visitor's cookie."""
    cookie = session_cookie(author)

    async def scenario():
        with pytest.raises(LiveClosed, match="403"):
            await WebSocket.open(
                live_asgi_server.ws_url(note), {"Origin": "https://evil.example", "Cookie": cookie}
            )

    async_to_sync(scenario)()


def test_another_port_of_the_same_host_is_refused_at_the_handshake(live_asgi_server, author, note):  # noqa: F811
    """A page served on another port (or scheme) of this host is another origin: its script
    cannot open a socket with the visitor's cookie, while the site's own page can."""
    cookie = session_cookie(author)
    other_port = live_asgi_server.port + 1 if live_asgi_server.port < 65535 else 1024

    async def scenario():
        for origin in (
            f"http://{live_asgi_server.host}:{other_port}",
            f"https://{live_asgi_server.host}:{live_asgi_server.port}",
        ):
            with pytest.raises(LiveClosed, match="403"):
                await WebSocket.open(
                    live_asgi_server.ws_url(note), {"Origin": origin, "Cookie": cookie}
                )
        own = await WebSocket.open(
            live_asgi_server.ws_url(note), {"Origin": live_asgi_server.url, "Cookie": cookie}
        )
        own.close()

    async_to_sync(scenario)()


def test_signed_out_is_closed_with_4401(live_asgi_server, note):  # noqa: F811
    """Without a session the socket opens, says why, and closes with 4401."""

    async def scenario():
        socket = await WebSocket.open(
            live_asgi_server.ws_url(note), {"Origin": live_asgi_server.url}
        )
        frames = []
        while (frame := await socket.receive()) is not None:
            frames.append(frame)
        return socket.close_code, server_messages(frames)

    code, messages = async_to_sync(scenario)()
    assert code == 4401 and messages[0]["code"] == "signed-out"
