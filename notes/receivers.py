"""Keep stored renders current when what they depend on changes outside a note."""

from __future__ import annotations

from django.db.models import Q
from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver

from bibliography.signals import bibfile_changed
from scidraft.site.models import SiteSettings

from .models import Environment, Note, Page


@receiver(bibfile_changed, dispatch_uid="notes.rerender_citing_notes")
def rerender_citing_notes(sender, bibfile, **kwargs):
    """A bibliography file was added or changed: re-render the notes that name or cite it."""
    from .services import note_render_store

    citing = Note.objects.filter(
        Q(body__contains=bibfile.name)
        | Q(citations__bib_name=bibfile.name)
        | Q(bibliography_links__bibfile=bibfile)
    ).distinct()
    for note in citing:
        note_render_store(note=note, force=True)


def environments_changed(sender, **kwargs):
    """Kinds, labels or counters changed: every stored render may number differently. Rows
    are marked stale (cheap) and re-render on their next read or `manage.py rerender`."""
    Note.objects.update(source_hash="")
    Page.objects.update(source_hash="")


def site_macros_before_save(sender, instance, **kwargs):
    """Remember whether the site's math macros change with this save (read before it)."""
    before = SiteSettings.objects.filter(pk=instance.pk).values_list("math_macros", flat=True)
    instance._math_macros_changed = list(before) != [instance.math_macros]


def site_macros_changed(sender, instance, **kwargs):
    """The site's math macros changed: every formula may typeset differently (marked stale,
    as for the kinds)."""
    if getattr(instance, "_math_macros_changed", False):
        environments_changed(sender)


def connect() -> None:
    pre_save.connect(site_macros_before_save, sender=SiteSettings, dispatch_uid="notes.macros.pre")
    post_save.connect(site_macros_changed, sender=SiteSettings, dispatch_uid="notes.macros.post")
    post_save.connect(environments_changed, sender=Environment, dispatch_uid="notes.kinds.save")
    post_delete.connect(environments_changed, sender=Environment, dispatch_uid="notes.kinds.del")
