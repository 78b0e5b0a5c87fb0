"""What seed_demo wrote (hugosite.seeding): one row per settings, menu item, entry set,
bibliography file, note and page it loaded, with a digest of that row's state just after."""

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
