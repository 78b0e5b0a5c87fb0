"""Saved states of notes."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class NoteRevision(models.Model):
    """One saved state of a note: every save, autosave, publish, restore and import."""

    class Kind(models.TextChoices):
        AUTOSAVE = "autosave", "Autosave"
        SAVE = "save", "Save"
        PUBLISH = "publish", "Publish"
        UNPUBLISH = "unpublish", "Unpublish"
        RESTORE = "restore", "Restore"
        CONFLICT = "conflict", "Refused save (conflict)"
        IMPORT = "import", "Import"
        TRASH = "trash", "Moved to the trash"
        UNTRASH = "untrash", "Restored from the trash"

    note = models.ForeignKey("Note", on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField(help_text="1, 2, … per note.")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    title = models.CharField(max_length=300, blank=True)
    body = models.TextField(blank=True)
    metadata = models.JSONField(
        default=dict, blank=True, help_text="The note's other fields as front matter."
    )
    base_version = models.PositiveIntegerField(
        help_text="The note version the editor started from."
    )
    message = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="note_revisions",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["note", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["note", "number"], name="noterevision_unique_number")
        ]

    def __str__(self) -> str:
        return f"{self.note} #{self.number} ({self.get_kind_display()})"
