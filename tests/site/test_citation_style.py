"""The site's citation style: any shipped CSL style, the former pybtex names
migrated to the nearest CSL style, and the site's language as the CSL locale."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.core.exceptions import ValidationError

from scidraft.site.models import SiteSettings

migration = importlib.import_module("scidraft.site.migrations.0003_csl_citation_style")

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("vancouver", "vancouver"),
        ("plain", "association-for-computing-machinery"),
        ("unsrt", "ieee"),
        ("alpha", "association-for-computing-machinery"),
        ("author-year", "chicago-author-date"),
    ],
)
def test_former_pybtex_styles_migrate_to_the_nearest_csl_style(old, new):
    """The data migration rewrites each old choice; Vancouver stays Vancouver."""
    SiteSettings.objects.current()
    SiteSettings.objects.update(citation_style=old)
    migration.to_csl(apps, None)
    assert SiteSettings.objects.current().citation_style == new


@pytest.mark.parametrize(
    ("style", "old"), [("ieee", "unsrt"), ("apa", "author-year"), ("vancouver", "vancouver")]
)
def test_the_migration_reverses_to_the_nearest_old_choice(style, old):
    """Backwards: numbered styles become unsrt, the others author-year."""
    SiteSettings.objects.current()
    SiteSettings.objects.update(citation_style=style)
    migration.to_pybtex(apps, None)
    assert SiteSettings.objects.current().citation_style == old


def test_the_setting_accepts_any_shipped_style_and_refuses_others():
    """full_clean accepts a style of the CSL repository and refuses a made-up name."""
    site = SiteSettings.objects.current()
    site.citation_style = "nature-communications"  # a dependent style: formats as nature
    site.full_clean()
    site.citation_style = "no-such-style"
    with pytest.raises(ValidationError) as raised:
        site.full_clean()
    assert "citation_style" in raised.value.message_dict


def test_notes_render_with_the_site_style_and_language():
    """The render context carries the site's style and its language (the CSL locale)."""
    from notes.rendering import context_for

    SiteSettings.objects.current()
    SiteSettings.objects.update(citation_style="apa", language_code="de-de")
    context = context_for(None)
    assert (context.citation_style, context.citation_locale) == ("apa", "de-de")
