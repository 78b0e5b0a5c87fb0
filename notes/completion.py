"""Renders cut short by time, completed in the background.

A render that ran out of time (scidraft.markup.limits.Outcome) is not final: the note keeps its
previous complete render, or shows the incomplete one marked as such, and this module renders
it again with more time (notes.services.renders.note_render_complete) once the write that made
it commits. One thread per process does it, a note at a time, so that completions never take
more than a core from the requests; a note is queued once however often it is asked for. A
note whose render is still owed when read (its process ended first) is queued again by the
public views (notes.views).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import connection, transaction

logger = logging.getLogger(__name__)

# Seconds between tries: a machine busy enough to cut a render short may be less busy soon.
RETRY_SECONDS = 2.0

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
# Notes queued or being completed → whether they were asked for again meanwhile.
_queued: dict[int, bool] = {}
_idle = threading.Condition(_lock)


def schedule(note_id: int) -> None:
    """Complete the note's render in the background once the current transaction commits."""
    transaction.on_commit(lambda: submit(note_id))


def submit(note_id: int) -> None:
    global _executor
    with _lock:
        if note_id in _queued:
            _queued[note_id] = True
            return
        _queued[note_id] = False
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="render-completion")
        executor = _executor
    executor.submit(_complete, note_id)


def _complete(note_id: int) -> None:
    from .services.renders import note_render_complete

    try:
        again = True
        while again:
            for attempt in range(1, settings.RENDER_COMPLETION_TRIES + 1):
                final = attempt == settings.RENDER_COMPLETION_TRIES
                if note_render_complete(note_id=note_id, final=final):
                    break
                time.sleep(RETRY_SECONDS)
            with _lock:
                again = _queued[note_id]
                _queued[note_id] = False
    except Exception:
        logger.exception("the render of note %s could not be completed", note_id)
    finally:
        with _lock:
            _queued.pop(note_id, None)
            _idle.notify_all()
        connection.close()  # this thread's own connection, not kept open between notes


def wait(timeout: float | None = None) -> bool:
    """Block until no completion is queued or running (commands and tests); whether none is."""
    with _lock:
        return _idle.wait_for(lambda: not _queued, timeout)


def _after_fork() -> None:
    # The parent's executor counts a thread the child does not have.
    global _executor, _lock, _idle
    _executor, _lock = None, threading.Lock()
    _idle = threading.Condition(_lock)
    _queued.clear()


os.register_at_fork(after_in_child=_after_fork)
