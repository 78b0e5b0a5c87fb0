"""Bibliography files and their entries.

A `BibFile` keeps the raw text exactly as uploaded (so `/bib/<file>` serves what the author
wrote) and the parse report; each parsed entry is a `BibEntry` row so that rendering formats
only the keys a note cites.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Exists, OuterRef, Q, TextField
from django.db.models.functions import Cast, Length

from .parsing import MAX_ENTRY_CHARS

# How long an entry's fields and names may be, as stored JSON, for a page to read them whole.
# A file is read within MAX_ENTRY_CHARS an entry, but a row stored before what macros expand to
# was bounded may hold tens of megabytes; such a row is left out of pages (or named as too long)
# instead of read. JSON spells a character in up to six (\uXXXX), so no entry read within the
# bound is ever left out.
READ_BOUND_CHARS = 6 * MAX_ENTRY_CHARS + 4096


def validate_bib_name(value: str) -> None:
    """Names look like the Hugo theme's asset paths: `bib/refs.bib`."""
    parts = value.split("/")
    if (
        not value.endswith(".bib")
        or value.startswith("/")
        or any(part in ("", ".", "..") for part in parts)
        or "\\" in value
    ):
        raise ValidationError(
            "%(value)s is not a valid bibliography name: use a relative path ending in .bib, "
            "such as bib/refs.bib.",
            params={"value": value},
        )


# What a render reads of a file: its name and who may name it (BibFile.may_be_named_by). The
# raw text (megabytes for a large file) and the parse report are never needed to cite: the
# entries cited are read by key from their BibEntry rows.
CITING_FIELDS = ("id", "name", "owner", "is_public")


class BibFileQuerySet(models.QuerySet):
    def for_citing(self):
        """The files with CITING_FIELDS loaded only: what rendering a citing note reads."""
        return self.only(*CITING_FIELDS)

    def owned_by(self, user):
        return self.filter(owner=user)

    def editable_by(self, user):
        """Files `user` may change (ARCHITECTURE "Roles"): Editors and admins all, Authors their
        own. Mirrors Note.objects.editable_by."""
        if not user.is_authenticated or not user.is_active:
            return self.none()
        if user.is_superuser or user.has_perm("bibliography.edit_any_bibfile"):
            return self.all()
        return self.filter(owner=user)

    def usable_by(self, user, note=None):
        """Files `user` may attach to a note and pick citations from: the files they may edit,
        the site's shared files (no owner: imported by a command), the files an Editor made
        public, and the files already attached to `note`, so a co-author keeps the files
        another author attached."""
        if not user.is_authenticated or not user.is_active:
            return self.none()
        if user.is_superuser or user.has_perm("bibliography.edit_any_bibfile"):
            return self.all()
        usable = Q(owner=user) | Q(owner__isnull=True) | Q(is_public=True)
        if note is not None and note.pk is not None:
            usable |= Q(note_links__note=note)
        return self.filter(usable).distinct()

    def public(self, published_notes):
        """Files anyone may download at /bib/<name>: marked public by an Editor, or used by a
        published note, as a default bibliography or as the file a cited entry came from (the
        NoteCitation rows of its stored render). Other uploads stay private (every
        upload was served). `published_notes` is Note.objects.published(), passed in because
        notes builds on bibliography, not the reverse."""
        return self.filter(
            Q(is_public=True)
            | Exists(published_notes.filter(bibliography_links__bibfile=OuterRef("pk")))
            | Exists(published_notes.filter(citations__bibfile=OuterRef("pk")))
        )

    def downloadable_by(self, user, published_notes):
        """The public files, and the files `user` may edit (an owner reads their own upload)."""
        return self.public(published_notes) | self.editable_by(user)


class BibFile(models.Model):
    name = models.CharField(
        max_length=255,
        unique=True,
        validators=[validate_bib_name],
        help_text="Path as notes name it, e.g. bib/refs.bib.",
    )
    description = models.CharField(max_length=300, blank=True)
    raw = models.TextField(blank=True, help_text="The file as uploaded.")
    sha256 = models.CharField(max_length=64, blank=True, editable=False)
    parse_report = models.JSONField(
        default=list,
        blank=True,
        help_text="Blocks that could not be parsed: line, key (if known), reason.",
    )
    entry_count = models.PositiveIntegerField(default=0, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="bib_files",
    )
    is_public = models.BooleanField(
        "public",
        default=False,
        help_text="Served at /bib/<name> to everyone, and usable in every note, even when no "
        "published note uses it. Set by Editors.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = BibFileQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = "bibliography file"
        permissions = [("edit_any_bibfile", "Can edit any bibliography file")]

    def __str__(self) -> str:
        return self.name

    @property
    def filename(self) -> str:
        return self.name.rsplit("/", 1)[-1]

    def may_be_named_by(self, creator_id: int | None) -> bool:
        """Whether a note created by the user `creator_id` may name this file in
        `{{< references bib=… >}}` without attaching it: a shared file (no owner: imported by
        a command), a public one, or the creator's own upload. Any other file must be attached
        to the note first, which only its owner or an Editor can do (usable_by): naming a file
        would otherwise show its entries to whoever writes the note. Co-authors'
        and Editors' rights count through that attachment only, because an Author may add
        anyone as a co-author."""
        if self.owner_id is None or self.is_public:
            return True
        return creator_id is not None and self.owner_id == creator_id


class BibEntryQuerySet(models.QuerySet):
    def with_stored_chars(self):
        """Each entry annotated with `stored_chars`: its fields and names as stored JSON,
        measured by the database, without reading them."""
        return self.annotate(
            stored_chars=Length(Cast("fields", TextField())) + Length(Cast("persons", TextField()))
        )

    def readable(self):
        """Entries short enough for a page to read whole (READ_BOUND_CHARS)."""
        return self.with_stored_chars().filter(stored_chars__lte=READ_BOUND_CHARS)

    def matching(self, query: str):
        """Entries whose key, title, authors, editors or year contain every word of `query`
        (case-insensitive; as written in the file, so `M{\\"u}ller` is found by `ller`)."""
        entries = self
        for word in query.split()[:10]:
            entries = entries.filter(
                Q(key__icontains=word)
                | Q(fields__title__icontains=word)
                | Q(fields__year__icontains=word)
                | Q(persons__author__icontains=word)
                | Q(persons__editor__icontains=word)
            )
        return entries


class BibEntry(models.Model):
    bibfile = models.ForeignKey(BibFile, on_delete=models.CASCADE, related_name="entries")
    key = models.CharField(max_length=255)
    entry_type = models.CharField(max_length=50, help_text="Lower-case, e.g. article.")
    fields = models.JSONField(default=dict, help_text="Field name → value, as in the file.")
    persons = models.JSONField(
        default=dict, help_text='Role → names, e.g. {"author": ["Knuth, Donald E."]}.'
    )
    source = models.TextField(blank=True, help_text="The entry's own BibTeX text.")
    scholar = models.TextField(
        blank=True,
        editable=False,
        help_text="Google Scholar's citation_reference value: decoded and bounded when the "
        "file is read, so note pages only print it.",
    )
    position = models.PositiveIntegerField(default=0, help_text="Order in the file.")

    objects = BibEntryQuerySet.as_manager()

    class Meta:
        ordering = ["bibfile", "position"]
        verbose_name = "bibliography entry"
        verbose_name_plural = "bibliography entries"
        constraints = [
            models.UniqueConstraint(fields=["bibfile", "key"], name="bibentry_unique_key_per_file")
        ]
        indexes = [models.Index(fields=["key"])]

    def __str__(self) -> str:
        return f"{self.key} ({self.bibfile.name})"

    @property
    def title(self) -> str:
        return self.fields.get("title", "")

    @property
    def year(self) -> str:
        return self.fields.get("year", "")
