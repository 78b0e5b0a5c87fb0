"""Standalone pages at the site root."""

from __future__ import annotations

import datetime as dt

from django.contrib.postgres.search import SearchVectorField
from django.db import models

from .. import search_index
from .authors import Author
from .rendered import (
    RenderedContent,
    RenderedQuerySet,
    Status,
    in_written_offset,
    validate_string_list,
)


class PageQuerySet(RenderedQuerySet):
    def published(self):
        return self.filter(status=Status.PUBLISHED)


class Page(RenderedContent):
    """A standalone page at the site root: about, A–Z pages, search, archives
    (docs/theme.md#standalone-pages).

    The PaperMod toggles are nullable: blank follows the site setting of the same name.
    """

    class Layout(models.TextChoices):
        PAGE = "", "Page"
        SEARCH = "search", "Search"
        ARCHIVES = "archives", "Archives"

    slug = models.SlugField(max_length=200, unique=True, allow_unicode=True)
    title = models.CharField(max_length=300)
    body = models.TextField(blank=True)
    description = models.TextField(blank=True)
    summary = models.TextField(blank=True)
    date = models.DateTimeField(null=True, blank=True)
    date_offset_minutes = models.SmallIntegerField(null=True, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PUBLISHED)
    layout = models.CharField(max_length=20, choices=Layout.choices, default="", blank=True)
    placeholder = models.CharField(max_length=200, blank=True, help_text="Search input hint.")
    authors = models.ManyToManyField(Author, related_name="pages", blank=True)
    weight = models.IntegerField(default=0)
    keywords = models.JSONField(default=list, blank=True, validators=[validate_string_list])
    canonical_url = models.URLField(blank=True)
    search_hidden = models.BooleanField(default=False)
    # Kept by save() on PostgreSQL (notes.search_index); empty elsewhere.
    search_vector = SearchVectorField(null=True, editable=False)
    hidden_in_rss = models.BooleanField(default=False)
    robots_noindex = models.BooleanField(default=False)
    disable_share = models.BooleanField(default=False)

    show_toc = models.BooleanField(null=True, blank=True)
    show_reading_time = models.BooleanField(null=True, blank=True)
    show_word_count = models.BooleanField(null=True, blank=True)
    show_breadcrumbs = models.BooleanField(null=True, blank=True)
    show_post_nav_links = models.BooleanField(null=True, blank=True)
    show_code_copy_buttons = models.BooleanField(null=True, blank=True)
    show_related_posts = models.BooleanField(null=True, blank=True)
    hide_meta = models.BooleanField(default=False)
    hide_author = models.BooleanField(default=False)
    hide_description = models.BooleanField(default=False)
    hide_summary = models.BooleanField(default=False)
    hide_footer = models.BooleanField(default=False)
    comments = models.BooleanField(default=False)
    disable_anchored_headings = models.BooleanField(default=False)
    params = models.JSONField(default=dict, blank=True)

    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = PageQuerySet.as_manager()

    class Meta:
        ordering = ["weight", "title"]

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs):
        super().save(*args, **kwargs)
        if search_index.touches_index(kwargs.get("update_fields")):
            search_index.vectors_store(Page.objects.filter(pk=self.pk))

    @property
    def local_date(self) -> dt.datetime | None:
        """The date in the offset it was written in, as for notes."""
        return in_written_offset(self.date, self.date_offset_minutes) if self.date else None
