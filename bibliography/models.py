"""Bibliography files and their entries.

A `BibFile` keeps the raw text exactly as uploaded (so `/bib/<file>` serves what the author
wrote) and the parse report; each parsed entry is a `BibEntry` row so that rendering formats
only the keys a note cites.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models


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

    def __str__(self) -> str:
        return self.name

    @property
    def filename(self) -> str:
        return self.name.rsplit("/", 1)[-1]


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
