"""Notes, standalone pages, authors, tags, theorem-like environment kinds and revisions.

Field names follow the theme's front matter (docs/theme.md#front-matter) so that a Hugo site imports
and exports without loss; keys the model has no column for (entry-set fields such as `mathTitle`,
and any unknown key) are kept verbatim in `params`.
"""

from __future__ import annotations

import datetime as dt
import json

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.db.models.functions import Left, Lower
from django.utils import timezone
from django.utils.text import slugify

from scidraft.markup import limits as render_limits
from scidraft.site.models import MATH_MACROS_MAX_CHARS, validate_math_macros, validate_share_buttons

from . import search_index


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


class Author(models.Model):
    """A person who writes notes. `handle` is the theme's `author` identity (`@handle`)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="author",
    )
    name = models.CharField(max_length=200)
    handle = models.SlugField(max_length=100, unique=True, allow_unicode=True)
    institute = models.CharField(max_length=200, blank=True)
    orcid = models.CharField(
        max_length=19,
        blank=True,
        validators=[
            RegexValidator(r"^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$", "An ORCID iD: 0000-0002-1825-0097.")
        ],
    )
    email = models.EmailField(blank=True)
    bio = models.TextField(blank=True)
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class TagQuerySet(models.QuerySet):
    def public(self, now: dt.datetime | None = None):
        """Tags readers may see: those a published, due note carries. A tag typed on a draft
        or a scheduled note stays private until that note goes live, as a Hugo term exists only
        through the pages that carry it (draft tags had public pages)."""
        return self.filter(
            models.Exists(Note.objects.published(now).filter(tags=models.OuterRef("pk")))
        )

    def offered_to(self, user):
        """Tags the editor's autocomplete offers `user`: the public ones and those on notes the
        user may edit. Editors and admins may edit every note, so they are offered every tag."""
        if not user.is_authenticated or not user.is_active:
            return self.public()
        if user.is_superuser or user.has_perm("notes.edit_any_note"):
            return self.all()
        own = Note.objects.editable_by(user).filter(tags=models.OuterRef("pk"))
        published = Note.objects.published().filter(tags=models.OuterRef("pk"))
        return self.filter(models.Exists(published) | models.Exists(own))

    def with_published_counts(self, now: dt.datetime | None = None):
        """The public tags, with `count` (their published notes), in name order regardless of
        case, as Hugo's `.Data.Terms.Alphabetical` lists them ("Agentic Skills", "AI and Jobs")."""
        now = now or timezone.now()
        published = Q(notes__status=Status.PUBLISHED, notes__date__lte=now, notes__has_body=True)
        return (
            self.annotate(count=models.Count("notes", filter=published, distinct=True))
            .filter(count__gt=0)
            .order_by(Lower("name"), "name")
        )


class Tag(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=120, unique=True, allow_unicode=True)

    objects = TagQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        if not self.slug:
            # Hugo's urlize: lower case, spaces to hyphens; the theme's tag URLs use it.
            self.slug = slugify(self.name, allow_unicode=True) or "tag"
        super().save(*args, **kwargs)


class Environment(models.Model):
    """A theorem-like environment kind (`:::lemma` blocks and `**Lemma.**` lead-ins)."""

    class Style(models.TextChoices):
        THEOREM = "theorem", "Theorem (italic body)"
        DEFINITION = "definition", "Definition (upright body)"
        REMARK = "remark", "Remark (upright, light heading)"
        PROOF = "proof", "Proof (ends with ∎)"

    key = models.SlugField(max_length=50, unique=True, help_text="Used in `:::key` blocks.")
    label = models.CharField(max_length=100, help_text="Heading word, e.g. Lemma.")
    plural = models.CharField(max_length=100, help_text="e.g. Lemmas.")
    counter = models.SlugField(
        max_length=50,
        blank=True,
        help_text="Kinds with the same counter share one numbering; blank: the kind's own.",
    )
    numbered = models.BooleanField(default=True)
    style = models.CharField(max_length=20, choices=Style.choices, default=Style.THEOREM)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "key"]

    def __str__(self) -> str:
        return self.label

    @property
    def counter_name(self) -> str:
        return self.counter or self.key


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


class NoteQuerySet(RenderedQuerySet):
    def published(self, now: dt.datetime | None = None):
        """What readers see: published, due, and not empty (docs/theme.md#front-matter). A note in
        the trash is never published (deleting unpublishes); the test holds that even so."""
        now = now or timezone.now()
        return self.filter(
            status=Status.PUBLISHED, date__lte=now, has_body=True, deleted_at__isnull=True
        )

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
        rows = self.filter(pk__in=ids).in_bulk()
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


def prefetch_cards(notes) -> None:
    """Authorships, authors and tags of `notes` (card_columns rows), in two queries."""
    models.prefetch_related_objects(list(notes), *card_prefetches())


def tag_name(name: str) -> str:
    """A tag's name as it is stored: spaces collapsed."""
    return " ".join(str(name).split())


def tag_names(names) -> list[str]:
    """Tag names as stored, in their order, each once, blank ones left out."""
    return list(dict.fromkeys(tag_name(name) for name in names if str(name).strip()))


class Note(RenderedContent):
    """A note: the one content type of the theme, of any length (docs/theme.md#front-matter)."""

    slug = models.SlugField(max_length=200, unique=True, allow_unicode=True)
    title = models.CharField(max_length=300, blank=True)
    body = models.TextField(blank=True, help_text="Markdown with LaTeX math and shortcodes.")
    # Kept by save(): an empty note is "not yet published" (docs/theme.md#front-matter), and testing
    # the body itself in every feed query reads every body (160 ms at 10,000 notes).
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
        ]

    def __str__(self) -> str:
        return self.title or self.slug

    def save(self, *args, **kwargs):
        self.has_body = bool(self.body.strip())
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and "body" in update_fields:
            kwargs["update_fields"] = {*update_fields, "has_body"}
        super().save(*args, **kwargs)
        if search_index.touches_index(update_fields):
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


class WorkingCopy(RenderedContent):
    """A published note's unpublished changes, as Wagtail keeps a draft over a live page.

    Saves, autosaves and restores of a published note write here; readers keep seeing the
    Note row (the live version) until "Publish changes" copies this onto it, directly or,
    where the site requires review, once an Editor approves. `fields` holds every other field
    in a revision's metadata form (notes.services.records.note_metadata) plus the default
    bibliographies by name. The row exists only while it differs from the live version.
    """

    note = models.OneToOneField(Note, on_delete=models.CASCADE, related_name="working_copy")
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


class AuthorConsentQuerySet(models.QuerySet):
    def pending_for(self, user):
        """Requests waiting for `user` to confirm or decline being named on a note."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(author__user=user, state=AuthorConsent.State.PENDING)

    def unconfirmed(self, note: Note, author_ids):
        """Of `author_ids`, the consents on `note` that are not confirmed."""
        return self.filter(note=note, author_id__in=list(author_ids)).exclude(
            state=AuthorConsent.State.CONFIRMED
        )


class AuthorConsent(models.Model):
    """Whether a person with an account agreed to be named as an author of a note.

    A save that adds an author who is a user (not the one saving) asks them: the note cannot go
    public carrying their name until they confirm, or an Editor does. Authors added by an
    Editor, the saving user themself and authors without an account (imported names) need no
    request; a name already on the live note when this record began has no row and stays.
    """

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for confirmation"
        CONFIRMED = "confirmed", "Confirmed"
        DECLINED = "declined", "Declined"

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="author_consents")
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="consents")
    state = models.CharField(max_length=20, choices=State.choices, default=State.PENDING)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="authorship_requests",
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="authorship_decisions",
        help_text="The author themself, or the Editor who confirmed for them.",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = AuthorConsentQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["note", "author"], name="authorconsent_unique")
        ]

    def __str__(self) -> str:
        return f"{self.author} on {self.note}: {self.get_state_display()}"


class NoteAuthor(models.Model):
    """Ordered authorship: the first author is the card's @handle."""

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="authorships")
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="authorships")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["note", "author"], name="noteauthor_unique")]

    def __str__(self) -> str:
        return f"{self.author} on {self.note}"


class NoteBibliography(models.Model):
    """Default bibliographies of a note, searched in order."""

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="bibliography_links")
    bibfile = models.ForeignKey(
        "bibliography.BibFile", on_delete=models.CASCADE, related_name="note_links"
    )
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["note", "bibfile"], name="notebibliography_unique")
        ]
        verbose_name = "default bibliography"
        verbose_name_plural = "default bibliographies"

    def __str__(self) -> str:
        return f"{self.bibfile} for {self.note}"


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

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="revisions")
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


class NoteCitation(models.Model):
    """A key a note cites and the file it was found in, kept with the note's stored render.

    It answers "which notes cite this entry" and lists a note's references (references.bib,
    Scholar's citation_reference) without parsing rendered HTML.
    """

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="citations")
    bibfile = models.ForeignKey(
        "bibliography.BibFile",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="citations",
    )
    bib_name = models.CharField(max_length=255, blank=True)
    key = models.CharField(max_length=255)
    list_index = models.PositiveSmallIntegerField(help_text="Which reference list, from 0.")
    number = models.PositiveSmallIntegerField(help_text="Number in that list, from 1.")

    class Meta:
        ordering = ["note", "list_index", "number"]
        indexes = [models.Index(fields=["bibfile", "key"])]

    def __str__(self) -> str:
        return f"{self.note} cites {self.key}"


class LiveBibliography(models.Model):
    """The cited entries of a published note's live version, as they were when it went live.

    Where the site requires review, the live version renders from these, not from the files'
    current rows, so replacing or editing a cited file changes what readers see only once the
    note's new reference list is published (ARCHITECTURE "Review and bibliographies"). `keys`
    are every key the live version cites, found or not: a key found nowhere then stays missing.
    `changed` says that the files as they are now would change the list (kept by the
    bibliography receivers)."""

    note = models.OneToOneField(Note, on_delete=models.CASCADE, related_name="live_bibliography")
    keys = models.JSONField(default=list, blank=True)
    changed = models.BooleanField(default=False)
    # File name → the @string definitions its kept entries' sources use, as the file had them
    # (references.bib writes them before the entries).
    macros = models.JSONField(default=dict, blank=True)
    kept_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["changed"])]

    def __str__(self) -> str:
        return f"Live references of {self.note}"


class LiveBibEntry(models.Model):
    """One entry of a LiveBibliography: the file it was found in (by name) and its data."""

    live = models.ForeignKey(LiveBibliography, on_delete=models.CASCADE, related_name="entries")
    bib_name = models.CharField(max_length=255)
    key = models.CharField(max_length=255)
    entry_type = models.CharField(max_length=50)
    fields = models.JSONField(default=dict)
    persons = models.JSONField(default=dict)
    source = models.TextField(blank=True)
    # The entry's Google Scholar citation_reference, as BibEntry.scholar had it (decoded and
    # bounded when the file was read): a note page only prints it.
    scholar = models.TextField(blank=True)

    class Meta:
        ordering = ["live", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["live", "bib_name", "key"], name="livebibentry_unique")
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.bib_name})"


class DataFile(models.Model):
    """A Hugo data file (`data/promotion-visual.yaml`), for shortcodes that read site data.

    `raw` is the file as imported, written back unchanged on export; `content` is what it
    parses to, handed to the renderer's `resolve_data` by `name` (the file name, no suffix).
    """

    name = models.CharField(max_length=200, unique=True)
    path = models.CharField(max_length=300, help_text="Path in the Hugo site: data/<file>.")
    raw = models.TextField(blank=True)
    content = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.path


class HugoAsset(models.Model):
    """A file imported from a Hugo site into MEDIA_ROOT/hugo/, kept by content hash.

    `static` files (static/img/x.png → hugo/static/img/x.png) are also served at their
    original URL (/img/x.png), so note bodies that link them need no rewriting; `bundle`
    files (content/<bundle>/x.jpg → hugo/bundles/<bundle>/x.jpg) are page-bundle resources.
    """

    class Kind(models.TextChoices):
        STATIC = "static", "static/ file"
        BUNDLE = "bundle", "page-bundle resource"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    path = models.CharField(max_length=500, help_text="Relative to static/ or content/.")
    sha256 = models.CharField(max_length=64)
    size = models.PositiveBigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kind", "path"]
        constraints = [models.UniqueConstraint(fields=["kind", "path"], name="hugoasset_unique")]

    def __str__(self) -> str:
        return f"{self.kind}/{self.path}"

    @property
    def storage_name(self) -> str:
        folder = "static" if self.kind == self.Kind.STATIC else "bundles"
        return f"hugo/{folder}/{self.path}"

    @property
    def url(self) -> str:
        return settings.MEDIA_URL + self.storage_name


class ReviewCommentQuerySet(models.QuerySet):
    def latest_for(self, note: Note) -> ReviewComment | None:
        return self.filter(note=note).select_related("reviewer").first()


class ReviewComment(models.Model):
    """A reviewer's decision on a note submitted for review (site setting "require review"):
    sent back with a comment for its authors, or approved (which published it)."""

    class Kind(models.TextChoices):
        SEND_BACK = "send_back", "Sent back"
        APPROVE = "approve", "Approved"

    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="review_comments")
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
