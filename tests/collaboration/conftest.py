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
    saving.scheduler.__init__()


@pytest.fixture(autouse=True)
def live_process(settings):
    settings.LIVE_SAVE_IDLE_MS = 100
    settings.LIVE_SAVE_MAX_MS = 400
    _forget_process_state()
    yield
    _forget_process_state()
