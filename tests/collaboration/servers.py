"""A real ASGI server for tests that need one (a browser, a raw socket): daphne in a thread of
the test process, serving scidraft.asgi on a free loopback port, so it shares the test
database (pytest-django's in-memory SQLite included) as pytest-django's live_server does.

    def test_x(live_asgi_server):
        url = live_asgi_server.url          # http://127.0.0.1:<port>
        ws = live_asgi_server.ws_url(note)  # ws://127.0.0.1:<port>/live/notes/<id>/

Twisted's reactor starts once per process, so the server lives for the whole session.
"""

from __future__ import annotations

import threading
import time

import pytest


class InProcessDaphne:
    def __init__(self):
        from daphne.server import Server

        from scidraft.asgi import application

        self.server = Server(
            application=application,
            endpoints=["tcp:port=0:interface=127.0.0.1"],
            signal_handlers=False,
        )
        self.thread = threading.Thread(target=self.server.run, name="daphne", daemon=True)

    def start(self) -> InProcessDaphne:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.listening_addresses:
            if time.monotonic() > deadline:
                raise RuntimeError("daphne did not start listening")
            time.sleep(0.02)
        self.host, self.port = self.server.listening_addresses[0]
        return self

    def idle(self) -> bool:
        """Every application instance (consumer, request) has finished."""
        return all(
            details.get("application_instance") is None or details["application_instance"].done()
            for details in list(self.server.connections.values())
        )

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def ws_url(self, note) -> str:
        return f"ws://{self.host}:{self.port}/live/notes/{note.pk}/"


_server: InProcessDaphne | None = None


@pytest.fixture
def live_asgi_server(transactional_db):
    from asgiref.sync import SyncToAsync
    from django.db import connections

    from collaboration import consumers

    global _server
    if _server is None:
        _server = InProcessDaphne().start()
    # The server's threads close their connections after each use, so none is left open on
    # the test database when pytest-django drops it.
    kept = connections.settings["default"]["CONN_MAX_AGE"]
    connections.settings["default"]["CONN_MAX_AGE"] = 0
    yield _server
    # Consumers save when their last editor leaves: let them finish while the database is
    # still the test's.
    deadline = time.monotonic() + 10
    while (consumers.editors or not _server.idle()) and time.monotonic() < deadline:
        time.sleep(0.02)
    SyncToAsync.single_thread_executor.submit(connections.close_all).result()
    connections.settings["default"]["CONN_MAX_AGE"] = kept
