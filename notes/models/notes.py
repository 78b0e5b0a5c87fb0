"""The note and its querysets.

Field names follow the theme's front matter (docs/theme.md#front-matter) so that a Hugo site
imports and exports without loss; keys the model has no column for (entry-set fields such as
`mathTitle`, and any unknown key) are kept verbatim in `params`.
"""

from __future__ import annotations

import datetime as dt
import json
import random

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone

from scidraft.site.models import MATH_MACROS_MAX_CHARS, validate_math_macros

from .. import search_index
from ..feed import DRAW_KEYS, draw_key
from .authors import Author, NoteAuthor
from .rendered import (
    RenderedContent,
    RenderedQuerySet,
    Status,
    body_size_error,
    in_written_offset,
    validate_share_buttons_or_none,
    validate_string_list,
)
from .tags import Tag, tag_name
from .working import WorkingCopy


class NoteQuerySet(RenderedQuerySet):
    def published(self, now: dt.datetime | None = None):
        """What readers see: published, due, and not empty (docs/theme.md#front-matter). A note
        in the trash is never published (deleting unpublishes); the test holds that even so."""
        now = now or timezone.now()
        return self.filter(
            status=Status.PUBLISHED, date__lte=now, has_body=True, deleted_at__isnull=True
        )

    def not_trashed(self):
        """Every note but those in the trash: what the admin lists and a Hugo export writes (a
        trashed note is on its way out; exported, a re-import would bring it back as a draft)."""
        return self.filter(deleted_at__isnull=True)

    def trashed(self):
        """Notes in the trash (note_delete), newest deletion first: Editors restore them."""
        return self.filter(deleted_at__isnull=False).order_by("-deleted_at", "-pk")

    def scheduled(self, now: dt.datetime | None = None):
        return self.filter(status=Status.PUBLISHED, date__gt=now or timezone.now())

    def promotions(self):
        return self.filter(promotion=True)

    def regular(self):
        return self.filter(promotion=False)

    def in_feed_order(self):
        # Hugo's default page order: weight ascending (0 = unset, last), then newest first.
        return self.annotate(
            _weighted=models.Case(
                models.When(weight=0, then=1), default=0, output_field=models.IntegerField()
            )
        ).order_by("_weighted", "weight", "-date", "slug")

    def count_in_feed(self) -> tuple[int, int]:
        """(all, pinned) rows: one pass over the feed index, which holds every column used."""
        counts = self.aggregate(
            total=models.Count("pk"), pinned=models.Count("pk", filter=~Q(weight=0))
        )
        return counts["total"], counts["pinned"]

    def page_in_feed_order(self, offset: int, limit: int, pinned: int) -> list:
        """`in_feed_order()[offset:offset + limit]` without sorting every row: pinned notes
        (weight ≠ 0, few) come first, then the rest newest first straight from the feed index.
        `pinned` is their number (count_in_feed)."""
        ids = []
        if offset < pinned:
            ids += (
                self.exclude(weight=0)
                .order_by("weight", "-date", "slug")
                .values_list("pk", flat=True)[offset : offset + limit]
            )
        if len(ids) < limit:
            start = max(0, offset - pinned)
            ids += (
                self.filter(weight=0)
                .order_by("-date", "slug")
                .values_list("pk", flat=True)[start : start + limit - len(ids)]
            )
        rows = self.filter(pk__in=ids).order_by().in_bulk()  # placed in `ids` order below
        return [rows[pk] for pk in ids]

    def for_cards(self):
        """What a card or list entry needs, in a constant number of queries."""
        return self.prefetch_related(*card_prefetches()).card_columns()

    def card_columns(self):
        """The columns a card reads (presentation.card, the feed's stale-render check), without
        its authors and tags: for rows read by several queries (a feed page and its promotions)
        whose cards are then completed together by prefetch_cards, in two queries rather than
        two per read. Only these: every other column costs its conversion (six are JSON)."""
        return self.only(
            "slug", "title", "date", "date_offset_minutes", "institute", "show_title",
            "render_flags", "rendered_card_html", "render_version", "source_hash", "render_refs",
            "tag_order",
        )  # fmt: skip

    def with_authorships(self):
        """Each note's authorships with their authors (bylines, citable works), in one query."""
        return self.prefetch_related(_authorships())

    def for_entries(self):
        """List entries (tags, authors): title, summary or excerpt, and date; no byline."""
        return self.only(
            "slug", "title", "summary", "date", "date_offset_minutes"
        ).with_excerpt_source()

    def with_tag(self, tag):
        return self.filter(tags=tag)

    def recommended(self, note, start: int, count: int) -> list[tuple[str, str]]:
        """(slug, title) of the first `count` regular notes at or after `start` on the
        recommendation ring (Note.draw_key), wrapping round; never `note` itself. One indexed
        read of `count` rows, two when the ring wraps (note_draw_idx)."""
        ring = (
            self.regular()
            .exclude(pk=note.pk)
            .order_by("draw_key", "slug")
            .values_list("slug", "title")
        )
        rows = list(ring.filter(draw_key__gte=start)[:count])
        if len(rows) < count:
            rows += ring.filter(draw_key__lt=start)[: count - len(rows)]
        return rows

    def references_waiting(self):
        """Published notes whose cited files changed since their live version went live, where
        the site requires review: publishing again would change their reference lists
        (LiveBibliography.changed)."""
        return self.filter(status=Status.PUBLISHED, live_bibliography__changed=True)

    def with_working_copy_state(self):
        """Each note with `has_changes` (a working copy exists) and `changes_in_review` (its
        changes were submitted for review), for lists of notes in the editor."""
        copies = WorkingCopy.objects.filter(note=models.OuterRef("pk"))
        return self.annotate(
            has_changes=models.Exists(copies),
            changes_in_review=models.Exists(copies.filter(submitted_at__isnull=False)),
        )

    def for_dashboard(self, user, *, mine: bool):
        """The editor's list of notes for `user`: what they may edit (every note for Editors),
        or with `mine` only notes they created or are named on; newest change first, with what
        each row shows (authors, working-copy state, problem count) in a constant number of
        queries."""
        notes = self.editable_by(user)
        if mine:
            notes = notes.filter(Q(created_by=user) | Q(authors__user=user)).distinct()
        copies = WorkingCopy.objects.filter(note=models.OuterRef("pk"))
        return (
            notes.with_working_copy_state()
            .annotate(
                copy_warnings=models.Subquery(copies.values("render_warnings")[:1]),
            )
            .prefetch_related(_authorships())
            .only(
                "pk",
                "slug",
                "title",
                "status",
                "date",
                "updated_at",
                "created_by",
                "render_warnings",
            )  # fmt: skip
            .order_by("-updated_at", "-pk")
        )

    def dashboard_filtered(self, *, q="", status="", author="", tag="", problems="", now=None):
        """for_dashboard's rows narrowed by the dashboard's filters (blank: no filter)."""
        now = now or timezone.now()
        notes = self
        if q:
            notes = notes.filter(title__icontains=q)
        if status == "scheduled":
            notes = notes.filter(status=Status.PUBLISHED, date__gt=now)
        elif status == "published":
            notes = notes.filter(status=Status.PUBLISHED, date__lte=now)
        elif status == "review":
            notes = notes.filter(Q(status=Status.REVIEW) | Q(changes_in_review=True))
        elif status == "changes":
            notes = notes.filter(has_changes=True)
        elif status == Status.DRAFT:
            notes = notes.filter(status=Status.DRAFT)
        if author:
            notes = notes.filter(
                pk__in=NoteAuthor.objects.filter(author__handle=author).values("note")
            )
        if tag:
            notes = notes.filter(
                pk__in=Note.tags.through.objects.filter(tag__slug=tag).values("note")
            )
        if problems:
            # What the authors edit has warnings: the working copy's render, else the note's.
            notes = notes.filter(
                Q(has_changes=True, working_copy__render_warnings__0__isnull=False)
                | Q(has_changes=False, render_warnings__0__isnull=False)
            )
        return notes

    def awaiting_review(self):
        """Drafts submitted for their first publication and published notes whose changes were
        submitted."""
        return self.filter(
            Q(status=Status.REVIEW) | Q(working_copy__submitted_at__isnull=False),
            deleted_at__isnull=True,
        )

    def visible_to(self, user):
        """What `user` may read: published notes, and those `user` may edit (drafts,
        scheduled and in review included)."""
        if not user.is_authenticated or not user.is_active:
            return self.published()
        editable = Note.objects.editable_by(user).values("pk")
        return self.filter(Q(pk__in=self.published().values("pk")) | Q(pk__in=editable))

    def editable_by(self, user):
        """The notes `user` may edit (the editor and its side endpoints, images of drafts, the
        live document): every note for Editors and Admins; for an Author, those that name them
        among the authors being edited: a published note's working copy when it has one, else
        the note's own authors. Taking someone off in the working copy ends their access at
        once, though readers see the byline change only when it is published. A note in the
        trash is edited by no one (restore it first): its every editor page answers 404."""
        if not user.is_authenticated or not user.is_active:
            return self.none()
        notes = self.filter(deleted_at__isnull=True)
        if user.is_superuser or user.has_perm("notes.edit_any_note"):
            return notes
        named_in_copy = WorkingCopy.objects.filter(authors__user=user).values("note_id")
        named_on_row = NoteAuthor.objects.filter(author__user=user).values("note_id")
        has_copy = models.Exists(WorkingCopy.objects.filter(note=models.OuterRef("pk")))
        return notes.filter(Q(pk__in=named_in_copy) | (Q(pk__in=named_on_row) & ~has_copy))


def _authorships() -> models.Prefetch:
    return models.Prefetch("authorships", queryset=NoteAuthor.objects.select_related("author"))


def card_prefetches() -> tuple[models.Prefetch, ...]:
    return _authorships(), models.Prefetch("tags", queryset=Tag.objects.order_by("name"))


def _random_draw_key() -> int:
    return random.randrange(DRAW_KEYS)  # noqa: S311 - a spread, not a secret


def prefetch_cards(notes) -> None:
    """Authorships, authors and tags of `notes` (card_columns rows), in two queries."""
    models.prefetch_related_objects(list(notes), *card_prefetches())


class Note(RenderedContent):
    """A note: the one content type of the theme, of any length (docs/theme.md#front-matter)."""

    # What decides which lists a note is on, and where (scidraft.site.receivers).
    LISTING_FIELDS = (
        "status", "date", "weight", "promotion", "slug", "has_body", "deleted_at",
        "hidden_in_rss",  # on the RSS feeds or not
    )  # fmt: skip

    slug = models.SlugField(max_length=200, unique=True, allow_unicode=True)
    title = models.CharField(max_length=300, blank=True)
    body = models.TextField(blank=True, help_text="Markdown with LaTeX math and shortcodes.")
    # Kept by save(): an empty note is "not yet published" (docs/theme.md#front-matter), and
    # testing the body itself in every feed query reads every body (160 ms at 10,000 notes).
    has_body = models.BooleanField(default=False, editable=False)
    date = models.DateTimeField(
        default=timezone.now, help_text="Sort key; a future date schedules the note."
    )
    date_offset_minutes = models.SmallIntegerField(
        null=True,
        blank=True,
        help_text="UTC offset the date was written in (+09:00 → 540); dates print in it. "
        "Blank: the site time zone.",
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.DRAFT)

    authors = models.ManyToManyField(Author, through="NoteAuthor", related_name="notes", blank=True)
    institute = models.CharField(
        max_length=200, blank=True, help_text="Overrides the site's institute."
    )
    tags = models.ManyToManyField(Tag, related_name="notes", blank=True)
    # The theme lists a note's tags as its front matter has them (`range .Params.tags`), not
    # by name: the names in the author's order, kept beside the relation (which answers "the
    # notes of a tag"). Tags set elsewhere (the admin) follow these, by name.
    tag_order = models.JSONField(
        default=list, blank=True, help_text="The tags' names in the order the author gave them."
    )

    show_title = models.BooleanField(
        null=True,
        blank=True,
        help_text="Feed card title: unset follows the theme rule (shown with preview markers).",
    )
    promotion = models.BooleanField(
        default=False, help_text="Taken out of the feed flow into the promotion pool."
    )
    weight = models.IntegerField(default=0, help_text="Pins feed order; 0 means unset.")
    summary = models.TextField(blank=True)
    description = models.TextField(blank=True)
    math = models.BooleanField(null=True, blank=True, help_text="Front-matter `math` (kept).")
    math_macros = models.TextField(
        blank=True,
        max_length=MATH_MACROS_MAX_CHARS,
        validators=[validate_math_macros],
        help_text="LaTeX macro definitions for this note's math, after the site's "
        "(front-matter mathMacros).",
    )
    keywords = models.JSONField(default=list, blank=True, validators=[validate_string_list])
    canonical_url = models.URLField(blank=True)
    share_buttons = models.JSONField(
        null=True,
        blank=True,
        validators=[validate_share_buttons_or_none],
        help_text="Restricts the share row for this note; blank: the site's.",
    )
    disable_share = models.BooleanField(default=False)
    search_hidden = models.BooleanField(default=False)
    # Kept by save() on PostgreSQL (notes.search_index); empty elsewhere.
    search_vector = SearchVectorField(null=True, editable=False)
    hidden_in_rss = models.BooleanField(default=False)
    robots_noindex = models.BooleanField(default=False)
    params = models.JSONField(
        default=dict,
        blank=True,
        help_text="Other front-matter keys, kept verbatim: entry-set fields (mathTitle, …) "
        "and unknown keys.",
    )
    bibliographies = models.ManyToManyField(
        "bibliography.BibFile",
        through="NoteBibliography",
        related_name="notes",
        blank=True,
        help_text="Default bibliographies for references lists without bib=.",
    )

    version = models.PositiveIntegerField(default=1, help_text="Optimistic-lock counter.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="created_notes",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # In the trash since then (note_delete): hidden from every list, its slug still taken,
    # restorable by an Editor until `manage.py purge_trash` removes it.
    deleted_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The note's place on the recommendation ring (NoteQuerySet.recommended): kept by save()
    # as a hash of the slug; rows written in bulk, which skip save(), get a random place.
    draw_key = models.IntegerField(default=_random_draw_key, editable=False)
    deleted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    objects = NoteQuerySet.as_manager()

    class Meta:
        ordering = ["-date", "slug"]
        permissions = [
            ("publish_note", "Can publish own notes"),
            ("edit_any_note", "Can edit any note"),
            ("review_note", "Can approve notes submitted for review"),
        ]
        indexes = [
            models.Index(fields=["status", "date"]),
            models.Index(fields=["status", "has_body", "promotion", "date"]),
            # The feed's page read (page_in_feed_order): equality on the first three, newest
            # first, and the weight to tell pinned notes without reading the rows.
            models.Index(
                fields=["status", "has_body", "promotion", "-date", "slug", "weight"],
                name="note_feed_order_idx",
            ),
            # Recommendations (recommended): the published regular notes in ring order, read
            # from a point for a few rows.
            models.Index(
                fields=["status", "has_body", "promotion", "draw_key", "slug"],
                name="note_draw_idx",
            ),
            # A tag's or an author's page reaches its notes through a link table: this lets
            # the count and the page's ids read the columns they filter and order by from the
            # index, not from rows that carry the rendered HTML (PostgreSQL; ignored elsewhere).
            models.Index(
                fields=["id"],
                include=["status", "has_body", "date", "deleted_at", "weight", "slug", "promotion"],
                name="note_list_cover_idx",
            ),
        ]

    def __str__(self) -> str:
        return self.title or self.slug

    def save(self, *args, index: bool = True, **kwargs):
        """`index` false leaves the search vector to a save that follows in the same write
        (a render's, which changes the text the vector is made of)."""
        self.has_body = bool(self.body.strip())
        if "slug" not in self.get_deferred_fields():
            self.draw_key = draw_key(self.slug)
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "body" in update_fields:
            kwargs["update_fields"] = update_fields = {*update_fields, "has_body"}
        if update_fields is not None and "slug" in update_fields:
            kwargs["update_fields"] = update_fields = {*update_fields, "draw_key"}
        super().save(*args, **kwargs)
        if index and search_index.touches_index(update_fields):
            search_index.vectors_store(Note.objects.filter(pk=self.pk))

    def clean(self):
        if message := body_size_error(self.body):
            raise ValidationError({"body": message})

    def ordered_tags(self) -> list[Tag]:
        """The note's tags in its front matter's order (tag_order); any it does not name, by
        name after them. Reads the prefetched tags when there are (card_prefetches)."""
        place = {tag_name(name).casefold(): index for index, name in enumerate(self.tag_order)}
        return sorted(
            self.tags.all(),
            key=lambda tag: (place.get(tag.name.casefold(), len(place)), tag.name.casefold()),
        )

    @classmethod
    def from_db(cls, db, field_names, values):
        note = super().from_db(db, field_names, values)
        # The status the row has in the database: saving a note that is and was a draft changes
        # nothing a reader sees, so it need not invalidate cached pages (scidraft.site.receivers).
        note.stored_status = note.__dict__.get("status")
        # And what decides which lists it is on, and where: a save that changes none of it
        # makes stale only the pages that show the note, not every list it could move on.
        note.stored_listing = {name: note.__dict__.get(name) for name in cls.LISTING_FIELDS}
        return note

    @property
    def is_published(self) -> bool:
        return (
            self.status == Status.PUBLISHED
            and self.date <= timezone.now()
            and bool(self.body.strip())
        )

    @property
    def is_scheduled(self) -> bool:
        return self.status == Status.PUBLISHED and self.date > timezone.now()

    @property
    def local_date(self) -> dt.datetime:
        """The date in the offset it was written in (docs/theme.md#front-matter: times print in
        it)."""
        return in_written_offset(self.date, self.date_offset_minutes)

    @property
    def working(self) -> WorkingCopy | None:
        """The unpublished changes of a published note, if it has any."""
        try:
            return self.working_copy
        except WorkingCopy.DoesNotExist:
            return None

    @property
    def editor_copy(self) -> Note | WorkingCopy:
        """What its authors edit and preview: the working copy of a published note that has
        one, else the note itself (a draft has no separate live version)."""
        return self.working or self

    @property
    def has_unpublished_changes(self) -> bool:
        return self.working is not None

    @property
    def problem_count(self) -> int:
        """Warnings of what the authors edit (for_dashboard rows carry the copy's)."""
        if "copy_warnings" in self.__dict__:
            copied = self.__dict__["copy_warnings"]
            if copied is None:
                return len(self.render_warnings)
            return len(copied if isinstance(copied, list) else json.loads(copied))
        return len(self.editor_copy.render_warnings)
