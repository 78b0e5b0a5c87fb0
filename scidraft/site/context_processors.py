"""Site settings and menus for every template, in two queries per request."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.utils.functional import SimpleLazyObject

from .models import MenuItem, SiteSettings

# A browser drops tabs and line breaks anywhere in a URL and C0 controls and spaces around it
# before it reads the scheme; a menu URL is linked only if what it reads is one of these.
LINK_SCHEMES = {"http", "https", "mailto"}
_URL_IGNORED = re.compile(r"[\t\n\r]")
_SCHEME = re.compile(r"[\x00-\x20]*([a-zA-Z][a-zA-Z0-9+.-]*):")


def safe_href(url: str) -> str:
    """`url` if a browser would follow it as a relative or http(s)/mailto link, else ""
    (a menu entry may hold `javascript:…`: autoescaping keeps it inside the attribute, but a
    click would still run it)."""
    scheme = _SCHEME.match(_URL_IGNORED.sub("", url))
    if scheme and scheme.group(1).lower() not in LINK_SCHEMES:
        return ""
    return url


@dataclass
class MenuEntry:
    item: MenuItem
    active: bool = False
    children: list[MenuEntry] = field(default_factory=list)

    @property
    def href(self) -> str:
        return safe_href(self.item.url)

    @property
    def external(self) -> bool:
        return self.item.url.startswith(("http://", "https://"))


def _is_current(url: str, path: str) -> bool:
    if not url or url.startswith(("http://", "https://")):
        return False
    # The homepage shows the notes feed, so it counts as /notes/ (theme-spec §3.7).
    path = "/notes/" if path == "/" or path.startswith("/page/") else path
    return path == url or (url != "/" and path.startswith(url))


def menu_tree(path: str) -> list[MenuEntry]:
    items = list(MenuItem.objects.main())
    entries = {item.pk: MenuEntry(item, _is_current(item.url, path)) for item in items}
    top = []
    for item in items:
        entry = entries[item.pk]
        if item.parent_id is None:
            top.append(entry)
        elif item.parent_id in entries:
            entries[item.parent_id].children.append(entry)
    for entry in top:
        entry.active = entry.active or any(child.active for child in entry.children)
    return top


def site(request):
    return {
        "site": SimpleLazyObject(SiteSettings.objects.current),
        "menu": SimpleLazyObject(lambda: menu_tree(request.path)),
    }
