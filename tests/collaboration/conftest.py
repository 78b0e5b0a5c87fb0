"""Writing together's tests: a fresh channel layer and process state per test, merged saves
debounced in milliseconds instead of seconds."""

from __future__ import annotations

import uuid

import pytest
from channels.layers import channel_layers

from collaboration import consumers, documents, limits, saving


def _forget_process_state():
    channel_layers.backends.clear()  # a layer's queues belong to the event loop that used it
    documents.forget_all()
    consumers.editors.clear()
    consumers.note_buckets.clear()
    limits.seats.held.clear()
    saving.scheduler.__init__()


@pytest.fixture(autouse=True)
def live_process(settings):
    from django.db import connections

    # Editors' seats in Redis (with REDIS_URL) under keys of this test's own: note ids repeat
    # from test to test, and a seat lasts a minute.
    settings.CHANNEL_LAYER_PREFIX = f"scidraft-test-{uuid.uuid4().hex}"

    # The channel layer is memory unless a test says otherwise (tests/conftest.py).
    settings.LIVE_SAVE_IDLE_MS = 100
    settings.LIVE_SAVE_MAX_MS = 400
    # Merged saves run in threads of their own on PostgreSQL: their connections close after
    # each use, so none is left on the test database when pytest-django drops it.
    kept = connections.settings["default"]["CONN_MAX_AGE"]
    connections.settings["default"]["CONN_MAX_AGE"] = 0
    _forget_process_state()
    yield
    _forget_process_state()
    connections.settings["default"]["CONN_MAX_AGE"] = kept
