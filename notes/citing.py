"""A published note as a citable work, for the "cite this note" exports."""

from __future__ import annotations

from django.utils import timezone

from bibliography.exports import CitableWork, Person
from bibliography.models import BibEntry
from scidraft.site.models import SiteSettings
from scidraft.site.snapshot import site_settings

from .models import Note, NoteCitation


def note_url(request, note: Note, site: SiteSettings) -> str:
    path = f"/notes/{note.slug}/"
    if site.base_url:
        return site.base_url.rstrip("/") + path
    return request.build_absolute_uri(path)


def citable_work(request, note: Note) -> CitableWork:
    """`note` with its authorships and their authors prefetched (the views' queries)."""
    site = site_settings(request)
    authors = tuple(
        Person(link.author.name or link.author.handle) for link in note.authorships.all()
    ) or (Person(site.author, is_handle=True),)
    return CitableWork(
        key=note.slug,
        title=note.title or note.slug,
        authors=authors,
        date=note.local_date,
        site=site.title,
        url=note_url(request, note, site),
        accessed=timezone.localdate(),
        summary=note.summary or note.description,
    )


def cited_entries(note: Note, *fields: str) -> list[BibEntry]:
    """The entries the note cites, each once, in citation order; `fields` are loaded."""
    cited = list(
        dict.fromkeys(
            NoteCitation.objects.filter(note=note, bibfile__isnull=False).values_list(
                "bibfile_id", "key"
            )
        )
    )
    if not cited:
        return []
    found = {
        (entry.bibfile_id, entry.key): entry
        for entry in BibEntry.objects.filter(
            bibfile_id__in={file for file, _ in cited}, key__in={key for _, key in cited}
        ).only("bibfile_id", "key", *fields)
    }
    return [found[pair] for pair in cited if pair in found]
