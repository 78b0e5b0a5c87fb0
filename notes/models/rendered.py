"""What notes and pages share: the stored render, the publication status, and the field
validators and date reading both use."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Left
from django.utils import timezone

from scidraft.markup import limits as render_limits
from scidraft.site.models import validate_share_buttons


def in_written_offset(moment: dt.datetime, offset_minutes: int | None) -> dt.datetime:
    """`moment` in the UTC offset its front matter was written in; the site's zone if none."""
    if offset_minutes is None:
        return timezone.localtime(moment)
    return moment.astimezone(dt.timezone(dt.timedelta(minutes=offset_minutes)))


def validate_string_list(value) -> None:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValidationError("Write a list of words or phrases.")


def validate_share_buttons_or_none(value) -> None:
    if value is not None:
        validate_share_buttons(value)


class RenderedContent(models.Model):
    """Output of scidraft.markup.render, stored at save time (ARCHITECTURE "Caching" 1)."""

    rendered_html = models.TextField(blank=True, editable=False)
    rendered_card_html = models.TextField(blank=True, editable=False)
    rendered_toc = models.TextField(blank=True, editable=False)
    rendered_text = models.TextField(blank=True, editable=False)
    word_count = models.PositiveIntegerField(default=0, editable=False)
    render_flags = models.JSONField(default=dict, blank=True, editable=False)
    render_labels = models.JSONField(default=dict, blank=True, editable=False)
    render_citations = models.JSONField(default=list, blank=True, editable=False)
    render_warnings = models.JSONField(default=list, blank=True, editable=False)
    # What each \ref to another note resolved to (Rendered.references): checked when read.
    render_refs = models.JSONField(default=dict, blank=True, editable=False)
    render_version = models.CharField(max_length=40, blank=True, editable=False)
    source_hash = models.CharField(max_length=64, blank=True, editable=False)

    class Meta:
        abstract = True


def body_size_error(body: str) -> str | None:
    """What is wrong with a body over NOTE_BODY_MAX_BYTES (UTF-8), saying both sizes."""
    limit = settings.NOTE_BODY_MAX_BYTES
    size = render_limits.oversized(body, limit)
    if not size:
        return None
    return (
        f"The note is {size:,} bytes ({render_limits.describe_bytes(size)}); "
        f"the limit is {limit:,} bytes ({render_limits.describe_bytes(limit)}). "
        "Split it into several notes. Nothing was saved."
    )


class Status(models.TextChoices):
    DRAFT = "draft", "Draft"
    REVIEW = "review", "Submitted for review"
    PUBLISHED = "published", "Published"


# How much of the card HTML an excerpt reads (notes.excerpts): far more than 70 words and their
# formulas need, without loading the whole card of every long note a list or feed quotes.
EXCERPT_SOURCE_CHARS = 64_000


class RenderedQuerySet(models.QuerySet):
    def with_excerpt_source(self, *, untitled_only: bool = False):
        """Each row with `excerpt_source`, the start of its card HTML (notes.excerpts); with
        `untitled_only`, only rows without a title get it (their opening words stand in)."""
        source = Left("rendered_card_html", EXCERPT_SOURCE_CHARS)
        if untitled_only:
            source = models.Case(
                models.When(title="", then=source),
                default=models.Value(""),
                output_field=models.TextField(),
            )
        return self.annotate(excerpt_source=source)
