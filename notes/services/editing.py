"""The web editor's writes: create, save (with optimistic locking), restore a revision, and
choose a note's default bibliographies."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Max
from django.utils.text import slugify

from bibliography.models import BibFile
from scidraft.site.caching import bump_generation, deferred_bumps

from ..models import Author, Note, NoteAuthor, NoteRevision, Status
from .records import (
    assign_fields,
    body_check,
    note_metadata,
    revision_record,
    tag_get_or_create,
)
from .renders import note_render_store

EDITOR_FIELDS = frozenset(
    {
        "title", "body", "slug", "date", "authors", "institute", "tags", "summary",
        "description", "show_title", "promotion", "weight", "keywords", "canonical_url",
        "disable_share", "search_hidden", "hidden_in_rss", "robots_noindex", "params",
    }
)  # fmt: skip


@dataclass
class SaveResult:
    """What a save did: `conflict` means the note changed since `base_version` and nothing
    was overwritten (the refused text is `revision`, kind "conflict")."""

    note: Note
    conflict: bool
    revision: NoteRevision | None


def editable_note(*, note_id: int, user) -> Note:
    """The note, row-locked, if `user` may edit it; PermissionDenied otherwise."""
    if not Note.objects.editable_by(user).filter(pk=note_id).exists():
        raise PermissionDenied("You may not edit this note.")
    return Note.objects.select_for_update().get(pk=note_id)


def author_for_user(user) -> Author:
    author = Author.objects.filter(user=user).first()
    if author is not None:
        return author
    base = slugify(user.get_username(), allow_unicode=True) or "author"
    handle, suffix = base, 2
    while Author.objects.filter(handle=handle).exists():
        handle, suffix = f"{base}-{suffix}", suffix + 1
    author = Author(user=user, name=user.get_full_name() or user.get_username(), handle=handle)
    author.full_clean()
    author.save()
    return author


def _unique_note_slug(title: str) -> str:
    base = (slugify(title, allow_unicode=True) or "note")[:190].strip("-") or "note"
    slug, suffix = base, 2
    while Note.objects.filter(slug=slug).exists():
        slug, suffix = f"{base}-{suffix}", suffix + 1
    return slug


@transaction.atomic
def note_create(*, user, title: str) -> Note:
    """A new draft by `user`, who becomes its first author; revision 1."""
    if not user.is_authenticated or not user.has_perm("notes.add_note"):
        raise PermissionDenied("You may not create notes.")
    title = " ".join(title.split())
    note = Note(title=title, slug=_unique_note_slug(title), status=Status.DRAFT, created_by=user)
    note.full_clean()
    note.save()
    NoteAuthor.objects.create(note=note, author=author_for_user(user), position=0)
    note_render_store(note=note, force=True)
    revision_record(note=note, kind=NoteRevision.Kind.SAVE, user=user, message="Created")
    return note


def _check_fields(fields: dict) -> None:
    unknown = set(fields) - EDITOR_FIELDS
    if unknown:
        raise ValueError(f"Not editable here: {', '.join(sorted(unknown))}")


def _revision_from_fields(
    *, note: Note, kind: str, user, base_version: int, fields: dict, message: str = ""
) -> NoteRevision:
    """A revision holding `fields` over the note's current state, without touching the note."""
    metadata = note_metadata(note)
    for name, value in fields.items():
        if name in {"title", "body"}:
            continue
        if name == "date":
            value = value.isoformat() if value else None
        if name == "tags":
            value = sorted(value)
        metadata[name] = value
    last = note.revisions.aggregate(last=Max("number"))["last"] or 0
    return NoteRevision.objects.create(
        note=note,
        number=last + 1,
        kind=kind,
        title=fields.get("title", note.title),
        body=fields.get("body", note.body),
        metadata=metadata,
        base_version=base_version,
        message=message,
        created_by=user if user is not None and user.is_authenticated else None,
    )


def _authors_set(note: Note, handles: list[str]) -> None:
    """The note's authors, in order, from their handles; an unknown handle is an error."""
    handles = list(dict.fromkeys(handles))
    found = dict(Author.objects.filter(handle__in=handles).values_list("handle", "pk"))
    missing = [handle for handle in handles if handle not in found]
    if missing:
        raise ValueError(f"No author has the handle {', '.join(missing)}.")
    wanted = [found[handle] for handle in handles]
    if list(note.authorships.values_list("author_id", flat=True)) == wanted:
        return
    note.authorships.all().delete()
    NoteAuthor.objects.bulk_create(
        NoteAuthor(note=note, author_id=pk, position=position) for position, pk in enumerate(wanted)
    )
    bump_generation()  # bulk_create sends no signal


def _apply_fields(note: Note, fields: dict) -> None:
    tags = fields.get("tags")
    authors = fields.get("authors")
    assign_fields(
        note, {name: value for name, value in fields.items() if name not in {"tags", "authors"}}
    )
    note.version += 1
    note.full_clean()
    note.save()
    if tags is not None:
        note.tags.set([tag_get_or_create(name) for name in dict.fromkeys(tags) if name.strip()])
    if authors is not None:
        _authors_set(note, authors)
    note_render_store(note=note, force=True)


@transaction.atomic
def note_save(
    *, note_id: int, user, base_version: int, fields: dict, kind: str = NoteRevision.Kind.SAVE
) -> SaveResult:
    """Save the editor's fields if nobody saved since `base_version`; else keep them as a
    "conflict" revision and change nothing. An autosave of a published note records the
    revision only: the public text stays until an explicit save or publish."""
    if kind not in {NoteRevision.Kind.SAVE, NoteRevision.Kind.AUTOSAVE}:
        raise ValueError(f"Not a save kind: {kind}")
    _check_fields(fields)
    if "body" in fields:
        body_check(fields["body"])
    note = editable_note(note_id=note_id, user=user)
    if note.version != base_version:
        revision = _revision_from_fields(
            note=note,
            kind=NoteRevision.Kind.CONFLICT,
            user=user,
            base_version=base_version,
            fields=fields,
            message=f"Refused: the note is at version {note.version}, not {base_version}.",
        )
        return SaveResult(note=note, conflict=True, revision=revision)
    if kind == NoteRevision.Kind.AUTOSAVE and note.status == Status.PUBLISHED:
        revision = _revision_from_fields(
            note=note, kind=kind, user=user, base_version=base_version, fields=fields
        )
        return SaveResult(note=note, conflict=False, revision=revision)
    _apply_fields(note, fields)
    revision = revision_record(note=note, kind=kind, user=user, base_version=base_version)
    return SaveResult(note=note, conflict=False, revision=revision)


def stale_result(note: Note, base_version: int) -> SaveResult | None:
    if note.version == base_version:
        return None
    return SaveResult(note=note, conflict=True, revision=None)


# Not the slug, date or authors: another note may have taken the slug since, restoring a date
# could publish or unpublish, and a removed author's handle no longer resolves.
_RESTORED_METADATA = (
    "summary", "description", "institute", "show_title", "tags", "promotion", "weight",
    "keywords", "canonical_url", "disable_share", "search_hidden", "hidden_in_rss",
    "robots_noindex", "params",
)  # fmt: skip


@transaction.atomic
def revision_restore(*, revision_id: int, user) -> SaveResult:
    """Copy a revision's title, body and metadata into its note as a new version (the status
    stays: restoring never publishes)."""
    revision = NoteRevision.objects.filter(pk=revision_id).first()
    if revision is None:
        raise PermissionDenied("No such revision.")
    note = editable_note(note_id=revision.note_id, user=user)
    base_version = note.version
    fields = {"title": revision.title, "body": revision.body}
    for name in _RESTORED_METADATA:
        if name in revision.metadata:
            fields[name] = revision.metadata[name]
    _apply_fields(note, fields)
    result = revision_record(
        note=note,
        kind=NoteRevision.Kind.RESTORE,
        user=user,
        base_version=base_version,
        message=f"Restored revision {revision.number}",
    )
    return SaveResult(note=note, conflict=False, revision=result)


# --- Default bibliographies (issue 6): the files a note's reference lists search -------------


@transaction.atomic
def note_bibliographies_set(*, note_id: int, user, bibfile_ids) -> Note:
    """Make `bibfile_ids` (ids or BibFiles, in order) the note's default bibliographies and
    re-render it, so citations resolve against them at once.

    Only files usable by `user` may be named (BibFile.objects.usable_by, which includes the
    files already attached, so a co-author can keep another author's choice); otherwise
    PermissionDenied and nothing changes. The link rows' signals bump the content generation,
    once for the whole change.
    """
    note = editable_note(note_id=note_id, user=user)
    wanted = list(dict.fromkeys(int(getattr(item, "pk", item)) for item in bibfile_ids))
    usable = set(
        BibFile.objects.usable_by(user, note=note)
        .filter(pk__in=wanted)
        .values_list("pk", flat=True)
    )
    refused = [pk for pk in wanted if pk not in usable]
    if refused:
        raise PermissionDenied(
            f"You may not attach these bibliography files: {', '.join(map(str, refused))}."
        )
    current = list(
        note.bibliography_links.order_by("position").values_list("bibfile_id", flat=True)
    )
    if current == wanted:
        return note
    with deferred_bumps():
        note.bibliography_links.all().delete()
        for position, pk in enumerate(wanted):
            note.bibliography_links.create(bibfile_id=pk, position=position)
        note_render_store(note=note, force=True)
    return note
