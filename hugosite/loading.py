"""Load a Hugo site read by hugosite.reading into the database: its config, bibliographies,
notes and standalone pages, idempotently (a second load changes nothing).

Notes import in one batch (NoteImportBatch): what importing them one by one would ask the
database for note by note is read up front, and revisions and citation rows are written in
bulk. The rows written are those of importing the notes one at a time
(tests/hugosite/test_loading.py).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.db.models.signals import m2m_changed

from bibliography.models import BibFile
from bibliography.services import bib_text_check, bibfile_import
from notes.live_references import live_context
from notes.models import (
    Author,
    Note,
    NoteAuthor,
    NoteBibliography,
    NoteCitation,
    NoteRevision,
    Page,
    Status,
    Tag,
    tag_name,
    tag_names,
)
from notes.rendering import (
    RENDERED_FIELDS,
    apply_rendered,
    batch_context,
    context_for,
    context_with_bibliographies,
    render_page,
    source_hash,
)
from notes.services.records import (
    assign_fields,
    author_for_identity,
    body_check,
    identity_handle,
    note_metadata,
    tag_get_or_create,
)
from notes.services.renders import bibfile_pks as stored_bibfile_pks
from notes.services.renders import citation_rows, note_render_fields, note_render_store
from scidraft.markup import Rendered, render
from scidraft.site.caching import bump_generation, deferred_bumps
from scidraft.site.models import EntrySet, MenuItem, SiteSettings

from .reading import BibSource, HugoSite, MenuEntry, NoteSource, PageSource, Problem, SiteConfig

# --- What a load changes, and what it may change -------------------------------------------

CONFIG_PARTS = ("settings", "menus", "entry sets")

# What a report calls one row of each kind.
_ROW_NAMES = {
    "settings": "settings",
    "menus": "menu item",
    "entry sets": "entry set",
    "bibliography files": "bibliography file",
    "data files": "data file",
    "images": "image",
    "notes": "note",
    "pages": "page",
}
# Kinds whose rows are described by the names of their changed fields only (bodies are long).
_NAMES_ONLY = {"bibliography files", "data files", "images", "notes", "pages"}


@dataclass
class RowChange:
    """One row a load creates, updates or deletes, or would but leaves as it is (`kept` says
    why). `fields` maps each changed field to (its value now, the loaded site's)."""

    kind: str
    key: str
    action: str  # "create", "update" or "delete"
    fields: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    kept: str = ""
    row: Any = field(default=None, repr=False, compare=False)  # the row as it was read

    def describe(self) -> str:
        """`menu item notes: created: name 'Notes', url '/notes/'`; a kept row says
        `menu item notes: kept (…); would be updated: name 'Mine' → 'Notes'`."""
        what = f"{_ROW_NAMES.get(self.kind, self.kind)} {self.key}".strip()
        verb = {"create": "created", "update": "updated", "delete": "deleted"}[self.action]
        if self.kept:
            verb = f"{self.kept}; would be {verb}"
        if self.action == "delete" or not self.fields:
            return f"{what}: {verb}"
        if self.kind in _NAMES_ONLY:
            detail = ", ".join(self.fields)
        elif self.action == "create":
            detail = ", ".join(
                f"{name} {_shown(new)}"
                for name, (_, new) in self.fields.items()
                if new not in ("", None)
            )
        else:
            detail = ", ".join(
                f"{name} {_shown(old)} → {_shown(new)}" for name, (old, new) in self.fields.items()
            )
        return f"{what}: {verb}: {detail}"


def _shown(value: Any, limit: int = 60) -> str:
    text = (
        repr(value) if not isinstance(value, list | dict) else json.dumps(value, ensure_ascii=False)
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LoadPolicy:
    """Which rows a load may change: import_hugo's rule.

    Notes, pages and bibliography files are written as the Hugo site has them (matched by
    slug and name, idempotently). Settings, menus and entry sets are site-wide: a part is
    loaded into a fresh site (no settings changed from the defaults, no menu, no entry set)
    or when named in `replace`; otherwise a part that differs stays as it is, and the report
    says so and what would change.
    """

    def __init__(self, *, replace: Collection[str] = ()):
        unknown = set(replace) - set(CONFIG_PARTS)
        if unknown:
            raise ValueError(f"Not a config part: {', '.join(sorted(unknown))}")
        self.replace = frozenset(replace)

    def part_kept(self, part: str, *, fresh: bool) -> str:
        """Why the config `part` stays as it is (the site has its own), or "" to load it."""
        if fresh or part in self.replace:
            return ""
        return f"kept (use --replace-{part.replace(' ', '-')} to replace)"

    def concerns(self, change: RowChange) -> bool:
        """Whether `change` is this load's business at all (a row it would delete may not be)."""
        return True

    def row_kept(self, change: RowChange) -> str:
        """Why the row of `change` stays as it is, or "" to write it. Asked before a note, page
        or bibliography file is written (whether or not it differs), and for each change of a
        config part that is loaded."""
        return ""


REPLACE_ALL = LoadPolicy(replace=CONFIG_PARTS)


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


# Parameters per `__in` query: SQLite builds before 3.32 allow 999 in one statement.
_IN_CHUNK = 500


def _chunks(items: list, size: int = _IN_CHUNK):
    for start in range(0, len(items), size):
        yield items[start : start + size]


class NoteImportBatch:
    """What importing many notes would otherwise ask the database for note by note.

    Made for the slugs about to be imported: their notes (row-locked), authors, tags, default
    bibliographies and last revision numbers are read in a few queries; tags, authors and
    bibliography files are looked up once per import. Revisions and citation rows are
    written in bulk by `flush()`; nothing reads them while notes import. The rows written are
    the ones importing the notes one by one writes (tests/hugosite/test_loading.py).

    Call inside a transaction, and `flush()` before it ends.
    """

    def __init__(self, *, slugs, user=None, base=None, policy: LoadPolicy | None = None):
        self.user = user
        self.base = base
        self.review: bool | None = None  # the site's require_review, read at the first render
        self.policy = policy or LoadPolicy()
        slugs = list(dict.fromkeys(slugs))
        found: dict[str, Note] = {}
        for chunk in _chunks(slugs):
            found.update(
                (n.slug, n) for n in Note.objects.select_for_update().filter(slug__in=chunk)
            )
        # None: known to have no note; a slug missing from the dict is asked for again.
        self.notes: dict[str, Note | None] = {slug: found.get(slug) for slug in slugs}
        self.authors_of: dict[int, list[int]] = {note.pk: [] for note in found.values()}
        self.tags_of: dict[int, set[int]] = {note.pk: set() for note in found.values()}
        self.bibliographies_of: dict[int, tuple[str, ...]] = {}
        self.last_revision: dict[int, int] = {}
        for chunk in _chunks(list(self.authors_of)):
            self._read_links(chunk)
        self.tags: dict[str, Tag] = {}
        self.authors: dict[str, Author] = {}
        self.bibfiles: dict[str, int | None] = {}
        self.revisions: list[NoteRevision] = []
        self.citations: dict[int, list[NoteCitation]] = {}
        self.new_tags: dict[int, tuple[Note, set[int]]] = {}
        self.changes: list[RowChange] = []  # the notes updated, with the fields that changed

    def _read_links(self, pks: list[int]) -> None:
        links = NoteAuthor.objects.filter(note_id__in=pks).order_by("note_id", "position")
        for note_id, author_id in links.values_list("note_id", "author_id"):
            self.authors_of[note_id].append(author_id)
        tagged = Note.tags.through.objects.filter(note_id__in=pks)
        for note_id, tag_id in tagged.values_list("note_id", "tag_id"):
            self.tags_of[note_id].add(tag_id)
        bibliographies: dict[int, list[str]] = {}
        defaults = NoteBibliography.objects.filter(note_id__in=pks).order_by("note_id", "position")
        for note_id, name in defaults.values_list("note_id", "bibfile__name"):
            bibliographies.setdefault(note_id, []).append(name)
        self.bibliographies_of.update((pk, tuple(names)) for pk, names in bibliographies.items())
        numbers = NoteRevision.objects.filter(note_id__in=pks).values("note_id")
        for row in numbers.annotate(last=Max("number")):
            self.last_revision[row["note_id"]] = row["last"]

    # Lookups that used to be a query per note.

    def note(self, slug: str) -> Note | None:
        if slug in self.notes:
            return self.notes[slug]
        note = Note.objects.select_for_update().filter(slug=slug).first()
        if note is not None and note.pk not in self.authors_of:
            self.authors_of[note.pk], self.tags_of[note.pk] = [], set()
            self._read_links([note.pk])
        self.notes[slug] = note
        return note

    def tag(self, name: str) -> Tag:
        if name not in self.tags:
            self.tags[name] = tag_get_or_create(name)
        return self.tags[name]

    def author(self, identity: str) -> Author:
        if identity not in self.authors:
            self.authors[identity] = author_for_identity(identity)
        return self.authors[identity]

    def bibfile_pks(self, names: set[str]) -> dict[str, int | None]:
        unknown = [name for name in names if name not in self.bibfiles]
        if unknown:
            found = stored_bibfile_pks(set(unknown))
            self.bibfiles.update((name, found.get(name)) for name in unknown)
        return {name: self.bibfiles[name] for name in names}

    def context(self, note: Note):
        """The note's render context; a published note's reads the entries kept with its live
        version where the site requires review (an import changes its text, not them)."""
        if self.review is None:
            self.review = SiteSettings.objects.current().require_review
        if self.base is None:
            return live_context(note, context_for(note), review=self.review)
        names = self.bibliographies_of.get(note.pk, ())
        context = context_with_bibliographies(self.base, names, note=note)
        return live_context(note, context, review=self.review)

    def _links(self) -> tuple[dict, ...]:
        return (
            self.authors_of,
            self.tags_of,
            self.bibliographies_of,
            self.last_revision,
            self.citations,
            self.new_tags,
        )

    def checkpoint(self, slug: str) -> tuple:
        """What the batch knows of `slug` before its import: restore() goes back to it."""
        note = self.notes.get(slug)
        pk = note.pk if note is not None else None
        return slug, pk, [copy.copy(links.get(pk)) for links in self._links()]

    def restore(self, checkpoint: tuple) -> None:
        """The note's import failed and its savepoint rolled back. Its instance may hold what
        was not saved (read again when next asked for); its links are as at the checkpoint
        (earlier imports of the slug may have queued a revision and citations); a tag or
        author looked up meanwhile may have been created and rolled back: asked for again."""
        slug, pk, saved = checkpoint
        failed = self.notes.pop(slug, None)
        for links, value in zip(self._links(), saved, strict=True):
            if failed is not None and failed.pk != pk:
                links.pop(failed.pk, None)  # a row inserted and rolled back
            if value is not None:
                links[pk] = value
            else:
                links.pop(pk, None)
        self.tags.clear()
        self.authors.clear()

    def add_tags(self, note: Note, tags: list[Tag]) -> None:
        """note.tags.add(*tags) for a note created by this batch, written by flush_tags():
        it has no tags yet, so nothing needs reading first."""
        # The copy iterates in add()'s order: the rows get the ids add() would give them.
        self.new_tags[note.pk] = (note, {tag.pk for tag in tags}.copy())

    def flush_tags(self) -> None:
        """Write the tags add_tags() queued, with the m2m_changed signals add() sends. Called
        before anything reads a note's tags: a render that may list notes by tag (an entry
        index), a change of a note's tags, the end of the batch."""
        through = Note.tags.through
        queued = list(self.new_tags.values())
        self.new_tags = {}
        for note, pks in queued:
            m2m_changed.send(action="pre_add", pk_set=pks, using=note._state.db, **_signal(note))
        through.objects.bulk_create(
            (through(note_id=note.pk, tag_id=pk) for note, pks in queued for pk in pks),
            batch_size=_IN_CHUNK,
        )
        for note, pks in queued:
            m2m_changed.send(action="post_add", pk_set=pks, using=note._state.db, **_signal(note))

    def flush(self) -> None:
        """Write the queued tags, revisions and citation rows."""
        self.flush_tags()
        NoteRevision.objects.bulk_create(self.revisions, batch_size=_IN_CHUNK)
        self.revisions = []
        pks = list(self.citations)
        for chunk in _chunks(pks):
            NoteCitation.objects.filter(note_id__in=chunk).delete()
        NoteCitation.objects.bulk_create(
            (row for rows in self.citations.values() for row in rows), batch_size=_IN_CHUNK
        )
        self.citations = {}


def _note_values(source: NoteSource) -> dict:
    values = {
        "title": source.title,
        "body": source.body,
        "status": Status.DRAFT if source.draft else Status.PUBLISHED,
        "institute": source.institute,
        "show_title": source.show_title,
        "promotion": source.promotion,
        "weight": source.weight,
        "summary": source.summary,
        "description": source.description,
        "math": source.math,
        "math_macros": source.math_macros,
        "keywords": source.keywords,
        "canonical_url": source.canonical_url,
        "share_buttons": source.share_buttons,
        "disable_share": source.disable_share,
        "search_hidden": source.search_hidden,
        "hidden_in_rss": source.hidden_in_rss,
        "robots_noindex": source.robots_noindex,
        "params": source.params,
        "date_offset_minutes": source.date_offset_minutes,
        "tag_order": tag_names(source.tags),
    }
    if source.date is not None:
        values["date"] = source.date
    return values


@transaction.atomic
def note_import(*, source: NoteSource, user=None, base=None) -> tuple[Note, str]:
    """Create or update the note `source.slug` from front matter and body.

    Returns the note and "created", "updated" or "unchanged"; every change is a revision.
    """
    batch = NoteImportBatch(slugs=[source.slug], user=user, base=base)
    result = note_import_batched(source=source, batch=batch)
    batch.flush()
    return result


@transaction.atomic
def note_import_batched(*, source: NoteSource, batch: NoteImportBatch) -> tuple[Note, str]:
    """note_import with `batch`'s lookups; its revision and citations wait for batch.flush()."""
    checkpoint = batch.checkpoint(source.slug)
    try:
        return _note_import(source, batch)
    except BaseException:
        batch.restore(checkpoint)
        raise


def _note_import(source: NoteSource, batch: NoteImportBatch) -> tuple[Note | None, str]:
    body_check(source.body)
    note = batch.note(source.slug)
    asked = RowChange("notes", source.slug, "create" if note is None else "update", row=note)
    asked.kept = batch.policy.row_kept(asked)
    if asked.kept:
        return _note_kept(note, source, batch, asked)
    created = note is None
    if created:
        note = Note(slug=source.slug, created_by=batch.user)
    fields = changed_fields(note, _note_values(source))
    for name, (_, value) in fields.items():
        setattr(note, name, value)
    changed = bool(fields)
    early = None  # the render saved with the note's fields, if any
    if changed or created:
        if not created:
            note.version += 1
        # The batch read this slug in this transaction, row-locked: no other note has it.
        note.full_clean(validate_unique=False)
        early = _render_ahead(note, batch.context(note))
        note.save()
        if created:
            batch.notes[note.slug] = note
            batch.authors_of[note.pk], batch.tags_of[note.pk] = [], set()

    authors = [batch.author(identity) for identity in source.authors]
    if batch.authors_of[note.pk] != [author.pk for author in authors]:
        if not created:
            note.authorships.all().delete()
        unique_authors = list(dict.fromkeys(authors))
        NoteAuthor.objects.bulk_create(
            NoteAuthor(note=note, author=author, position=position)
            for position, author in enumerate(unique_authors)
        )
        fields["authors"] = (batch.authors_of[note.pk], [author.pk for author in unique_authors])
        batch.authors_of[note.pk] = [author.pk for author in unique_authors]
        bump_generation()  # bulk_create sends no signal; every other write here does
        changed = True

    tags = [batch.tag(name) for name in dict.fromkeys(source.tags)]
    if batch.tags_of[note.pk] != {tag.pk for tag in tags}:
        if created:
            batch.add_tags(note, tags)
        else:
            batch.flush_tags()
            note.tags.set(tags)
        fields["tags"] = (batch.tags_of[note.pk], {tag.pk for tag in tags})
        batch.tags_of[note.pk] = {tag.pk for tag in tags}
        changed = True

    if early is None:
        batch.flush_tags()  # the render may list notes by tag
    rendered = early or note_render_fields(note=note, context=batch.context(note))
    if rendered is not None:
        batch.citations[note.pk] = citation_rows(note, rendered, batch.bibfile_pks)
    if created or changed:
        batch.revisions.append(_import_revision(note, batch, authors=authors, tags=tags))
        if not created:
            batch.changes.append(RowChange("notes", note.slug, "update", fields))
        return note, "created" if created else "updated"
    return note, "unchanged"


def _note_kept(
    note: Note | None, source: NoteSource, batch: NoteImportBatch, change: RowChange
) -> tuple[Note | None, str]:
    """The policy keeps the note as it is: "kept" if the site's differs (the change, with
    its fields, is reported), else "unchanged". Nothing is written, not even an author."""
    if note is not None:
        change.fields = changed_fields(note, _note_values(source))
        handles = dict(
            Author.objects.filter(pk__in=batch.authors_of[note.pk]).values_list("pk", "handle")
        )
        current = [handles[pk] for pk in batch.authors_of[note.pk]]
        wanted = list(dict.fromkeys(identity_handle(identity) for identity in source.authors))
        if current != wanted:
            change.fields["authors"] = (current, wanted)
        tags = set(Tag.objects.filter(pk__in=batch.tags_of[note.pk]).values_list("name", flat=True))
        if tags != {tag_name(name) for name in source.tags}:
            change.fields["tags"] = (sorted(tags), sorted(source.tags))
        if not change.fields:
            return note, "unchanged"
    batch.changes.append(change)
    return note, "kept"


def changed_fields(instance, values: dict) -> dict[str, tuple[Any, Any]]:
    """{name: (the instance's value, the wanted one)} of the values that differ."""
    return {
        name: (getattr(instance, name), value)
        for name, value in values.items()
        if getattr(instance, name) != value
    }


def _render_ahead(note: Note, context) -> Rendered | None:
    """Render `note` onto the instance before its row is saved, so that the rendered fields
    are written with the others rather than by a second UPDATE. None, leaving the instance
    as it was, when the stored render is current or when the note has an entry index: an
    index lists the site's notes, this one included once saved (and with its tags), so it
    renders after the save as before. Nothing else a render reads comes from the note's own
    row but its stored labels (a \\ref to itself), which saving its other fields leaves be."""
    digest = source_hash(note.body, context)
    if note.source_hash == digest:
        return None
    indexes = []

    def entry_index(name: str, params: dict[str, str]) -> None:
        indexes.append(name)  # noted, not looked up: this render is thrown away

    rendered = render(note.body, dataclasses.replace(context, render_entry_index=entry_index))
    if indexes:
        return None
    apply_rendered(note, rendered, digest)
    return rendered


def _signal(note: Note) -> dict:
    """m2m_changed's arguments for rows added to `note.tags`, as add() sends them."""
    return {"sender": Note.tags.through, "instance": note, "reverse": False, "model": Tag}


def _import_revision(
    note: Note, batch: NoteImportBatch, *, authors: list[Author], tags: list[Tag]
) -> NoteRevision:
    """revision_record's row, from what the import wrote rather than read back from the
    database: the note's authors in order and its tags (two names may be one Tag)."""
    number = batch.last_revision.get(note.pk, 0) + 1
    batch.last_revision[note.pk] = number
    handles = {author.pk: author.handle for author in authors}
    metadata = note_metadata(
        note,
        authors=[handles[pk] for pk in batch.authors_of[note.pk]],
        tags=list({tag.pk: tag.name for tag in tags}.values()),
    )
    user = batch.user
    return NoteRevision(
        note=note,
        number=number,
        kind=NoteRevision.Kind.IMPORT,
        title=note.title,
        body=note.body,
        metadata=metadata,
        base_version=note.version,
        created_by=user if user is not None and user.is_authenticated else None,
    )


_PAGE_FLAG_DEFAULTS = {
    "show_toc": None,
    "show_reading_time": None,
    "show_word_count": None,
    "show_breadcrumbs": None,
    "show_post_nav_links": None,
    "show_code_copy_buttons": None,
    "show_related_posts": None,
    "hide_meta": False,
    "hide_author": False,
    "hide_description": False,
    "hide_summary": False,
    "hide_footer": False,
    "comments": False,
    "disable_anchored_headings": False,
    "search_hidden": False,
    "hidden_in_rss": False,
    "robots_noindex": False,
    "disable_share": False,
}


@transaction.atomic
def page_import(*, source: PageSource, policy: LoadPolicy | None = None) -> tuple[Page, str]:
    """Create or update the standalone page `source.slug`; returns it and "created",
    "updated", "unchanged" or (when `policy` keeps the page as it is) "kept"."""
    page, outcome, _ = _page_import(source, policy or LoadPolicy())
    return page, outcome


def _page_values(source: PageSource) -> dict[str, Any]:
    layout = source.layout.lower() if source.layout.lower() in {"search", "archives"} else ""
    params = dict(source.params)
    if source.layout and not layout:
        params["layout"] = source.layout  # a layout SciDraft has no template for: kept
    values = {
        "title": source.title or source.slug.replace("-", " ").title(),
        "body": source.body,
        "description": source.description,
        "summary": source.summary,
        "status": Status.DRAFT if source.draft else Status.PUBLISHED,
        "layout": layout,
        "placeholder": source.placeholder,
        "weight": source.weight,
        "keywords": source.keywords,
        "canonical_url": source.canonical_url,
        "date": source.date,
        "date_offset_minutes": source.date_offset_minutes,
        "params": params,
        **{name: source.flags.get(name, default) for name, default in _PAGE_FLAG_DEFAULTS.items()},
    }
    return values


@transaction.atomic
def _page_import(
    source: PageSource, policy: LoadPolicy
) -> tuple[Page | None, str, RowChange | None]:
    """page_import, and the page's change (None when created or unchanged)."""
    page = Page.objects.select_for_update().filter(slug=source.slug).first()
    asked = RowChange("pages", source.slug, "create" if page is None else "update", row=page)
    asked.kept = policy.row_kept(asked)
    if asked.kept:
        if page is not None:
            asked.fields = changed_fields(page, _page_values(source))
            current = set(page.authors.values_list("handle", flat=True))
            wanted = {identity_handle(identity) for identity in source.authors}
            if current != wanted:
                asked.fields["authors"] = (sorted(current), sorted(wanted))
            if not asked.fields:
                return page, "unchanged", None
        return page, "kept", asked
    created = page is None
    if created:
        page = Page(slug=source.slug)
    fields = changed_fields(page, _page_values(source))
    if fields or created:
        for name, (_, value) in fields.items():
            setattr(page, name, value)
        if not created:
            page.version += 1
        page.full_clean()
        page.save()
    authors = [author_for_identity(identity) for identity in source.authors]
    current = set(page.authors.values_list("pk", flat=True))
    if current != {author.pk for author in authors}:
        page.authors.set(authors)
        fields["authors"] = (current, {author.pk for author in authors})
    context = context_for(None)
    if page.source_hash != source_hash(page.body, context):
        render_page(page, context)
        page.save(update_fields=RENDERED_FIELDS)
    if created:
        return page, "created", None
    if fields:
        return page, "updated", RowChange("pages", page.slug, "update", fields)
    return page, "unchanged", None


@dataclass
class LoadReport:
    """What loading a Hugo site did, per kind of object."""

    counts: dict[str, Counter] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    # Every row updated or deleted, settings, menus and entry sets also when created, and
    # every row kept as it was although the site differs (RowChange.kept says why).
    changes: list[RowChange] = field(default_factory=list)

    def count(self, kind: str, outcome: str) -> None:
        self.counts.setdefault(kind, Counter())[outcome] += 1

    def add(self, other: LoadReport) -> None:
        """Add `other`'s counts and changes to this report's (not its problems)."""
        for kind, counter in other.counts.items():
            self.counts.setdefault(kind, Counter()).update(counter)
        self.changes.extend(other.changes)

    @property
    def kept(self) -> list[RowChange]:
        return [change for change in self.changes if change.kept]

    @property
    def changed(self) -> bool:
        return any(counter["created"] or counter["updated"] for counter in self.counts.values())

    def lines(self) -> list[str]:
        rows = []
        for kind, counter in self.counts.items():
            parts = ", ".join(
                f"{counter[outcome]} {outcome}"
                for outcome in ("created", "updated", "unchanged", "kept")
                if counter[outcome]
            )
            rows.append(f"{kind}: {parts}")
        rows.extend(f"problem: {problem}" for problem in self.problems)
        return rows


def hugo_site_load(*, site: HugoSite, user=None, policy: LoadPolicy | None = None) -> LoadReport:
    """Write a Hugo site's config, bibliographies, notes and pages; idempotent.

    `policy` says which rows may change (LoadPolicy: settings, menus and entry sets of a site
    that has its own are kept unless replaced). A file that cannot be read is reported and
    skipped; the rest loads.
    """
    # One bump for the whole load instead of one per saved row.
    with deferred_bumps():
        return _hugo_site_load(site=site, user=user, policy=policy or LoadPolicy())


def _hugo_site_load(*, site: HugoSite, user, policy: LoadPolicy) -> LoadReport:
    report = LoadReport(problems=list(site.problems))
    report.add(site_configure(config=site.config, policy=policy))
    for bib in site.bib_files:
        try:
            if _bibfile_kept(bib, policy, report):
                continue
            result = bibfile_import(name=bib.name, raw=bib.text, owner=user)
        except Exception as error:  # one bad file is reported; the rest of the site loads
            report.problems.append(Problem(bib.path, str(error)))
            continue
        report.count("bibliography files", result.outcome)
        if result.outcome == "updated":
            report.changes.append(
                RowChange("bibliography files", bib.name, "update", {"raw": (None, None)})
            )
        for problem in result.problems:
            report.problems.append(Problem(bib.path, problem.reason, problem.line))
    base = batch_context()
    # One transaction for the notes (a savepoint inside import_site's) keeps the batch's row
    # locks until its revisions and citations are written.
    with transaction.atomic():
        batch = NoteImportBatch(
            slugs=[source.slug for source in site.notes], user=user, base=base, policy=policy
        )
        for source in site.notes:
            try:
                _, outcome = note_import_batched(source=source, batch=batch)
            except Exception as error:  # reported per file, as above
                report.problems.append(Problem(source.path, _describe(error)))
                continue
            report.count("notes", outcome)
        batch.flush()
        report.changes.extend(batch.changes)
    # A note may \ref a label of a note loaded after it: render those once more, now that
    # every note's labels are stored.
    # Only their warnings are read for all of them: whole rows (rendered HTML) for those few.
    imported = Note.objects.filter(slug__in=[source.slug for source in site.notes])
    for pk, warnings in imported.values_list("pk", "render_warnings"):
        if any(warning["code"] == "ref-unresolved" for warning in warnings):
            note_render_store(note=Note.objects.get(pk=pk), force=True, base=base)
    for source in site.pages:
        if source.headless:
            continue  # resource bundles (images for promotions) have no page of their own
        try:
            _, outcome, change = _page_import(source, policy)
        except Exception as error:  # reported per file, as above
            report.problems.append(Problem(source.path, _describe(error)))
            continue
        report.count("pages", outcome)
        if change is not None:
            report.changes.append(change)
    return report


def _bibfile_kept(bib: BibSource, policy: LoadPolicy, report: LoadReport) -> bool:
    """Whether the policy keeps the bibliography file `bib.name` as the site has it (counted
    "kept" if it differs, else "unchanged")."""
    bibfile = BibFile.objects.filter(name=bib.name).first()
    asked = RowChange("bibliography files", bib.name, "create" if bibfile is None else "update")
    asked.row = bibfile
    asked.kept = policy.row_kept(asked)
    if not asked.kept:
        return False
    digest = hashlib.sha256(bib_text_check(bib.text).encode("utf-8")).hexdigest()
    if bibfile is not None and bibfile.sha256 == digest:
        report.count("bibliography files", "unchanged")
        return True
    if bibfile is not None:
        asked.fields = {"raw": (None, None)}
    report.count("bibliography files", "kept")
    report.changes.append(asked)
    return True


def _describe(error: Exception) -> str:
    messages = getattr(error, "message_dict", None)
    if messages:
        return "; ".join(f"{name}: {' '.join(texts)}" for name, texts in messages.items())
    return str(error)
