"""Who may join a note's live document: exactly who may edit it in the editor
(Note.objects.editable_by, the editor views' rule, which follows the authors being edited: a
co-author a working copy no longer names loses access at once, not when the change is
published). Checked at connect, again whenever the note's authors change
(on the row or in the working copy) or the person's account does (a group message makes each
consumer check), and every LIVE_RECHECK_SECONDS."""

from __future__ import annotations

from functools import partial

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_init, post_save

from notes.models import Note, NoteAuthor, WorkingCopy

from . import groups

RECHECK = {"type": "live.recheck"}


def may_edit(user_id: int | None, note_id: int) -> bool:
    """Read afresh: the account may have been deactivated or its roles changed since the
    socket opened (a user object keeps its permissions cached)."""
    if user_id is None:
        return False
    user = get_user_model().objects.filter(pk=user_id).first()
    return user is not None and Note.objects.editable_by(user).filter(pk=note_id).exists()


def _recheck_later(group: str) -> None:
    transaction.on_commit(partial(groups.send_from_sync, group, RECHECK))


def authors_changed(sender, instance, **kwargs):
    _recheck_later(groups.note_group(instance.note_id))


def _copy_authors(instance):
    fields = instance.__dict__.get("fields")  # absent from the instance when deferred
    return fields.get("authors") if isinstance(fields, dict) else None


def copy_loaded(sender, instance, **kwargs):
    # The authors as read, to tell at its save whether they changed.
    instance._live_authors = _copy_authors(instance)


def copy_saved(sender, instance, created=False, **kwargs):
    # The working copy is written at every autosave: its editors check again only when its
    # authors changed (a new copy may name others than the row).
    authors = _copy_authors(instance)
    if created or authors != getattr(instance, "_live_authors", None):
        _recheck_later(groups.note_group(instance.note_id))
    instance._live_authors = authors


def note_deleted(sender, instance, **kwargs):
    _recheck_later(groups.note_group(instance.pk))


def note_trashed(sender, instance, **kwargs):
    # A note in the trash is edited by no one (note_delete): its live editors check again.
    if instance.deleted_at is not None:
        _recheck_later(groups.note_group(instance.pk))


def account_changed(sender, instance, created=False, update_fields=None, **kwargs):
    # A new account has no socket; a login only stamps last_login.
    if created or (update_fields is not None and set(update_fields) <= {"last_login"}):
        return
    _recheck_later(groups.user_group(instance.pk))


def roles_changed(sender, instance, action, reverse=False, pk_set=None, **kwargs):
    if not action.startswith("post_"):
        return
    User = get_user_model()
    if isinstance(instance, User):
        _recheck_later(groups.user_group(instance.pk))
    else:  # a group's members changed, from the group's side
        for user_id in pk_set or User.objects.filter(groups=instance).values_list("pk", flat=True):
            _recheck_later(groups.user_group(user_id))


def connect() -> None:
    User = get_user_model()
    post_save.connect(authors_changed, sender=NoteAuthor, dispatch_uid="live.authors.save")
    post_delete.connect(authors_changed, sender=NoteAuthor, dispatch_uid="live.authors.delete")
    post_delete.connect(note_deleted, sender=Note, dispatch_uid="live.note.delete")
    post_init.connect(copy_loaded, sender=WorkingCopy, dispatch_uid="live.copy.load")
    post_save.connect(copy_saved, sender=WorkingCopy, dispatch_uid="live.copy.save")
    post_delete.connect(authors_changed, sender=WorkingCopy, dispatch_uid="live.copy.delete")
    post_save.connect(note_trashed, sender=Note, dispatch_uid="live.note.trash")
    post_save.connect(account_changed, sender=User, dispatch_uid="live.account")
    m2m_changed.connect(roles_changed, sender=User.groups.through, dispatch_uid="live.roles")
