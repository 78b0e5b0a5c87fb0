"""gunicorn settings, from the environment (docker-compose and the benchmarks use them).

Threads (gthread) suit SciDraft: a cached page is I/O-bound, and a worker's threads borrow V8
contexts for KaTeX from a pool of the worker's own, created after the fork
(scidraft.markup.v8pool).
"""

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
worker_class = "gthread"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 20
keepalive = 5
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "2000"))
max_requests_jitter = 200
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")
errorlog = "-"
# The app is loaded in each worker after the fork: nothing (V8, database connections) is
# shared between processes.
preload_app = False


def post_fork(server, worker):
    """Cap the C allocator's arenas before the worker starts its threads (scidraft.allocator);
    GUNICORN_MALLOC_ARENAS=0 keeps glibc's default, as does MALLOC_ARENA_MAX when set."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return
    from scidraft.allocator import limit_arenas

    limit_arenas(int(os.environ.get("GUNICORN_MALLOC_ARENAS", "2")))


def post_worker_init(worker):
    """Build the worker's V8 contexts (KaTeX, citation-js with the site's style) in the
    background as it starts (scidraft.site.warming); SCIDRAFT_WARM=0 leaves them to the
    first requests."""
    if os.environ.get("SCIDRAFT_WARM", "1") != "0":
        from scidraft.site.warming import warm_in_background

        warm_in_background()
