"""Site-wide settings: identity defaults, menus, feed options, entry sets.

These mirror the `[params]` and `[menu.main]` of a SciDraft Hugo site's hugo.toml
(docs/theme.md#entry-sets, #the-feed, #entry-maps, #header-menus-and-palette), so an imported site
keeps its configuration.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models

from bibliography.csl import FEATURED_STYLES, validate_style
from scidraft.markup.mathmacros import MAX_PREAMBLE_CHARS
from scidraft.markup.preambles import preamble_problems

SHARE_BUTTONS = ["x", "linkedin", "reddit", "facebook", "whatsapp", "telegram", "ycombinator"]

# The styles offered first; any CSL style the project ships is accepted (bibliography.csl).
CITATION_STYLES = FEATURED_STYLES


def default_share_buttons() -> list[str]:
    return list(SHARE_BUTTONS)


def validate_share_buttons(value) -> None:
    if not isinstance(value, list) or any(item not in SHARE_BUTTONS for item in value):
        raise ValidationError(
            "Share buttons must be a list drawn from: %(names)s.",
            params={"names": ", ".join(SHARE_BUTTONS)},
        )


def validate_math_macros(value: str) -> None:
    """Macro definitions the renderer reads whole: KaTeX's refusal, or anything else than a
    definition, is reported with its line instead of being left out at every render."""
    problems = preamble_problems(value or "", "the macros")
    if problems:
        raise ValidationError([ValidationError(problem) for problem in problems])


position_range_validator = RegexValidator(
    r"^\s*\d+\s*(-\s*\d+\s*)?$", "Write a position such as 4 or a range such as 3-5."
)


# A preamble larger than the renderer reads is refused here rather than ignored there.
MATH_MACROS_MAX_CHARS = MAX_PREAMBLE_CHARS


# The row as read once in the current settings_read_once() scope; None outside any.
_read_once: ContextVar[dict | None] = ContextVar("site_settings_read_once", default=None)


@contextmanager
def settings_read_once() -> Iterator[None]:
    """Within, SiteSettings.objects.current() reads the row once: a publish asks for it from
    five places (review rule, render context, kept references, search language), every one a
    query. A scope that saves the row reads it from the database from then on: the saved values
    could still roll back."""
    token = _read_once.set({})
    try:
        yield
    finally:
        _read_once.reset(token)


class SiteSettingsQuerySet(models.QuerySet):
    def current(self) -> SiteSettings:
        kept = _read_once.get()
        if kept is not None and "row" in kept:
            return kept["row"]
        settings, created = self.get_or_create(pk=1)
        # A row created here holds the defaults, which a rollback would not change.
        if kept is not None and (created or not kept.get("written")):
            kept.update(row=settings, written=False)
        return settings


class SiteSettings(models.Model):
    """The one row of site configuration (pk=1)."""

    class Theme(models.TextChoices):
        AUTO = "auto", "Follow the reader's system"
        LIGHT = "light", "Light"
        DARK = "dark", "Dark"

    title = models.CharField(max_length=200, default="SciDraft")
    description = models.TextField(blank=True)
    base_url = models.URLField(
        blank=True,
        help_text="Public address of the site, used in feeds and the sitemap "
        "(e.g. https://notes.example.org/). Blank: taken from the request.",
    )
    language_code = models.CharField(max_length=20, default="en-us")
    copyright = models.CharField(max_length=300, blank=True)
    footer_text = models.TextField(blank=True)

    # Identity defaults (docs/theme.md#front-matter: note → site → theme default).
    institute = models.CharField(max_length=200, default="Your Institute")
    author = models.CharField(
        max_length=100, default="yourname", help_text="Default author handle shown as @handle."
    )

    math = models.BooleanField(default=True)
    recommendation_count = models.PositiveSmallIntegerField(default=3)

    # Feed (docs/theme.md#the-feed).
    notes_per_page = models.PositiveSmallIntegerField(default=8)
    promotions_per_page = models.PositiveSmallIntegerField(default=0)
    promotion_positions = models.CharField(
        max_length=20, default="3-5", validators=[position_range_validator]
    )
    promotion_link = models.URLField(blank=True)
    pager_size = models.PositiveSmallIntegerField(
        default=8, help_text="Entries per page on tag lists (Hugo pagination.pagerSize)."
    )

    # Per-page defaults of the PaperMod toggles (docs/theme.md#front-matter).
    show_share_buttons = models.BooleanField(default=True)
    share_buttons = models.JSONField(
        default=default_share_buttons, validators=[validate_share_buttons]
    )
    show_reading_time = models.BooleanField(default=True)
    show_toc = models.BooleanField(default=True)
    show_breadcrumbs = models.BooleanField(default=True)
    show_post_nav_links = models.BooleanField(default=True)
    show_code_copy_buttons = models.BooleanField(default=True)
    show_related_posts = models.BooleanField(default=True)

    # Feeds.
    show_full_text_in_rss = models.BooleanField(default=False)
    rss_limit = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Most items per RSS feed (Hugo's services.rss.limit); blank: the server's "
        "SCIDRAFT_RSS_LIMIT (20 unless set), which also caps it.",
    )

    default_theme = models.CharField(max_length=10, choices=Theme.choices, default=Theme.AUTO)
    citation_style = models.CharField(
        max_length=100,
        default="vancouver",
        validators=[validate_style],
        help_text="Any CSL style shipped with SciDraft, by its file name: vancouver (the "
        "theme's), apa, ieee, chicago-author-date, nature, harvard-cite-them-right, "
        "association-for-computing-machinery, american-physics-society, elsevier-harvard, "
        "modern-language-association, or any other of the CSL styles repository.",
    )
    auto_references = models.BooleanField(
        "Reference list at the end",
        default=True,
        help_text="A note that cites but has no {{< references >}} line gets its reference "
        "list at the end, as \\bibliography does in LaTeX. Notes with lists of their own "
        "keep the theme's rules.",
    )
    require_review = models.BooleanField(
        default=False, help_text="An Author's publish becomes a request an Editor approves."
    )
    custom_css = models.TextField(blank=True, help_text="Loaded last on every page.")
    math_macros = models.TextField(
        blank=True,
        max_length=MATH_MACROS_MAX_CHARS,
        validators=[validate_math_macros],
        help_text="LaTeX macro definitions every note's math may use, one a line: "
        "\\newcommand{\\R}{\\mathbb{R}}, \\DeclareMathOperator{\\tr}{tr}, \\def\\x{…}. "
        "A note's own macros come after these.",
    )

    updated_at = models.DateTimeField(auto_now=True)

    objects = SiteSettingsQuerySet.as_manager()

    class Meta:
        verbose_name = "site settings"
        verbose_name_plural = "site settings"

    def __str__(self) -> str:
        return self.title

    def save(self, *args, **kwargs):
        self.pk = 1
        kept = _read_once.get()
        if kept is not None:
            kept.pop("row", None)
            kept["written"] = True
        super().save(*args, **kwargs)

    def promotion_position_bounds(self) -> tuple[int, int]:
        first, _, last = self.promotion_positions.replace(" ", "").partition("-")
        return int(first), int(last or first)


class MenuItemQuerySet(models.QuerySet):
    def main(self):
        return self.filter(menu="main")

    def top_level(self):
        return self.filter(parent__isnull=True)


class MenuItem(models.Model):
    """An entry of a site menu; a parent without a URL renders as a label
    (docs/theme.md#header-menus-and-palette)."""

    menu = models.CharField(max_length=50, default="main")
    identifier = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    url = models.CharField(max_length=500, blank=True)
    weight = models.IntegerField(default=0)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="children"
    )
    note = models.CharField(
        max_length=200, blank=True, help_text="Hint shown under a child entry (params.note)."
    )

    objects = MenuItemQuerySet.as_manager()

    class Meta:
        ordering = ["menu", "weight", "name"]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        if self.parent_id is not None:
            if self.parent_id == self.pk:
                raise ValidationError({"parent": "An entry cannot be its own parent."})
            if self.parent.parent_id is not None:
                raise ValidationError({"parent": "Menus have one level of children."})
            if self.parent.menu != self.menu:
                raise ValidationError({"parent": "The parent must be in the same menu."})


class EntrySet(models.Model):
    """A series of notes indexed by A–Z and category pages (docs/theme.md#entry-sets, #entry-maps).

    A note joins the set when its front matter carries the set's title field.
    """

    key = models.SlugField(max_length=50, unique=True)
    title_field = models.CharField(max_length=100, default="entryTitle")
    category_field = models.CharField(max_length=100, default="entryCategory")
    aliases_field = models.CharField(max_length=100, default="entryAliases")
    summary_field = models.CharField(max_length=100, default="entrySummary")
    tag = models.CharField(
        max_length=200, blank=True, help_text="Only notes with this tag belong to the set."
    )
    count_label = models.CharField(max_length=100, default="Entries")

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key


class ContentGenerationQuerySet(models.QuerySet):
    def value(self) -> int:
        row = self.filter(pk=1).values_list("value", flat=True).first()
        return row or 0


class ContentGeneration(models.Model):
    """A number that changes whenever anything a reader sees changes.

    It seeds the site's stable random choices (promotion slots, recommendations), as the
    theme's per-build seed does, and keys the page cache. Bumped in the same transaction as
    the write (scidraft.site.generation.bump_generation, from the signals in receivers.py).
    """

    value = models.BigIntegerField(default=0)
    changed_at = models.DateTimeField(auto_now=True)

    objects = ContentGenerationQuerySet.as_manager()

    class Meta:
        verbose_name = "content generation"

    def __str__(self) -> str:
        return str(self.value)
