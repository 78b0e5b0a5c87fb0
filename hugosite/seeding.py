"""`seed_demo`: the demo site (demo/, a Hugo site) loaded without ever overwriting a person's work.

`make run` runs seed_demo every time, so it must be safe to re-run on a site people use: it
never resets settings, menus, entry sets or same-slug pages, nor undoes an edit saved in the
editor. The rule:

- Into an empty site the demo loads whole, and every row it wrote is recorded (DemoRow) with
  a digest of the row's state: its editable fields, its links (authors, tags, bibliographies)
  and, for a note, the number of its last revision, so that any save, autosave or restore in
  the editor, or any edit in the admin, changes the digest.
- Later runs write a row only while its digest is still the recorded one: nobody changed it,
  and it follows demo/ (a new version of the demo updates it). A row that differs is a
  person's: kept, and listed. A demo row someone deleted is not created again. Rows the demo
  never wrote are never touched, and a demo row equal to what the demo would write is
  simply recorded as the demo's.
- A site with content the demo did not write (no DemoRow, but notes, pages, bibliographies,
  menus, entry sets or configured settings) gets nothing, and is told so; `force` loads the
  demo's missing rows beside that content, under the same rule.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db import models, transaction
from django.db.models import Max

from bibliography.models import BibFile
from notes.models import Note, Page
from scidraft.site.models import EntrySet, MenuItem, SiteSettings

from .loading import LoadPolicy, LoadReport, RowChange, hugo_site_load, settings_fresh
from .models import DataFile, DemoRow, HugoAsset
from .reading import HugoSite

# The rows of each kind the demo loads, by the key its reports use.
_ROWS: dict[str, tuple[type[models.Model], str]] = {
    "settings": (SiteSettings, "pk"),
    "menus": (MenuItem, "identifier"),
    "entry sets": (EntrySet, "key"),
    "bibliography files": (BibFile, "name"),
    "notes": (Note, "slug"),
    "pages": (Page, "slug"),
}


def _row(kind: str, key: str) -> models.Model | None:
    model, name = _ROWS[kind]
    return model.objects.filter(**{name: 1 if kind == "settings" else key}).first()


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return value


# Fields added after demo rows were recorded, with their defaults: counted only once changed
# from them, so that a migration adding one leaves every recorded digest as it was (else every
# demo row would read as a person's).
_LATER_FIELDS = {"math_macros": "", "tag_order": [], "auto_references": True}


def _fields_state(row: models.Model) -> dict[str, Any]:
    return {
        field.attname: _plain(getattr(row, field.attname))
        for field in row._meta.concrete_fields
        if field.editable
        and not field.primary_key
        and not (
            field.attname in _LATER_FIELDS
            and getattr(row, field.attname) == _LATER_FIELDS[field.attname]
        )
    }


def row_state(row: models.Model) -> dict[str, Any]:
    """What a person can change about `row`: its editable fields (what renders from them and
    timestamps left out), the fields of a row that belongs to it alone (a note's working
    copy), its many-to-many links and, for a note, its authors and default bibliographies in
    order and its last revision (every editor save records one)."""
    state = _fields_state(row)
    for relation in row._meta.related_objects:
        if relation.one_to_one and row.pk is not None:
            try:
                state[relation.name] = _fields_state(getattr(row, relation.get_accessor_name()))
            except ObjectDoesNotExist:
                state[relation.name] = None
    for relation in row._meta.many_to_many:
        state[relation.name] = sorted(getattr(row, relation.name).values_list("pk", flat=True))
    if isinstance(row, Note):
        links = row.authorships.order_by("position")
        state["authors"] = list(links.values_list("author_id", flat=True))
        defaults = row.bibliography_links.order_by("position")
        state["bibliographies"] = list(defaults.values_list("bibfile_id", flat=True))
        state["last revision"] = row.revisions.aggregate(last=Max("number"))["last"]
    return state


def row_digest(row: models.Model) -> str:
    text = json.dumps(row_state(row), sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class DemoPolicy(LoadPolicy):
    """Write a row only if the demo wrote it and nobody changed it since, or if it is missing
    and the demo never wrote it (module docstring). Remembers the rows it let through."""

    CHANGED = "kept (changed since the demo loaded it)"
    DELETED = "kept (deleted since the demo loaded it)"
    FOREIGN = "kept (not the demo's)"

    def __init__(self, records: dict[tuple[str, str], DemoRow]):
        super().__init__()
        self.records = records
        self.written: set[tuple[str, str]] = set()

    def part_kept(self, part: str, *, fresh: bool) -> str:
        return ""  # decided row by row

    def concerns(self, change: RowChange) -> bool:
        # The demo deletes only menu items and entry sets it wrote and dropped since.
        return change.action != "delete" or (change.kind, change.key) in self.records

    def row_kept(self, change: RowChange) -> str:
        key = (change.kind, change.key)
        record = self.records.get(key)
        row = change.row
        if row is None:
            reason = self.DELETED if record is not None else ""
        elif record is not None:
            reason = "" if row_digest(row) == record.digest else self.CHANGED
        elif change.kind == "settings" and settings_fresh():
            reason = ""  # a settings row holding only the defaults holds nobody's choice
        else:
            reason = self.FOREIGN
        if not reason:
            self.written.add(key)
        return reason


@dataclass
class DemoReport:
    """What seed_demo did; `refused` says why it loaded nothing."""

    load: LoadReport = field(default_factory=LoadReport)
    refused: str = ""


def site_content() -> list[str]:
    """The kinds of content the site has (settings only once changed from the defaults)."""
    found = [
        name
        for name, model in (
            ("notes", Note),
            ("pages", Page),
            ("bibliography files", BibFile),
            ("menus", MenuItem),
            ("entry sets", EntrySet),
            ("data files", DataFile),
            ("images", HugoAsset),
        )
        if model.objects.exists()
    ]
    if not settings_fresh():
        found.insert(0, "settings")
    return found


def _demo_keys(site: HugoSite) -> set[tuple[str, str]]:
    keys = {("settings", "")} if site.config.settings else set()
    keys |= {("menus", entry.identifier) for entry in site.config.menus}
    keys |= {("entry sets", key) for key in site.config.entry_sets}
    keys |= {("bibliography files", bib.name) for bib in site.bib_files}
    keys |= {("notes", source.slug) for source in site.notes}
    keys |= {("pages", source.slug) for source in site.pages if not source.headless}
    return keys


def _without_demo_address(site: HugoSite) -> None:
    """The demo's baseURL is the address of the demo's own deployment, not of this site: links in
    feeds, mail, canonical and OpenGraph URLs would send a local reader there. The demo sets
    the address blank (absolute URLs then use the request's host), which also clears it from a
    settings row the demo wrote and nobody changed since; an operator's address is kept."""
    if "base_url" in site.config.settings:
        site.config.settings["base_url"] = ""


@transaction.atomic
def demo_load(*, site: HugoSite, force: bool = False) -> DemoReport:
    """Load the demo `site` as the module docstring says; returns what it did."""
    records = {(row.kind, row.key): row for row in DemoRow.objects.select_for_update()}
    if not records and not force:
        content = site_content()
        if content:
            return DemoReport(
                refused=f"The site has content the demo did not write ({', '.join(content)}): "
                "the demo was not loaded and nothing changed. Use --force to add the demo's "
                "missing rows beside it (no existing row is changed)."
            )
    _without_demo_address(site)
    policy = DemoPolicy(records)
    report = hugo_site_load(site=site, policy=policy)
    kept = {(change.kind, change.key) for change in report.kept}
    for key in sorted((_demo_keys(site) | policy.written) - kept):
        record = records.get(key)
        if key not in policy.written and record is not None:
            continue  # written before, not now: its record stays as it was
        row = _row(*key)
        if row is None:  # deleted by the demo (dropped from it), or failed to load
            DemoRow.objects.filter(kind=key[0], key=key[1]).delete()
            continue
        # Written now, or not asked about because it already is what the demo would write.
        digest = row_digest(row)
        if record is None:
            DemoRow.objects.create(kind=key[0], key=key[1], digest=digest)
        elif record.digest != digest:
            record.digest = digest
            record.save()
    return DemoReport(load=report)
