"""Imported static/ files at their original URLs (/img/x.png): the only files served here are
those the HugoAsset table records."""

from __future__ import annotations

import mimetypes

from django.http import FileResponse, Http404

from .importing import media_root
from .models import HugoAsset


def hugo_static(request, path: str):
    """Serve an imported static/ file at its original URL (/img/x.png), and nothing else."""
    asset = HugoAsset.objects.filter(kind=HugoAsset.Kind.STATIC, path=path).first()
    if asset is None:
        raise Http404("No such file.")
    target = media_root() / asset.storage_name
    if not target.is_file():
        raise Http404("No such file.")
    content_type = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    response = FileResponse(target.open("rb"), content_type=content_type)
    response["Cache-Control"] = "public, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    return response
