"""The site over ASGI for the browser tests of writing together: the collaboration tests'
in-process daphne (tests/collaboration/servers.py, one per process: Twisted's reactor runs
once), made to serve what a browser needs beside the /live/ sockets.

A thread of the test process, not a subprocess: the SQLite test database lives in this
process's memory (a shared cache that other processes cannot open).
"""

from __future__ import annotations

import contextlib
import os
import time

_prepared: set[str] = set()


@contextlib.asynccontextmanager
async def _one_sync_thread():
    yield


def _one_database_thread() -> None:
    # Django runs each request's synchronous code in a thread of its own; against the
    # in-memory SQLite database their connections lock each other's tables (SQLite's shared
    # cache reports SQLITE_LOCKED at once, with no busy wait) while five editors load pages,
    # previews and autosaves at once. Without the per-request context every synchronous call
    # of the server runs in asgiref's one thread, as the consumers' database calls do.
    import django.core.handlers.asgi as asgi_handler

    asgi_handler.ThreadSensitiveContext = _one_sync_thread


def _own_channel_prefix() -> None:
    """A Redis channel layer (REDIS_URL set) shared with other test runs on the machine would
    carry their notes' updates into ours (the groups are named by note id, and test databases
    number their notes alike): this process's groups get a prefix of their own for the rest of
    the session, the test code's group messages included."""
    from channels.layers import channel_layers
    from django.conf import settings

    config = settings.CHANNEL_LAYERS.get("default", {}).get("CONFIG")
    if config is not None and "prefix" in config:
        config["prefix"] = f"{config['prefix']}-test-{os.getpid()}"
        channel_layers.backends.clear()


def serve_pages(live_asgi_server) -> str:
    """The base URL of `live_asgi_server` (tests/collaboration/servers.py), serving the static
    files too, as pytest-django's live server does (the tests run with DEBUG off, so
    whitenoise would look for collected files only)."""
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    if "once" not in _prepared:
        _one_database_thread()
        _own_channel_prefix()
        _prepared.add("once")
    daphne = live_asgi_server.server
    # daphne reads its application for each new connection.
    if not isinstance(daphne.application, ASGIStaticFilesHandler):
        daphne.application = ASGIStaticFilesHandler(daphne.application)
    return live_asgi_server.url


def wait_until_idle(live_asgi_server, seconds: float = 15) -> None:
    """Return once the server has finished with every connection, pages' and sockets' (a
    consumer's disconnect may still save the document): the test's database is flushed, and
    closed to the server's thread, right after."""
    daphne = live_asgi_server.server
    deadline = time.monotonic() + seconds
    while daphne.connections and time.monotonic() < deadline:
        time.sleep(0.05)
