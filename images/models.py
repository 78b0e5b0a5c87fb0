"""Images uploaded into notes.

Each file lives in its note's folder of the default storage (MEDIA_ROOT, or the bucket when
one is configured) under a name made from its content hash and the extension of the format
Pillow detected, never from the name the client sent.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.db import models
from django.utils.text import slugify

from notes.models import Note

# The formats accepted, as Pillow names them: extension and Content-Type of each. SVG is not
# among them: it is a document that can carry scripts, not a picture.
FORMATS = {
    "PNG": ("png", "image/png"),
    "JPEG": ("jpg", "image/jpeg"),
    "GIF": ("gif", "image/gif"),
    "WEBP": ("webp", "image/webp"),
}
CONTENT_TYPES = [(content_type, name) for name, (_, content_type) in FORMATS.items()]


def alt_text(name: str) -> str:
    """Alt text from the client's file name: letters, digits and spaces only, so that it
    cannot break out of the Markdown `![…]`."""
    stem = name.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return " ".join(re.sub(r"[\W_]+", " ", stem).split())[:100]


def note_folder(instance: NoteImage, filename: str) -> str:
    return f"notes/{instance.note_id}/{filename}"


class NoteImageQuerySet(models.QuerySet):
    def stored_as(self, name: str):
        """The image whose file has this storage name (`notes/3/ab12….png`)."""
        return self.filter(file=name)

    def public(self, now=None):
        """Images anyone may load: those the live version of a published, due note shows (its
        body names the file). A draft's images, a scheduled note's, and those only a published
        note's unpublished changes use are not public: their URL tells nothing of the draft
        away to whoever knows or derives it."""
        shown = Note.objects.published(now).filter(
            pk=models.OuterRef("note_id"), body__contains=models.OuterRef("file")
        )
        return self.filter(models.Exists(shown))

    def editable_by(self, user):
        """Images of the notes `user` may edit: theirs to see, whatever the note's state."""
        return self.filter(note__in=Note.objects.editable_by(user).values("pk"))


class NoteImage(models.Model):
    note = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="images")
    file = models.FileField(upload_to=note_folder, max_length=255)
    original_name = models.CharField(
        max_length=255, blank=True, help_text="The client's file name, shown only."
    )
    content_type = models.CharField(max_length=20, choices=CONTENT_TYPES)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    size = models.PositiveBigIntegerField(help_text="Bytes.")
    sha256 = models.CharField(max_length=64)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = NoteImageQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            # The same picture dropped twice into a note is one file, one row.
            models.UniqueConstraint(fields=["note", "sha256"], name="noteimage_unique_content")
        ]

    def __str__(self) -> str:
        return self.file.name

    @property
    def url(self) -> str:
        """The site's own address of the image, whatever the storage: images.views.media
        decides who may see it (a bucket's own URL would show a draft's image to anyone who
        has it)."""
        return settings.MEDIA_URL + self.file.name

    @property
    def markdown(self) -> str:
        """What the editor inserts: `![alt](url)`."""
        return f"![{alt_text(self.original_name)}]({self.url})"

    @property
    def extension(self) -> str:
        return self.file.name.rsplit(".", 1)[-1]

    @property
    def download_name(self) -> str:
        """The name offered in Content-Disposition: the client's name made safe (ASCII letters,
        digits and hyphens), with the extension of the detected format."""
        stem = self.original_name.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
        return f"{slugify(stem)[:80] or 'image'}.{self.extension}"
