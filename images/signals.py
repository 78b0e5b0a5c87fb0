"""A deleted NoteImage row (or its note) takes its stored file with it, once committed."""

from __future__ import annotations

from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from .models import NoteImage


@receiver(post_delete, sender=NoteImage)
def _delete_stored_file(sender, instance: NoteImage, **kwargs) -> None:
    name, storage = instance.file.name, instance.file.storage
    if name:
        # After the commit: a rolled-back delete must still find its file.
        transaction.on_commit(lambda: storage.delete(name))
