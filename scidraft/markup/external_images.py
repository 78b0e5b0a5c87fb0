"""External images in rendered HTML shown to authors and reviewers.

An image a note loads from another site tells that site who read the draft, and when: the
editor and review pages therefore load images from this site only (their Content-Security-
Policy, scidraft.site.csp). This transform, applied to what those pages show, takes such an
image's address out of `src`, so no browser fetches it whatever its policy, and puts a visible
note in its place saying why it is missing. Readers' pages are not transformed.

It runs on the engine's sanitised output, where nh3 quotes every attribute value with " and
escapes ", < and > inside values (see sanitise.py), so a start tag ends at its first > and its
attributes split reliably.
"""

from __future__ import annotations

import html as html_lib
import re
from urllib.parse import urlsplit

NOTE = "External image not loaded in the editor: {host}"
WHY = (
    "Images from other sites are not loaded on editing and review pages, so that their "
    "servers cannot see who reads the draft. Readers of the published note see it."
)

_IMAGE = re.compile(r"<img(\s[^>]*)?>")
_ATTRIBUTE = re.compile(r'([^\s="/>]+)(?:="([^"]*)")?')
# What browsers ignore in a URL: leading C0 controls and spaces, and tabs/newlines anywhere.
_URL_LEADING = re.compile(r"^[\x00-\x20]+")
_URL_IGNORED = re.compile(r"[\t\n\r]")


def external_host(src: str, site_host: str) -> str | None:
    """The host an image address loads from, when it is not this site (`site_host`, as
    request.get_host() gives it); None for relative addresses, data: URLs and this site."""
    # Browsers read a backslash as a slash in http(s) URLs: \\evil.example/x is //evil.example/x.
    url = _URL_IGNORED.sub("", _URL_LEADING.sub("", src)).replace("\\", "/")
    try:
        parts = urlsplit(url)
    except ValueError:  # an unparseable address (a bad IPv6 literal): treat as foreign
        return url[:80] or "?"
    if parts.scheme.lower() == "data":
        return None
    if not parts.netloc and not parts.scheme:
        return None  # relative: this site
    host = parts.netloc.rpartition("@")[2].lower()
    if host and host == site_host.lower():
        return None
    # `http:evil.example/x` has no authority to urlsplit, but a browser on an https page
    # loads it from evil.example: any scheme without this site's host is foreign.
    return host or parts.path.lstrip("/").split("/")[0].lower() or "?"


def _mark(match: re.Match, site_host: str) -> str:
    attributes = _ATTRIBUTE.findall(match.group(1) or "")
    values = {name.lower(): value for name, value in attributes}
    if "src" not in values:
        return match.group(0)
    host = external_host(html_lib.unescape(values["src"]), site_host)
    if host is None:
        return match.group(0)
    classes = " ".join([*html_lib.unescape(values.get("class", "")).split(), "external-image"])
    kept = "".join(
        f' {name}="{value}"'
        for name, value in attributes
        if name.lower() not in {"src", "class", "loading"}
    )
    # The address stays readable (data-external-src) but is nothing a browser loads.
    image = f'<img{kept} class="{html_lib.escape(classes)}" data-external-src="{values["src"]}">'
    note = html_lib.escape(NOTE.format(host=host))
    return (
        f'<span class="external-image-blocked" title="{html_lib.escape(WHY)}">{image}'
        f'<span class="external-image-note">{note}</span></span>'
    )


def mark_external_images(html: str, *, site_host: str) -> str:
    """`html` with every image from another site replaced by its address and a note."""
    if "<img" not in html:
        return html
    return _IMAGE.sub(lambda match: _mark(match, site_host), html)
