from django.http import HttpResponse
from django.shortcuts import get_object_or_404

from notes.models import Note

from .models import BibFile


def bibfile_download(request, name: str):
    """A stored .bib file as uploaded, at the theme's address (/bib/refs.bib): to readers only
    when it is public (BibFile.objects.public); its owner and Editors read it too."""
    files = BibFile.objects.downloadable_by(request.user, Note.objects.published())
    bibfile = get_object_or_404(files, name=f"bib/{name}")
    response = HttpResponse(bibfile.raw, content_type="application/x-bibtex; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{bibfile.filename}"'
    return response
