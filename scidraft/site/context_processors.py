"""Site settings and menus for every template: read once per content generation (snapshot)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.template import loader
from django.utils.functional import SimpleLazyObject
from django.utils.safestring import SafeString

from .generation import request_generation
from .models import MenuItem
from .snapshot import PerGeneration, main_menu, site_settings

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
    # The homepage shows the notes feed, so it and the feed's pages count as /notes/
    # (docs/theme.md#header-menus-and-palette). Otherwise only the page itself: the theme's pages
    # built by Hugo mark nothing on a note page (/notes/<slug>/ is not /notes/).
    feed = path == "/" or path.startswith(("/page/", "/notes/page/"))
    return ("/notes/" if feed else path) == url


def menu_tree(items: tuple[MenuItem, ...], path: str) -> list[MenuEntry]:
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


def _active(entries: list[MenuEntry]) -> tuple:
    return tuple((entry.active, _active(entry.children)) for entry in entries)


# partials/header.html as rendered this generation, by which menu entries it marks active: the
# only part of it that differs between pages. A handful of patterns; the bound is a safeguard.
rendered_headers = PerGeneration(dict)
HEADERS_KEPT = 64


def header(request) -> SafeString:
    """The page header (site title and main menu) for this request's path; a signed-in
    person's adds their account links and is rendered for them alone (it carries their name
    and a CSRF token, so it is never kept for anyone else)."""
    menu = menu_tree(main_menu(request), request.path)
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        context = {
            "site": site_settings(request),
            "menu": menu,
            "account": {"name": user.get_full_name() or user.get_username()},
            "in_editor": request.path.startswith("/write/"),
        }
        return loader.get_template("partials/header.html").render(context, request)
    headers = rendered_headers.get(request_generation(request))
    key = _active(menu)
    html = headers.get(key)
    if html is None:
        context = {"site": site_settings(request), "menu": menu}
        html = loader.get_template("partials/header.html").render(context)
        if len(headers) < HEADERS_KEPT:
            headers[key] = html
    return html


def site(request):
    return {
        "site": SimpleLazyObject(lambda: site_settings(request)),
        "menu": SimpleLazyObject(lambda: menu_tree(main_menu(request), request.path)),
        "header": SimpleLazyObject(lambda: header(request)),
    }
