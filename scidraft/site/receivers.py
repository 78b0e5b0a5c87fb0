"""Any write a reader could see bumps the content generation, in the write's transaction.

Connected for every model of the apps that make up public pages, so admin edits, services and
shell scripts alike invalidate cached pages. Bulk operations send no signals: the services
that use them bump explicitly.
"""

from __future__ import annotations

from django.apps import apps
from django.db.models.signals import m2m_changed, post_delete, post_save

from .caching import bump_generation

# Rows no reader sees (the revision record, derived citation rows, the counter itself, the
# working copy of a published note, consent records).
SILENT = {
    "site.contentgeneration", "notes.noterevision", "notes.notecitation",
    # A published note's unpublished changes and the bylines' consent records.
    "notes.workingcopy", "notes.authorconsent",
}  # fmt: skip
APPS = ("site", "notes", "bibliography")


UNSEEN_STATUSES = {"draft", "review"}
# Rows that belong to one note: they are as visible as it is.
NOTE_LINKS = {"notes.noteauthor", "notes.notebibliography"}


def _unseen_note(instance, created: bool = False) -> bool:
    """A note that is not published and was not when it was read: no reader can see the write
    (an author's autosaves of a draft must not empty everyone's page cache)."""
    if instance._meta.label_lower in NOTE_LINKS:
        instance = instance.note  # an author or bibliography attached to the note
    if instance._meta.label_lower != "notes.note" or instance.status not in UNSEEN_STATUSES:
        return False
    return created or getattr(instance, "stored_status", None) in UNSEEN_STATUSES


def _changed(sender, instance, **kwargs):
    if kwargs.get("raw"):  # loaddata: fixtures are not reader-facing writes
        return
    unseen = _unseen_note(instance, kwargs.get("created", False))
    if kwargs.get("signal") is post_save and instance._meta.label_lower == "notes.note":
        instance.stored_status = instance.status  # what the row holds from now on
    if not unseen:
        bump_generation()


def _m2m_changed(sender, instance, action, **kwargs):
    if action in {"post_add", "post_remove", "post_clear"} and not _unseen_note(instance):
        bump_generation()


def connect() -> None:
    for label in APPS:
        for model in apps.get_app_config(label).get_models():
            if model._meta.label_lower in SILENT:
                continue
            uid = f"generation:{model._meta.label_lower}"
            post_save.connect(_changed, sender=model, dispatch_uid=uid + ":save")
            post_delete.connect(_changed, sender=model, dispatch_uid=uid + ":delete")
            for field in model._meta.local_many_to_many:
                through = field.remote_field.through
                m2m_changed.connect(_m2m_changed, sender=through, dispatch_uid=uid + field.name)
