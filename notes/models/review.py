"""Reviewers' decisions on notes submitted for review."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils import timezone

if TYPE_CHECKING:
    from .notes import Note


class ReviewCommentQuerySet(models.QuerySet):
    def latest_for(self, note: Note) -> ReviewComment | None:
        return self.filter(note=note).select_related("reviewer").first()


class ReviewComment(models.Model):
    """A reviewer's decision on a note submitted for review (site setting "require review"):
    sent back with a comment for its authors, or approved (which published it)."""

    class Kind(models.TextChoices):
        SEND_BACK = "send_back", "Sent back"
        APPROVE = "approve", "Approved"

    note = models.ForeignKey("Note", on_delete=models.CASCADE, related_name="review_comments")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="review_comments",
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    body = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = ReviewCommentQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.note}"
