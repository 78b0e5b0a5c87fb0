"""A note's bibliographies and what it cites: its default files, the keys its render cites,
and the entries its live version was published with."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class NoteBibliography(models.Model):
    """Default bibliographies of a note, searched in order."""

    note = models.ForeignKey("Note", on_delete=models.CASCADE, related_name="bibliography_links")
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


class NoteCitation(models.Model):
    """A key a note cites and the file it was found in, kept with the note's stored render.

    It answers "which notes cite this entry" and lists a note's references (references.bib,
    Scholar's citation_reference) without parsing rendered HTML.
    """

    note = models.ForeignKey("Note", on_delete=models.CASCADE, related_name="citations")
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

    note = models.OneToOneField("Note", on_delete=models.CASCADE, related_name="live_bibliography")
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
