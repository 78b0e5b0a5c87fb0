"""Keep stored renders current when what they depend on changes outside a note."""

from __future__ import annotations

from django.db.models import Q
from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver

from bibliography.signals import bibfile_changed, bibfile_changing
from scidraft.site.models import SiteSettings

from . import search_index
from .models import Environment, Note, Page


@receiver(bibfile_changing, dispatch_uid="notes.hold_live_references")
def hold_live_references(sender, name, **kwargs):
    """A bibliography file is about to change: where the site requires review, the published
    notes that depend on it keep the entries their readers see (notes.live_references)."""
    from .services.references import live_bibliographies_hold

    live_bibliographies_hold(name=name)


@receiver(bibfile_changed, dispatch_uid="notes.rerender_citing_notes")
def rerender_citing_notes(sender, bibfile, **kwargs):
    """A bibliography file was added or changed: re-render the notes that name or cite it
    (published ones from their kept entries, where review is required) and their working
    copies (from the files), and mark the live versions it would change."""
    from .services import note_render_store, working_copy_refresh
    from .services.references import live_bibliographies_follow

    citing = list(
        Note.objects.filter(
            Q(body__contains=bibfile.name)
            | Q(citations__bib_name=bibfile.name)
            | Q(bibliography_links__bibfile=bibfile)
        ).distinct()
    )
    for note in citing:
        note_render_store(note=note, force=True)
        working_copy_refresh(note=note)
    live_bibliographies_follow(notes=citing)


def environments_changed(sender, **kwargs):
    """Kinds, labels or counters changed: every stored render may number differently. Rows
    are marked stale (cheap) and re-render on their next read or `manage.py rerender`."""
    Note.objects.update(source_hash="")
    Page.objects.update(source_hash="")


# The site settings a stored render depends on (notes.rendering.source_hash hashes them).
RENDER_SETTINGS = ("math_macros", "citation_style", "language_code", "auto_references")


def site_settings_before_save(sender, instance, **kwargs):
    """Remember whether this save changes a setting the stored renders depend on (read
    before it): the math macros, the citation style, the language (the style's locale); and
    whether it stops requiring review."""
    before = list(
        SiteSettings.objects.filter(pk=instance.pk).values_list(*RENDER_SETTINGS, "require_review")
    )
    now = tuple(getattr(instance, name) for name in RENDER_SETTINGS)
    instance._render_settings_changed = [row[:-1] for row in before] != [now]
    instance._review_released = bool(before) and before[0][-1] and not instance.require_review
    language = RENDER_SETTINGS.index("language_code")
    instance._search_config_changed = bool(before) and search_index.search_config(
        before[0][language]
    ) != search_index.search_config(instance.language_code)


def site_settings_changed(sender, instance, **kwargs):
    """A setting every render reads changed: formulas may typeset and reference lists read
    differently (marked stale, as for the kinds). Review no longer required: live versions
    read the files as they are."""
    if getattr(instance, "_render_settings_changed", False):
        environments_changed(sender)
    if getattr(instance, "_review_released", False):
        from .services.references import live_bibliographies_release

        live_bibliographies_release()
    if getattr(instance, "_search_config_changed", False):
        # The stored vectors are stemmed in the language's configuration, as queries are.
        config = search_index.search_config(instance.language_code)
        search_index.vectors_store(Note.objects.all(), config)
        search_index.vectors_store(Page.objects.all(), config)


def connect() -> None:
    pre_save.connect(
        site_settings_before_save, sender=SiteSettings, dispatch_uid="notes.settings.pre"
    )
    post_save.connect(
        site_settings_changed, sender=SiteSettings, dispatch_uid="notes.settings.post"
    )
    post_save.connect(environments_changed, sender=Environment, dispatch_uid="notes.kinds.save")
    post_delete.connect(environments_changed, sender=Environment, dispatch_uid="notes.kinds.del")
