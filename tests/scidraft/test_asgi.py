"""scidraft.asgi: pages over ASGI behave as under gunicorn (the same middleware: page cache,
sessions, CSP), and only /live/notes/<id>/ speaks WebSocket."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.testing import HttpCommunicator, WebsocketCommunicator

from notes import services
from scidraft.asgi import application
from tests.collaboration.editors import HOST, ORIGIN, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)


def get(path: str, cookie: str | None = None) -> dict:
    headers = [(b"host", b"testserver")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    communicator = HttpCommunicator(application, "GET", path, headers=headers)
    response = async_to_sync(communicator.get_response)()
    response["headers"] = {k.decode().lower(): v.decode() for k, v in response["headers"]}
    return response


def test_a_public_page_is_cached_under_asgi_as_under_wsgi(author, note):
    """The second anonymous request is a page-cache hit with the same ETag."""
    services.note_save(
        note_id=note.pk, user=author, base_version=note.version, fields={"body": "Published."}
    )
    services.note_publish(note_id=note.pk, user=author, base_version=note.version + 1)
    first, second = get(f"/notes/{note.slug}/"), get(f"/notes/{note.slug}/")
    assert (first["status"], second["status"]) == (200, 200)
    assert (first["headers"]["x-cache"], second["headers"]["x-cache"]) == ("miss", "hit")
    assert first["headers"]["etag"] == second["headers"]["etag"]
    assert "public" in first["headers"]["cache-control"]


def test_the_editor_is_served_signed_in_private_with_its_csp(author, note):
    """A signed-in page through the session middleware: 200, never cached, the authoring CSP."""
    response = get(f"/write/{note.pk}/", session_cookie(author))
    assert response["status"] == 200
    assert "no-store" in response["headers"]["cache-control"]
    assert "img-src 'self' data:" in response["headers"]["content-security-policy"]
    assert b"Heat equation" in response["body"]


def test_signed_out_visitors_are_sent_to_the_login_page():
    response = get("/write/")
    assert response["status"] == 302
    assert response["headers"]["location"].startswith("/accounts/login/")


def test_other_websocket_paths_are_refused(author):
    """Only the live notes path is routed: another path closes the handshake."""

    async def scenario():
        headers = [(b"host", HOST.encode()), (b"origin", ORIGIN.encode())]
        communicator = WebsocketCommunicator(application, "/write/", headers=headers)
        with pytest.raises(ValueError, match="No route found"):
            await communicator.connect()

    async_to_sync(scenario)()


def test_with_live_editing_off_every_socket_is_refused(author, note, settings):
    """LIVE_EDITING=0 (a site that runs no ASGI server for sockets, or turned writing
    together off): the application refuses even a co-author's socket at the handshake."""
    import importlib

    import scidraft.asgi

    settings.LIVE_EDITING = False
    try:
        off = importlib.reload(scidraft.asgi).application
        cookie = session_cookie(author)

        async def scenario():
            headers = [(b"origin", ORIGIN.encode()), (b"cookie", cookie.encode())]
            communicator = WebsocketCommunicator(off, f"/live/notes/{note.pk}/", headers=headers)
            connected, _ = await communicator.connect()
            return connected

        assert async_to_sync(scenario)() is False
    finally:
        settings.LIVE_EDITING = True
        importlib.reload(scidraft.asgi)


@pytest.mark.parametrize("live_editing", [True, False])
def test_a_refused_handshake_opens_nothing_on_the_channel_layer(
    author, note, settings, monkeypatch, live_editing
):
    """A socket from another site (or any socket with writing together off) is closed at the
    handshake without a channel of its own: a consumer would keep a Redis read open until
    the client left."""
    import importlib

    from channels.layers import InMemoryChannelLayer

    import scidraft.asgi

    def no_channel(self, prefix="specific"):
        raise AssertionError("a refused socket asked the channel layer for a channel")

    monkeypatch.setattr(InMemoryChannelLayer, "new_channel", no_channel)
    settings.LIVE_EDITING = live_editing
    try:
        app = importlib.reload(scidraft.asgi).application
        cookie = session_cookie(author)

        async def scenario():
            origin = ORIGIN if not live_editing else "https://elsewhere.example"
            headers = [(b"origin", origin.encode()), (b"cookie", cookie.encode())]
            communicator = WebsocketCommunicator(app, f"/live/notes/{note.pk}/", headers=headers)
            connected, _ = await communicator.connect()
            await communicator.wait()  # the application has returned, nothing left running
            return connected

        assert async_to_sync(scenario)() is False
    finally:
        settings.LIVE_EDITING = True
        importlib.reload(scidraft.asgi)
