"""Writing together's tests: a fresh channel layer and process state per test, merged saves
debounced in milliseconds instead of seconds."""

from __future__ import annotations

import pytest
from channels.layers import channel_layers

from collaboration import consumers, documents, saving


def _forget_process_state():
    channel_layers.backends.clear()  # a layer's queues belong to the event loop that used it
    documents.forget_all()
    consumers.editors.clear()
    consumers.note_buckets.clear()
    saving.scheduler.__init__()


@pytest.fixture(autouse=True)
def live_process(settings, request):
    from django.db import connections

    # The consumers' rules are the same on any layer: memory unless a test is about Redis
    # (marked redis_layer), so that no test's event loop ends cancelling a consumer blocked in
    # a Redis read, which could outlast the test (an intermittent hang on CI after the
    # in-process daphne of the browser tests had run).
    if request.node.get_closest_marker("redis_layer") is None:
        settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

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
