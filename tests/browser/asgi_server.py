"""The site over ASGI (pages and the /live/ sockets on one origin) for the browser tests of
writing together, run by daphne in a thread of the test process against the test database.

A thread, not a subprocess: the SQLite test database lives in this process's memory (a shared
cache that other processes cannot open). Twisted's reactor runs once per process, so the server
starts on first use and serves every later test of the session; the tests' databases are
flushed under it as under pytest-django's live_server.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time

_started: dict = {}
_lock = threading.Lock()


@contextlib.asynccontextmanager
async def _one_sync_thread():
    yield


def _own_channel_prefix() -> None:
    """A Redis channel layer (REDIS_URL set) shared with other test runs on the machine would
    carry their notes' updates into ours (the groups are named by note id, and test databases
    number their notes alike): this process's groups get a prefix of their own, for the whole
    session, as the server lives that long; the test code's group messages use it too."""
    from channels.layers import channel_layers
    from django.conf import settings

    config = settings.CHANNEL_LAYERS.get("default", {}).get("CONFIG")
    if config is not None and "prefix" in config:
        config["prefix"] = f"{config['prefix']}-test-{os.getpid()}"
        channel_layers.backends.clear()


def _application():
    """scidraft.asgi's application, with the static files served as by the live server."""
    # Django runs each request's synchronous code in a thread of its own; against the
    # in-memory SQLite database their connections would lock each other's tables (SQLite's
    # shared cache reports SQLITE_LOCKED at once, with no busy wait). Without the per-request
    # context every synchronous call of the server, pages and consumers alike, runs in asgiref's
    # one thread, on one connection, as pytest-django's live server does it on SQLite.
    import django.core.handlers.asgi as asgi_handler
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    asgi_handler.ThreadSensitiveContext = _one_sync_thread
    _own_channel_prefix()
    from scidraft.asgi import application

    return ASGIStaticFilesHandler(application)


def asgi_live_url() -> str:
    """http://127.0.0.1:<port> of the daphne thread, started on first use."""
    with _lock:
        if "url" in _started:
            return _started["url"]
        # Importing daphne.server installs Twisted's asyncio reactor on a loop of its own; it
        # never touches the main thread's loop, where Playwright's runs.
        from daphne.server import Server

        ready = threading.Event()
        server = Server(
            application=_application(),
            endpoints=["tcp:port=0:interface=127.0.0.1"],
            signal_handlers=False,  # only the main thread may install them
            ready_callable=ready.set,
            verbosity=0,
        )
        threading.Thread(target=server.run, name="daphne", daemon=True).start()
        if not ready.wait(10):
            raise RuntimeError("daphne did not start")
        for _ in range(100):
            if server.listening_addresses:
                break
            threading.Event().wait(0.05)
        else:
            raise RuntimeError("daphne does not listen")
        host, port = server.listening_addresses[0]
        _started["url"] = f"http://{host}:{port}"
        _started["server"] = server
        return _started["url"]


def wait_until_idle(seconds: float = 15) -> None:
    """Return once the server has finished with every connection (a consumer's disconnect
    may still save the document): the test's database is flushed, and closed to the server's
    thread, right after."""
    server = _started.get("server")
    deadline = time.monotonic() + seconds
    while server is not None and server.connections and time.monotonic() < deadline:
        time.sleep(0.05)


def close_connections() -> None:
    """Close the database connection of the server's one synchronous thread, so that the test
    database can be dropped at the end of the session (PostgreSQL refuses while it is open)."""
    if "server" not in _started:
        return
    from asgiref.sync import SyncToAsync
    from django.db import connections

    SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=10)
