"""The site config a load writes: settings, menus and entry sets."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from notes.services.records import (
    assign_fields,
)
from scidraft.site.models import EntrySet, MenuItem, SiteSettings

from ..site_config import MenuEntry, SiteConfig
from .report import LoadPolicy, LoadReport, RowChange


def _settings_fields() -> list[str]:
    return [
        field.attname
        for field in SiteSettings._meta.concrete_fields
        if field.editable and not field.primary_key
    ]


def settings_fresh() -> bool:
    """No settings row, or one still holding every default: nobody configured the site."""
    settings = SiteSettings.objects.filter(pk=1).first()
    if settings is None:
        return True
    defaults = SiteSettings()
    return all(getattr(settings, name) == getattr(defaults, name) for name in _settings_fields())


def _settings_changes(config: SiteConfig) -> list[RowChange]:
    settings = SiteSettings.objects.filter(pk=1).first() or SiteSettings()
    fields = {
        name: (getattr(settings, name), value)
        for name, value in config.settings.items()
        if getattr(settings, name) != value
    }
    return [RowChange("settings", "", "update", fields, row=settings)] if fields else []


def _menu_values(entry: MenuEntry, identifiers: set[str]) -> dict[str, Any]:
    # A parent the config does not have is no parent (as before: nothing to point at).
    parent = entry.parent if entry.parent in identifiers else ""
    return {
        "name": entry.name,
        "url": entry.url,
        "weight": entry.weight,
        "note": entry.note,
        "parent": parent,
    }


def _menu_row_values(item: MenuItem) -> dict[str, Any]:
    return {
        "name": item.name,
        "url": item.url,
        "weight": item.weight,
        "note": item.note,
        "parent": item.parent.identifier if item.parent_id else "",
    }


def _menu_changes(config: SiteConfig) -> list[RowChange]:
    """Creates and updates, parents before children, then deletes of entries the config lacks."""
    entries = {entry.identifier: entry for entry in config.menus}  # a repeated one: the last
    items = {item.identifier: item for item in MenuItem.objects.main().select_related("parent")}
    changes = []
    for identifier, entry in sorted(entries.items(), key=lambda pair: bool(pair[1].parent)):
        wanted = _menu_values(entry, set(entries))
        item = items.get(identifier)
        if item is None:
            fields = {name: (None, value) for name, value in wanted.items()}
            changes.append(RowChange("menus", identifier, "create", fields))
            continue
        current = _menu_row_values(item)
        fields = {
            name: (current[name], value) for name, value in wanted.items() if current[name] != value
        }
        if fields:
            changes.append(RowChange("menus", identifier, "update", fields, row=item))
    for identifier, item in items.items():
        if identifier not in entries:
            changes.append(RowChange("menus", identifier, "delete", row=item))
    return changes


def _entry_set_changes(config: SiteConfig) -> list[RowChange]:
    sets = {entry_set.key: entry_set for entry_set in EntrySet.objects.all()}
    changes = []
    for key, values in config.entry_sets.items():
        entry_set = sets.get(key)
        if entry_set is None:
            fields = {name: (None, value) for name, value in values.items()}
            changes.append(RowChange("entry sets", key, "create", fields))
            continue
        fields = {
            name: (getattr(entry_set, name), value)
            for name, value in values.items()
            if getattr(entry_set, name) != value
        }
        if fields:
            changes.append(RowChange("entry sets", key, "update", fields, row=entry_set))
    if config.entry_sets:  # a site without entry sets leaves the site's alone
        for key, entry_set in sets.items():
            if key not in config.entry_sets:
                changes.append(RowChange("entry sets", key, "delete", row=entry_set))
    return changes


def _apply_settings(changes: list[RowChange]) -> None:
    for change in changes:
        settings = SiteSettings.objects.current()
        assign_fields(settings, {name: new for name, (_, new) in change.fields.items()})
        settings.full_clean()
        settings.save()


def _apply_menus(changes: list[RowChange]) -> None:
    items = {item.identifier: item for item in MenuItem.objects.main()}
    deletes = []
    for change in changes:  # parents come first (_menu_changes)
        if change.action == "delete":
            deletes.append(items[change.key])
            continue
        item = items.get(change.key) or MenuItem(identifier=change.key, menu="main")
        values = {name: new for name, (_, new) in change.fields.items()}
        if "parent" in values:
            parent = items.get(values.pop("parent"))
            values["parent_id"] = parent.pk if parent else None
        assign_fields(item, values)
        item.full_clean()
        item.save()
        items[change.key] = item
    # Last, once children have their new parents. An entry that still has children staying
    # in the menu is kept: deleting it would delete them with it (CASCADE).
    leaving = {item.pk for item in deletes}
    for item in deletes:
        if not MenuItem.objects.filter(parent=item).exclude(pk__in=leaving).exists():
            item.delete()


def _apply_entry_sets(changes: list[RowChange]) -> None:
    for change in changes:
        if change.action == "delete":
            change.row.delete()
            continue
        entry_set = change.row or EntrySet(key=change.key)
        assign_fields(entry_set, {name: new for name, (_, new) in change.fields.items()})
        entry_set.full_clean()
        entry_set.save()


_CONFIG_STEPS = {
    "settings": (_settings_changes, settings_fresh, _apply_settings),
    "menus": (
        _menu_changes,
        lambda: not MenuItem.objects.main().exists(),
        _apply_menus,
    ),
    "entry sets": (
        _entry_set_changes,
        lambda: not EntrySet.objects.exists(),
        _apply_entry_sets,
    ),
}


@transaction.atomic
def site_configure(*, config: SiteConfig, policy: LoadPolicy | None = None) -> LoadReport:
    """Apply a site config (from hugo.toml) as `policy` allows; the report counts each part
    as updated, unchanged or kept, and lists every row changed or kept with its fields.

    Menus and entry sets take the config's, matched by identifier and key, so re-applying the
    same config changes nothing. With the default policy a part the site already has, and that
    differs, is kept: say `policy=LoadPolicy(replace=…)` (or REPLACE_ALL) to replace it.
    """
    policy = policy or LoadPolicy()
    report = LoadReport()
    for part, (changes_of, fresh, apply) in _CONFIG_STEPS.items():
        changes = changes_of(config)
        if not changes:
            report.count(part, "unchanged")
            continue
        changes = [change for change in changes if policy.concerns(change)]
        reason = policy.part_kept(part, fresh=fresh())
        for change in changes:
            change.kept = reason or policy.row_kept(change)
        written = [change for change in changes if not change.kept]
        if written:
            apply(written)
            report.count(part, "updated")
        if len(written) < len(changes):
            report.count(part, "kept")
        if not changes:
            report.count(part, "unchanged")
        report.changes.extend(changes)
    return report
