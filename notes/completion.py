"""Renders cut short by time, completed in the background.

A render of a note or a page that ran out of time (scidraft.markup.limits.Outcome) is not
final: the row keeps its previous complete render, or shows the incomplete one marked as such,
and this module renders it again with more time (notes.services.renders) once the write that
made it commits. One thread per process does it, a row at a time, so that completions never
take more than a core from the requests; a row is queued once however often it is asked for.
A row whose render is still owed when read (its process ended first) is queued again by the
public views (notes.views)."""

from __future__ import annotations

import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import connection, transaction

logger = logging.getLogger(__name__)

NOTE, PAGE = "note", "page"

# Seconds between tries: a machine busy enough to cut a render short may be less busy soon.
RETRY_SECONDS = 2.0

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
# (kind, id) of the rows queued or being completed → whether asked for again meanwhile.
_queued: dict[tuple[str, int], bool] = {}
_idle = threading.Condition(_lock)


def schedule(kind: str, pk: int) -> None:
    """Complete the render of the note or page (NOTE, PAGE) in the background once the
    current transaction commits."""
    transaction.on_commit(lambda: submit(kind, pk))


def submit(kind: str, pk: int) -> None:
    global _executor
    key = (kind, pk)
    with _lock:
        if key in _queued:
            _queued[key] = True
            return
        _queued[key] = False
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="render-completion")
        executor = _executor
    executor.submit(_complete, key)


def _complete(key: tuple[str, int]) -> None:
    from .services.renders import note_render_complete, page_render_complete

    kind, pk = key
    try:
        again = True
        while again:
            for attempt in range(1, settings.RENDER_COMPLETION_TRIES + 1):
                final = attempt == settings.RENDER_COMPLETION_TRIES
                done = (
                    note_render_complete(note_id=pk, final=final)
                    if kind == NOTE
                    else page_render_complete(page_id=pk, final=final)
                )
                if done:
                    break
                time.sleep(RETRY_SECONDS)
            with _lock:
                again = _queued[key]
                _queued[key] = False
    except Exception:
        logger.exception("the render of %s %s could not be completed", kind, pk)
    finally:
        with _lock:
            _queued.pop(key, None)
            _idle.notify_all()
        connection.close()  # this thread's own connection, not kept open between rows


def complete_owed() -> int:
    """Complete every stored render of a note or page that waits for one (a bulk write, such
    as an import, whose process ends before a background thread would), and wait for them;
    how many there were."""
    from django.db.models import Q

    from .models import Note, Page
    from .rendering import INCOMPLETE, PENDING

    owed = Q(render_flags__has_key=INCOMPLETE) | Q(render_flags__has_key=PENDING)
    keys = [(NOTE, pk) for pk in Note.objects.filter(owed).values_list("pk", flat=True)]
    keys += [(PAGE, pk) for pk in Page.objects.filter(owed).values_list("pk", flat=True)]
    for kind, pk in keys:
        submit(kind, pk)
    wait()
    return len(keys)


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
