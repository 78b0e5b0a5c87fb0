"""Database work for browser tests, done off the main thread.

The main thread holds Playwright's event loop, in which the math engine (mini-racer) refuses to
run, and the live server only sees rows committed by a connection of another thread.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from django.db import connections


def in_worker(function, *args, **kwargs):
    """`function(*args, **kwargs)` run in a thread of its own, its connections closed after."""

    def run():
        try:
            return function(*args, **kwargs)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(run).result()
