"""Writes to site configuration: settings, menus, entry sets."""

from __future__ import annotations

from django.db import transaction

from scidraft.hugo import SiteConfig

from .models import EntrySet, MenuItem, SiteSettings


def assign_fields(instance, values: dict) -> bool:
    """Set the values that differ; returns whether any did (imports save only real changes)."""
    changed = False
    for name, value in values.items():
        if getattr(instance, name) != value:
            setattr(instance, name, value)
            changed = True
    return changed


@transaction.atomic
def site_configure(*, config: SiteConfig) -> dict[str, str]:
    """Apply a site config (from hugo.toml); returns the outcome per part.

    Menus and entry sets are replaced by the config's, matched by identifier and key, so
    re-applying the same config changes nothing.
    """
    outcome = {}
    settings = SiteSettings.objects.current()
    if assign_fields(settings, config.settings):
        settings.full_clean()
        settings.save()
        outcome["settings"] = "updated"
    else:
        outcome["settings"] = "unchanged"

    menu_changed = False
    wanted = {entry.identifier for entry in config.menus}
    stale = MenuItem.objects.main().exclude(identifier__in=wanted)
    if stale.exists():
        stale.delete()
        menu_changed = True
    items = {item.identifier: item for item in MenuItem.objects.main()}
    # Parents first, so children can point at them.
    for entry in sorted(config.menus, key=lambda entry: bool(entry.parent)):
        item = items.get(entry.identifier) or MenuItem(identifier=entry.identifier, menu="main")
        parent = items.get(entry.parent) if entry.parent else None
        values = {
            "name": entry.name,
            "url": entry.url,
            "weight": entry.weight,
            "note": entry.note,
            "parent_id": parent.pk if parent else None,
        }
        if assign_fields(item, values) or item.pk is None:
            item.full_clean()
            item.save()
            menu_changed = True
        items[entry.identifier] = item
    outcome["menus"] = "updated" if menu_changed else "unchanged"

    sets_changed = False
    if config.entry_sets:
        stale_sets = EntrySet.objects.exclude(key__in=config.entry_sets)
        if stale_sets.exists():
            stale_sets.delete()
            sets_changed = True
    for key, values in config.entry_sets.items():
        entry_set = EntrySet.objects.filter(key=key).first() or EntrySet(key=key)
        if assign_fields(entry_set, values) or entry_set.pk is None:
            entry_set.full_clean()
            entry_set.save()
            sets_changed = True
    outcome["entry sets"] = "updated" if sets_changed else "unchanged"
    return outcome
