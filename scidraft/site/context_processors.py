"""Site settings and menus for every template, in two queries per request."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.functional import SimpleLazyObject

from .models import MenuItem, SiteSettings


@dataclass
class MenuEntry:
    item: MenuItem
    active: bool = False
    children: list[MenuEntry] = field(default_factory=list)

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
