"""Bibliography files and their entries.

A `BibFile` keeps the raw text exactly as uploaded (so `/bib/<file>` serves what the author
wrote) and the parse report; each parsed entry is a `BibEntry` row so that rendering formats
only the keys a note cites.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q


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


class BibFileQuerySet(models.QuerySet):
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
        the site's shared files (no owner: imported by a command), and the files already
        attached to `note`, so a co-author keeps the files another author attached."""
        if not user.is_authenticated or not user.is_active:
            return self.none()
        if user.is_superuser or user.has_perm("bibliography.edit_any_bibfile"):
            return self.all()
        usable = Q(owner=user) | Q(owner__isnull=True)
        if note is not None and note.pk is not None:
            usable |= Q(note_links__note=note)
        return self.filter(usable).distinct()


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


class BibEntryQuerySet(models.QuerySet):
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
