from django.http import HttpResponse
from django.shortcuts import get_object_or_404

from .models import BibFile


def bibfile_download(request, name: str):
    """A stored .bib file as uploaded, at the theme's address (/bib/refs.bib)."""
    bibfile = get_object_or_404(BibFile, name=f"bib/{name}")
    response = HttpResponse(bibfile.raw, content_type="application/x-bibtex; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{bibfile.filename}"'
    return response
