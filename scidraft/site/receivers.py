"""Any write a reader could see bumps the content generation in the write's transaction, naming
the dependency tags of what it changed (scidraft.site.dependencies), so that only the cached
pages showing it go stale.

Connected for every model of the apps that make up public pages, so admin edits, services and
shell scripts alike reach the page cache. Bulk operations send no signals: the services that
use them bump explicitly.

The tags a write names:
- a note's row saved: `note:<slug>` (its old slug too, if it changed); when what decides the
  lists it sits on changed (Note.LISTING_FIELDS: published or not, its date, pin, promotion, slug,
  trash, whether RSS leaves it out), also `listing:all`, `listing:tag:<slug>` of each of its
  tags, `listing:author:<handle>` of each of its authors, and the notes dated next to its old
  and new dates (`near:`, their « Prev / Next » links: expanded after the commit by notes.apps);
- its tags added or removed: `note:<slug>` and the `listing:tag:` of each tag that changed;
- an authorship added or removed: `note:<slug>` and that author's `listing:author:`;
- any other row of a note (its default bibliographies, kept entries...): `note:<slug>`;
- a new tag: its own `listing:tag:` (no note carries it yet);
- anything else (settings, menus, standalone pages, authors, a tag renamed, environments,
  bibliography files, a note deleted for good): SITE, every page.
"""

from __future__ import annotations

from django.apps import apps
from django.db.models.signals import m2m_changed, post_delete, post_save

from . import dependencies
from .generation import bump_generation, site_wide_pending

# Rows no reader sees (the revision record, derived citation rows, the counter itself, the
# working copy of a published note, consent records).
SILENT = {
    "site.contentgeneration", "notes.noterevision", "notes.notecitation",
    # A published note's unpublished changes and the bylines' consent records.
    "notes.workingcopy", "notes.authorconsent",
    # Kept entries: written in bulk with their LiveBibliography and deleted with it, whose own
    # signal names the note (thousands of rows would otherwise each name every page).
    "notes.livebibentry",
}  # fmt: skip
APPS = ("site", "notes", "bibliography")


UNSEEN_STATUSES = {"draft", "review"}
# Rows that belong to one note: they are as visible as it is.
NOTE_LINKS = {"notes.noteauthor", "notes.notebibliography"}


def _unseen_note(instance, created: bool = False) -> bool:
    """A note that is not published and was not when it was read: no reader can see the write
    (an author's autosaves of a draft must not empty everyone's page cache)."""
    if instance._meta.label_lower in NOTE_LINKS:
        instance = instance.note  # an author or bibliography attached to the note
    if instance._meta.label_lower != "notes.note" or instance.status not in UNSEEN_STATUSES:
        return False
    return created or getattr(instance, "stored_status", None) in UNSEEN_STATUSES


def listing(note) -> dict:
    """What decides the lists `note` is on, as the instance holds it (Note.from_db keeps it as
    read)."""
    return {name: note.__dict__.get(name) for name in note.LISTING_FIELDS}


def _note_tags(note, created: bool) -> set[str]:
    stored = getattr(note, "stored_listing", None)
    now = listing(note)
    tags = {dependencies.note(note.slug)}
    if stored and stored.get("slug") and stored["slug"] != note.slug:
        tags.add(dependencies.note(stored["slug"]))
    if created or stored != now:
        tags.add(dependencies.LISTING)
        tags.update(map(dependencies.listing_tag, note.tags.values_list("slug", flat=True)))
        handles = note.authorships.values_list("author__handle", flat=True)
        tags.update(map(dependencies.listing_author, handles))
        for date in {(stored or {}).get("date"), note.date} - {None}:
            tags.add(dependencies.near(date))
    return tags


def _tags(instance, created: bool, deleted: bool) -> tuple[str, ...]:
    """The tags of what the write changed; none: SITE."""
    if site_wide_pending():
        return ()
    label = instance._meta.label_lower
    if label == "notes.note":
        return () if deleted else tuple(_note_tags(instance, created))
    if label == "notes.tag" and created:
        # No note carries it yet (an author typing a new tag on a draft): only its own list,
        # which does not exist yet either.
        return (dependencies.listing_tag(instance.slug),)
    if not getattr(instance, "note_id", None):
        return ()
    try:
        note = instance.note
        tags = {dependencies.note(note.slug)}
        if label == "notes.noteauthor":
            tags.add(dependencies.listing_author(instance.author.handle))
    except apps.get_model("notes", "Note").DoesNotExist:
        return ()  # deleted with its note: SITE
    except apps.get_model("notes", "Author").DoesNotExist:
        return ()
    return tuple(tags)


def _changed(sender, instance, **kwargs):
    if kwargs.get("raw"):  # loaddata: fixtures are not reader-facing writes
        return
    created = kwargs.get("created", False)
    unseen = _unseen_note(instance, created)
    if not unseen:
        bump_generation(*_tags(instance, created, kwargs.get("signal") is post_delete))
    if kwargs.get("signal") is post_save and instance._meta.label_lower == "notes.note":
        instance.stored_status = instance.status  # what the row holds from now on
        instance.stored_listing = listing(instance)


def _m2m_changed(sender, instance, action, reverse, pk_set, **kwargs):
    tagging = not reverse and sender is apps.get_model("notes", "Note").tags.through
    if action == "pre_clear" and tagging:
        instance._cleared_tags = list(instance.tags.values_list("slug", flat=True))
    if action not in {"post_add", "post_remove", "post_clear"} or _unseen_note(instance):
        return
    if not tagging:
        bump_generation()
        return
    if action == "post_clear":
        slugs = getattr(instance, "_cleared_tags", [])
    else:
        slugs = kwargs["model"].objects.filter(pk__in=pk_set or ()).values_list("slug", flat=True)
    bump_generation(dependencies.note(instance.slug), *map(dependencies.listing_tag, slugs))


def connect() -> None:
    for label in APPS:
        for model in apps.get_app_config(label).get_models():
            if model._meta.label_lower in SILENT:
                continue
            uid = f"generation:{model._meta.label_lower}"
            post_save.connect(_changed, sender=model, dispatch_uid=uid + ":save")
            post_delete.connect(_changed, sender=model, dispatch_uid=uid + ":delete")
            for field in model._meta.local_many_to_many:
                through = field.remote_field.through
                m2m_changed.connect(_m2m_changed, sender=through, dispatch_uid=uid + field.name)
