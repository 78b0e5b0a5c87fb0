from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render

from bibliography import exports
from bibliography.models import BibEntry, BibFile
from scidraft.site.models import SiteSettings

from .citing import citable_work
from .models import Note, NoteCitation


def note_index(request):
    """Published notes as a plain list of titles.

    A placeholder until the public feed arrives (issue 5): it links each note to its admin page
    and renders no note content, so nothing unrendered is ever shown to a reader.
    """
    notes = Note.objects.published().regular().in_feed_order().only("slug", "title", "date")
    return render(
        request,
        "notes/index.html",
        {"site": SiteSettings.objects.current(), "notes": notes},
    )


_EXPORTS = {
    "bib": (exports.to_bibtex, "application/x-bibtex; charset=utf-8"),
    "ris": (exports.to_ris, "application/x-research-info-systems; charset=utf-8"),
    "json": (exports.to_csl_json, "application/vnd.citationstyles.csl+json; charset=utf-8"),
}


def note_cite(request, slug: str, format: str):
    """The note itself as a reference: cite.bib, cite.ris, cite.json (CSL-JSON)."""
    note = get_object_or_404(Note.objects.published(), slug=slug)
    formatter, content_type = _EXPORTS[format]
    response = HttpResponse(formatter(citable_work(request, note)), content_type=content_type)
    response["Content-Disposition"] = f'inline; filename="{slug}.{format}"'
    return response


def note_references_bib(request, slug: str):
    """Exactly the entries the note cites, in citation order, as written in their files."""
    note = get_object_or_404(Note.objects.published(), slug=slug)
    cited = list(
        dict.fromkeys(
            NoteCitation.objects.filter(note=note, bibfile__isnull=False).values_list(
                "bibfile_id", "key"
            )
        )
    )
    entries = {
        (entry.bibfile_id, entry.key): entry.source
        for entry in BibEntry.objects.filter(
            bibfile_id__in={file for file, _ in cited}, key__in={key for _, key in cited}
        ).only("bibfile_id", "key", "source")
    }
    sources = [entries[pair] for pair in cited if pair in entries]
    files = BibFile.objects.filter(pk__in={file for file, _ in cited}).values_list("raw", flat=True)
    response = HttpResponse(
        exports.bibtex_with_macros(sources, list(files)),
        content_type="application/x-bibtex; charset=utf-8",
    )
    response["Content-Disposition"] = f'inline; filename="{slug}-references.bib"'
    return response
