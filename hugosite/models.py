"""What the Hugo round trip keeps: the site's data files and its static and page-bundle
files (DataFile, HugoAsset), and what seed_demo wrote (DemoRow: one row per settings, menu
item, entry set, bibliography file, note and page it loaded, with a digest of that row's
state just after)."""

from django.conf import settings
from django.db import models


class DemoRow(models.Model):
    """A row seed_demo wrote. While the row's state still has this digest nobody changed it,
    and the demo may bring it up to date; once it differs, a person changed it and seed_demo
    leaves it be."""

    kind = models.CharField(max_length=30, help_text="notes, pages, menus, settings…")
    key = models.CharField(max_length=255, blank=True, help_text="Slug, identifier or name.")
    digest = models.CharField(max_length=64, help_text="sha256 of the row's state.")
    written_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "row written by the demo"
        verbose_name_plural = "rows written by the demo"
        constraints = [
            models.UniqueConstraint(fields=["kind", "key"], name="demorow_unique_kind_key")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.key}".strip()


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
        db_table = "notes_datafile"  # created under the notes app
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
        db_table = "notes_hugoasset"  # created under the notes app
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
