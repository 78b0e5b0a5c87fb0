"""The editor's preview (note_preview), and what it may cost: an unchanged preview is free, a
changed one is counted.

A preview renders a whole note (up to a second of CPU and more of V8's work), and the editor
asks for one after every pause in typing. Each user's last preview is kept (the cache, one
entry per user): a request for the same text in the same context (the note, its working
context's source hash, the macros being typed, the site's content generation, the answer's
kind) is answered from it without rendering and without counting. Any other preview counts
against the user's limit, EDITOR_PREVIEW_LIMIT previews in any EDITOR_PREVIEW_WINDOW seconds,
counted in the database as accounts' limits are (accounts.limits: rows, not cache keys a
flood can evict), and refused when the database cannot be asked ("fails closed"). A refused
preview is answered 429 with Retry-After; the editor says the preview is paused and asks again
then. A render cut short by time is not kept: asked again, it is rendered again.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import logging
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.db import DatabaseError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from accounts import limits as rate_limits
from accounts.limits import UNAVAILABLE_RETRY, Counted, SlidingWindow, format_wait
from accounts.models import RateLimitEvent
from notes import services
from notes.models import Note
from notes.rendering import source_hash, with_macros
from scidraft.markup import render as markup_render
from scidraft.site.generation import current_generation
from scidraft.site.models import MATH_MACROS_MAX_CHARS

from .views import for_reviewers, problems_html

logger = logging.getLogger(__name__)

SCOPE = "editor-preview"
# A kept answer larger than this is not kept (a note near NOTE_BODY_MAX_BYTES): asking for it
# again is counted, which the limit bounds.
KEPT_MAX_BYTES = 1024 * 1024
KEPT_SECONDS = 15 * 60
SWEEP_SECONDS = 60


def _window() -> SlidingWindow:
    return SlidingWindow(SCOPE, settings.EDITOR_PREVIEW_LIMIT, settings.EDITOR_PREVIEW_WINDOW)


def preview_key(*, note_id: int, source: str, context, kind: str) -> str:
    """What makes two previews the same: the text, everything the stored render's hash covers
    (the context: kinds, style, bibliographies, macros), the content generation (any write:
    a bibliography file, another note's labels) and the kind of answer."""
    digest = hashlib.sha256()
    for part in (str(note_id), kind, str(current_generation()), source_hash(source, context)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _cache_key(user_id: int) -> str:
    return f"editor-preview-last:{user_id}"


def kept(user_id: int, key: str):
    """The user's last preview's answer, if it was for `key`; None otherwise or in an outage."""
    try:
        entry = cache.get(_cache_key(user_id))
    except Exception:  # noqa: BLE001 - an outage costs a counted preview, never an error
        logger.warning("preview cache unavailable", exc_info=True)
        return None
    if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == key:
        return entry[1]
    return None


def keep(user_id: int, key: str, answer, size: int) -> None:
    """Keep `answer` (of `size` bytes) as the user's last preview, in place of the one before."""
    if size > KEPT_MAX_BYTES:
        return
    try:
        cache.set(_cache_key(user_id), (key, answer), KEPT_SECONDS)
    except Exception:  # noqa: BLE001
        logger.warning("preview cache unavailable", exc_info=True)


@dataclass(frozen=True)
class PreviewAllowance:
    allowed: bool
    retry_after: int = 0
    unavailable: bool = False

    @property
    def status(self) -> int:
        return 503 if self.unavailable else 429

    @property
    def message(self) -> str:
        wait = format_wait(self.retry_after)
        if self.unavailable:
            return f"Preview paused for a moment: retrying in {wait}…"
        return f"Preview paused (many previews in a short time): retrying in {wait}…"


def preview_allowance(user) -> PreviewAllowance:
    """Count a changed preview by `user`, or refuse it past the limit (not counted then)."""
    now = rate_limits.clock()
    counted = Counted(_window(), f"user|{user.pk}")
    try:
        tally = rate_limits.record([counted], now)
        if tally.count(counted) > counted.window.limit:
            rate_limits.forget(tally.recorded)
            return PreviewAllowance(False, max(1, tally.retry_after(counted, now)))
        _sweep(now)
    except DatabaseError:
        logger.error("preview rate limiter: database unavailable; refusing", exc_info=True)
        return PreviewAllowance(False, UNAVAILABLE_RETRY, unavailable=True)
    return PreviewAllowance(True)


_last_sweep = -math.inf


def _sweep(now: float) -> None:
    """Delete counted previews past the window, at most once a minute per process."""
    global _last_sweep
    if time.monotonic() - _last_sweep < SWEEP_SECONDS:
        return
    _last_sweep = time.monotonic()
    window = settings.EDITOR_PREVIEW_WINDOW
    RateLimitEvent.objects.filter(scope=SCOPE, at__lte=_moment(now - window)).delete()


def _moment(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC)


# --- The view -----------------------------------------------------------------------------------


def _editable(request, note_id: int) -> Note:
    return get_object_or_404(Note.objects.editable_by(request.user), pk=note_id)


def _wants_json(request) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def preview_json(rendered, html: str) -> dict:
    """The editor's preview: `html` (the render's, its blocks carrying their source lines and
    external images held back), its problems, and the note's labels (for completing
    \\ref{…})."""
    return {
        "html": html,
        "problems": [
            {
                "line": warning.line or 0,
                "code": warning.code,
                "message": warning.message,
                "blocking": warning.code in services.PUBLISH_BLOCKERS,
            }
            for warning in rendered.warnings
        ],
        "labels": [
            {"label": label, "kind": target.get("kind", ""), "text": target.get("text", "")}
            for label, target in rendered.labels.items()
        ],
    }


@never_cache
@login_required
@require_POST
def note_preview(request, note_id: int):
    """The published renderer in the note's context, with its problems: JSON for the editor
    (Accept: application/json, see preview_json), else HTML for the admin's preview
    (static/js/admin-preview.js). The user's last preview again is answered as it was; any
    other is counted (editor.previews) and, past the limit, refused with 429 and Retry-After."""
    note = _editable(request, note_id)
    source = request.POST.get("content", "")
    wants_json = _wants_json(request)
    context = services.working_context(note, reader=request.user)
    if wants_json:
        context = dataclasses.replace(context, source_lines=True)
        if "math_macros" in request.POST:
            # The side panel's macros as typed, not saved yet: the renderer reports any it
            # refuses as problems of the preview, as it does for saved ones.
            macros = request.POST["math_macros"][:MATH_MACROS_MAX_CHARS]
            context = with_macros(context, macros)
    key = preview_key(
        note_id=note.pk, source=source, context=context, kind="json" if wants_json else "html"
    )
    answer = kept(request.user.pk, key)
    if answer is None:
        allowance = preview_allowance(request.user)
        if not allowance.allowed:
            return _preview_refused(allowance, wants_json)
        rendered = markup_render(source, context)
        if wants_json:
            answer = json.dumps(preview_json(rendered, for_reviewers(request, rendered.html)))
        else:
            body = for_reviewers(request, rendered.html)
            answer = problems_html(rendered.warnings) + body
        if rendered.complete:  # a render cut short by time is rendered again when asked
            keep(request.user.pk, key, answer, len(answer))
    if wants_json:
        return HttpResponse(answer, content_type="application/json")
    # Trusted: scidraft.markup sanitises its output; the problems list is escaped.
    return HttpResponse(mark_safe(answer))  # noqa: S308


def _preview_refused(allowance, wants_json: bool) -> HttpResponse:
    if wants_json:
        response = JsonResponse(
            {"status": "paused", "error": allowance.message}, status=allowance.status
        )
    else:
        response = HttpResponse(
            format_html('<p class="render-error">{}</p>', allowance.message),
            status=allowance.status,
        )
    response["Retry-After"] = str(allowance.retry_after)
    return response
