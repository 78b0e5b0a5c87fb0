"""Keep stored renders current when what they depend on changes outside a note."""

from __future__ import annotations

from django.db.models import Q
from django.dispatch import receiver

from bibliography.signals import bibfile_changed

from .models import Note


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
    from scidraft.site.services import generation_bump

    generation_bump()
