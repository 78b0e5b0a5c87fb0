"""What a page says about itself in <head>: title, description, canonical URL, robots,
OpenGraph and Twitter cards, schema.org JSON-LD and Google Scholar tags
(docs/theme.md#feeds-sitemap-and-meta)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field

from django.utils.safestring import SafeString, mark_safe

_JSON_ESCAPES = {ord("<"): "\\u003C", ord(">"): "\\u003E", ord("&"): "\\u0026"}


@dataclass
class PageMeta:
    title: str  # the whole <title>: "Title | Site", or the site's title on the homepage
    description: str = ""
    keywords: list[str] = field(default_factory=list)
    canonical: str = ""
    noindex: bool = False
    og_type: str = "website"
    og_title: str = ""
    authors: list[str] = field(default_factory=list)
    published: dt.datetime | None = None
    modified: dt.datetime | None = None
    tags: list[str] = field(default_factory=list)
    # Google Scholar: [("citation_title", "…"), ("citation_author", "…"), …] in order.
    scholar: list[tuple[str, str]] = field(default_factory=list)
    json_ld: dict | None = None

    @property
    def json_ld_script(self) -> SafeString | str:
        if not self.json_ld:
            return ""
        # <, > and & escaped as \\u sequences: the JSON cannot close its <script> element.
        # A data block (type application/ld+json) is never executed, so the CSP allows it.
        data = json.dumps(self.json_ld, ensure_ascii=False).translate(_JSON_ESCAPES)
        return mark_safe(f'<script type="application/ld+json">{data}</script>')  # noqa: S308


def absolute(request, site, path: str) -> str:
    if site.base_url:
        return site.base_url.rstrip("/") + path
    return request.build_absolute_uri(path)
