"""A published note's unpublished changes."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .authors import Author
from .rendered import RenderedContent


class WorkingCopy(RenderedContent):
    """A published note's unpublished changes, as Wagtail keeps a draft over a live page.

    Saves, autosaves and restores of a published note write here; readers keep seeing the
    Note row (the live version) until "Publish changes" copies this onto it, directly or,
    where the site requires review, once an Editor approves. `fields` holds every other field
    in a revision's metadata form (notes.services.records.note_metadata) plus the default
    bibliographies by name. The row exists only while it differs from the live version.
    """

    note = models.OneToOneField("Note", on_delete=models.CASCADE, related_name="working_copy")
    title = models.CharField(max_length=300, blank=True)
    body = models.TextField(blank=True)
    fields = models.JSONField(default=dict, blank=True)
    # The authors `fields` names, kept in step by notes.services.working: who may edit the
    # note while it has unpublished changes (NoteQuerySet.editable_by).
    authors = models.ManyToManyField(
        Author,
        related_name="working_copies",
        blank=True,
        help_text="The authors being edited, as in fields: they may edit the note.",
    )
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="submitted_working_copies",
        help_text="Who asked for these changes to be published, where review is required.",
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="edited_working_copies",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "working copy"
        verbose_name_plural = "working copies"

    def __str__(self) -> str:
        return f"Unpublished changes to {self.note}"

    @property
    def in_review(self) -> bool:
        return self.submitted_at is not None
