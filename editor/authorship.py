"""Being named on a note: its author (or an Editor for them) confirms, or declines."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from notes import services


@never_cache
@login_required
@require_POST
def authorship_confirm(request, note_id: int, author_id: int):
    """The author, or an Editor for them, agrees to be named on the note."""
    try:
        services.authorship_confirm(note_id=note_id, author_id=author_id, user=request.user)
    except services.AuthorshipError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Confirmed: the note may be published with this name.")
    return redirect(_same_site(request, request.POST.get("next", "")) or "editor:dashboard")


def _same_site(request, target: str) -> str | None:
    """`target` if it is a path or URL of this site (a form's `next`), else None: a redirect
    never takes a signed-in person elsewhere."""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return None


@never_cache
@login_required
@require_POST
def authorship_decline(request, note_id: int):
    """The user declines being named on the note: their name leaves its authors."""
    try:
        services.authorship_decline(note_id=note_id, user=request.user)
    except services.AuthorshipError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Declined: your name is no longer on that note.")
    return redirect("editor:dashboard")
