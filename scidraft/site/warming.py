"""A worker's V8 contexts, built before its first request (gunicorn's post_worker_init).

A new worker has no V8 context: its first formula waits for KaTeX to load (0.2 s) and its first
reference list for citation-js and the site's CSL style (APA's processor takes a second or
two to build, in each of the contexts a list is formatted in at once). Workers restart every
few thousand requests (gunicorn's max_requests), so that wait would recur; building them in a
background thread as the worker starts moves it off the readers' path.
"""

from __future__ import annotations

import logging
import threading

from django.db import DatabaseError, connection

logger = logging.getLogger(__name__)


def site_citation_style() -> tuple[str | None, str | None]:
    """The site's style and language, read without creating the settings row; (None, None)
    (Vancouver, en-US) when the database cannot tell."""
    from .models import SiteSettings

    try:
        row = SiteSettings.objects.filter(pk=1).values_list("citation_style", "language_code")
        return row.first() or (None, None)
    except DatabaseError:
        return None, None
    finally:
        connection.close()  # this thread's own connection, not kept open for nothing


def warm_process() -> None:
    from bibliography import processor

    style, language = site_citation_style()
    try:
        processor.warm(style, language)
    except Exception:  # a request builds what is missing, as it would have without this
        logger.warning("the worker's V8 contexts could not be built ahead", exc_info=True)


def warm_in_background() -> threading.Thread:
    thread = threading.Thread(target=warm_process, name="scidraft-warm-v8", daemon=True)
    thread.start()
    return thread
