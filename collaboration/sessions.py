"""A socket lives as long as the session it was opened with. Logging out (user_logged_out),
the session's deletion (its row going: a flush, a new key, an admin) and a changed password
(the account's save: access.account_changed has its consumers check) end it at once; an
expired session is found by the check every LIVE_RECHECK_SECONDS, as is anything that sends no
signal. The check is Django's own, as django.contrib.auth.get_user makes it for a request:
the session still exists unexpired, names the same user through a configured backend, and
carries the hash of the account's current password."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import (
    BACKEND_SESSION_KEY,
    HASH_SESSION_KEY,
    SESSION_KEY,
    get_user_model,
    user_logged_out,
)
from django.contrib.sessions.models import Session
from django.db import transaction
from django.db.models.signals import post_delete
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.utils.module_loading import import_string

from . import groups

ENDED = {"type": "live.session_ended"}


def session_key(scope) -> str | None:
    """The key of the session the handshake's cookie named (channels' SessionMiddleware)."""
    session = scope.get("session")
    return getattr(session, "session_key", None) if session is not None else None


def session_holds(key: str | None, user_id: int | None) -> bool:
    """Whether the session `key` still signs `user_id` in (read afresh from the store)."""
    if not key or user_id is None:
        return False
    data = import_string(f"{settings.SESSION_ENGINE}.SessionStore")(key).load()
    if str(data.get(SESSION_KEY)) != str(user_id):
        return False
    if data.get(BACKEND_SESSION_KEY) not in settings.AUTHENTICATION_BACKENDS:
        return False
    user = get_user_model().objects.filter(pk=user_id).first()
    stored = data.get(HASH_SESSION_KEY)
    if user is None or not stored:
        return False
    hashes = [user.get_session_auth_hash(), *user.get_session_auth_fallback_hash()]
    return any(constant_time_compare(stored, current) for current in hashes)


def _end_later(key: str | None) -> None:
    if key:
        transaction.on_commit(lambda: groups.send_from_sync(groups.session_group(key), ENDED))


def logged_out(sender, request=None, user=None, **kwargs):
    # Sent before the session is flushed, and whatever the session engine.
    session = getattr(request, "session", None)
    _end_later(getattr(session, "session_key", None))


def session_deleted(sender, instance, **kwargs):
    # An expired session (clearsessions removes only those) needs no message: the periodic
    # check closes its sockets.
    if instance.expire_date > timezone.now():
        _end_later(instance.session_key)


def connect() -> None:
    user_logged_out.connect(logged_out, dispatch_uid="live.session.logout")
    post_delete.connect(session_deleted, sender=Session, dispatch_uid="live.session.delete")
