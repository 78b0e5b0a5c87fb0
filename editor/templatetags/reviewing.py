"""`{% latest_send_back note as comment %}`: the reviewer's comment an author should see.

A tag rather than a view's context so the notice can sit in any editor page with one include.
"""

from __future__ import annotations

from django import template

from notes.models import ReviewComment, Status

register = template.Library()


@register.simple_tag
def latest_send_back(note) -> ReviewComment | None:
    """The latest review decision if it sent the note back and the note is still a draft
    (a resubmission or an approval makes it moot)."""
    if note is None or note.status != Status.DRAFT:
        return None
    comment = ReviewComment.objects.latest_for(note)
    if comment is None or comment.kind != ReviewComment.Kind.SEND_BACK:
        return None
    return comment
