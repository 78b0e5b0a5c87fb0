"""The web editor's writes: create, save (with optimistic locking), discard unpublished
changes, restore a revision, and choose a note's default bibliographies."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from bibliography.models import BibFile
from scidraft.site.generation import deferred_bumps

from ..models import Author, Note, NoteAuthor, NoteRevision, Status, tag_names
from . import text_sync
from .authorship import authors_check, authors_naming_check, consents_request, promotion_check
from .records import body_check, is_editor, note_state, revision_record
from .renders import FreshRender, note_render_store
from .working import (
    bibliographies_set,
    fields_apply,
    fields_write,
    version_bump,
    working_copy_write,
    working_state,
)

EDITOR_FIELDS = frozenset(
    {
        "title", "body", "slug", "date", "authors", "institute", "tags", "summary",
        "description", "show_title", "promotion", "weight", "keywords", "canonical_url",
        "disable_share", "search_hidden", "hidden_in_rss", "robots_noindex", "params",
        "math_macros",
    }
)  # fmt: skip


@dataclass
class SaveResult:
    """What a save did: `conflict` means the note changed since `base_version` and nothing
    was overwritten (the refused text is `revision`, kind "conflict")."""

    note: Note
    conflict: bool
    revision: NoteRevision | None
    # The working copy's render this save made, when complete (working_copy_write): the
    # publish of the same click stores it instead of rendering the text again.
    fresh: FreshRender | None = None


def editable_note(*, note_id: int, user) -> Note:
    """The note, row-locked, if `user` may edit it; PermissionDenied otherwise.

    FOR NO KEY UPDATE (the note's id never changes): writers of the note still wait for each
    other, but rows that only refer to it (a live document's updates, stored while a save
    renders) are not held up, and cannot deadlock with a save that waits for them."""
    if not Note.objects.editable_by(user).filter(pk=note_id).exists():
        raise PermissionDenied("You may not edit this note.")
    return Note.objects.select_for_update(no_key=True).get(pk=note_id)


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


# --- Saving: check the fields and rights, apply them, record the revision, render -------------


@transaction.atomic
def note_save(
    *, note_id: int, user, base_version: int, fields: dict, kind: str = NoteRevision.Kind.SAVE
) -> SaveResult:
    """Save the editor's fields if nobody saved since `base_version`; else keep them as a
    "conflict" revision and change nothing.

    A published note keeps its live version: saves and autosaves write its working copy,
    which readers do not see until it is published (note_publish). A draft is written in
    place. Authors with an account who are new to the note are asked to confirm.

    Text typed together and not saved yet is saved first (a merged save, text_sync), so a
    stale client gets a conflict instead of overwriting it; a post on a version from before
    merged saves is accepted only when its text is the merged text (the live editor's own
    Save, whose typing caused them). The saved title and body go into the live document."""
    _save_input_check(fields, kind)
    note = editable_note(note_id=note_id, user=user)
    base_version = _merged_base_version(note, base_version, fields)
    result = _save_locked(note, user, base_version, fields, kind)
    if not result.conflict:
        text_sync.after_write(note=result.note, user=user)
    return result


def note_live_save(*, note: Note, user, title: str, body: str) -> SaveResult | None:
    """Write the text of the note's live document (writing together) on the autosave rules:
    note_save's with kind AUTOSAVE (coalesced per person, a published note's working copy, a
    draft's row), as `user`, the author of its newest update. The caller holds the note's
    row lock and is the live document itself, so no text_sync hook runs. None when the text
    is the saved text already."""
    state = working_state(note)
    if state["title"] == title and state["body"] == body:
        return None
    body_check(body)
    fields = {"title": title, "body": body}
    return _save_locked(note, user, note.version, fields, NoteRevision.Kind.AUTOSAVE)


def _save_locked(note: Note, user, base_version: int, fields: dict, kind: str) -> SaveResult:
    """note_save's steps on a note the caller has row-locked: a stale version is a conflict;
    else check the rights, apply the fields, record the revision, render."""
    state = working_state(note)
    wanted = state_with_fields(state, fields)
    if note.version != base_version:
        return _conflict_record(note, user, base_version, wanted)
    _rights_check(note, state, fields, user)
    published = note.status == Status.PUBLISHED
    # Without a working copy, what the authors edit is the row itself.
    live = state if note.working is None else None
    fresh = _row_or_copy_write(note, fields, wanted, user, published=published, live=live)
    revision = _revision_record(note, user, base_version, kind)
    if not published:
        # A working copy was rendered as it was written (working_copy_write), for the
        # editor's preview and the publish check; a draft's row renders now.
        note_render_store(note=note, force=True)
    return SaveResult(note=note, conflict=False, revision=revision, fresh=fresh)


def _save_input_check(fields: dict, kind: str) -> None:
    """Before the row lock: a save kind, editable fields only, a body within its size."""
    if kind not in {NoteRevision.Kind.SAVE, NoteRevision.Kind.AUTOSAVE}:
        raise ValueError(f"Not a save kind: {kind}")
    unknown = set(fields) - EDITOR_FIELDS
    if unknown:
        raise ValueError(f"Not editable here: {', '.join(sorted(unknown))}")
    if "body" in fields:
        body_check(fields["body"])


def _merged_base_version(note: Note, base_version: int, fields: dict) -> int:
    """Save text typed together first (text_sync); a post its merged text vouches for (the
    live editor's own Save) counts as made on the current version."""
    merged = text_sync.before_write(note=note)
    if merged is not None and merged.vouches_for(
        note=note, base_version=base_version, fields=fields
    ):
        return note.version
    return base_version


def state_with_fields(state: dict, fields: dict) -> dict:
    """`state` with the editor's `fields` (note_save's values: a datetime, tag names, author
    handles, BibFiles or names) written over it, in the state's JSON form."""
    merged = dict(state)
    for name, value in fields.items():
        if name == "date":
            value = value.isoformat() if value else None
        elif name == "tags":
            value = tag_names(value)
        elif name == "authors":
            value = list(dict.fromkeys(value))
        elif name == "bibliographies":
            value = [getattr(item, "name", item) for item in value]
        merged[name] = value
    return merged


def _conflict_record(note: Note, user, base_version: int, wanted: dict) -> SaveResult:
    """The refused fields kept as a "conflict" revision; the note is left as it is."""
    revision = revision_record(
        note=note,
        kind=NoteRevision.Kind.CONFLICT,
        user=user,
        base_version=base_version,
        message=f"Refused: the note is at version {note.version}, not {base_version}.",
        state=wanted,
    )
    return SaveResult(note=note, conflict=True, revision=revision)


def _rights_check(note: Note, state: dict, fields: dict, user) -> None:
    """The authorship rules a save must keep (notes.services.authorship): an Author keeps
    their own name on the note and names only people who can confirm, and only Editors
    change its weight (pinning) and its place in the promotion slots."""
    pinning = "weight" in fields and (fields["weight"] or 0) != (state.get("weight") or 0)
    if pinning and not is_editor(user):
        raise PermissionDenied("Only Editors pin notes: the weight is theirs to set.")
    promotion_check(state=state, fields=fields, user=user)
    if "authors" in fields:
        authors_check(note=note, current=state["authors"], wanted=fields["authors"], user=user)
        authors_naming_check(current=state["authors"], wanted=fields["authors"], user=user)


def _row_or_copy_write(
    note: Note, fields: dict, wanted: dict, user, *, published: bool, live: dict | None
) -> FreshRender | None:
    """Authors new to the note are asked to confirm; a published note's working copy becomes
    `wanted` (a new version, the live row untouched; its render is returned), a draft's row
    takes `fields`. `live` is the row's note_state when already read."""
    if "authors" in fields:
        consents_request(note=note, handles=wanted["authors"], user=user)
    if not published:
        fields_write(note, fields)
        return None
    fresh = working_copy_write(note, wanted, user, live=live)
    version_bump(note)
    return fresh


def _revision_record(note: Note, user, base_version: int, kind: str) -> NoteRevision:
    """The saved state as a revision; a run of one person's autosaves is one revision."""
    state = working_state(note)
    revision = None
    if kind == NoteRevision.Kind.AUTOSAVE:
        revision = _autosave_coalesced(note, user, base_version, state)
    if revision is None:
        revision = revision_record(
            note=note, kind=kind, user=user, base_version=base_version, state=state
        )
    return revision


def _autosave_coalesced(note: Note, user, base_version: int, state: dict) -> NoteRevision | None:
    """Autosaves every few seconds would bury the history: an autosave by the same person
    within NOTE_AUTOSAVE_COALESCE_SECONDS of the autosave that started the run, with nothing
    else saved between, updates that revision instead of adding one. Explicit saves, publishes
    and restores always add their own. None when a new revision is due."""
    latest = note.revisions.order_by("-number").first()
    window = dt.timedelta(seconds=settings.NOTE_AUTOSAVE_COALESCE_SECONDS)
    if (
        latest is None
        or latest.kind != NoteRevision.Kind.AUTOSAVE
        or latest.created_by_id != getattr(user, "pk", None)
        or latest.created_at < timezone.now() - window
    ):
        return None
    latest.title, latest.body = state["title"], state["body"]
    latest.metadata = {k: v for k, v in state.items() if k not in {"title", "body"}}
    latest.base_version = base_version
    latest.save(update_fields=["title", "body", "metadata", "base_version"])
    return latest


def stale_result(note: Note, base_version: int) -> SaveResult | None:
    if note.version == base_version:
        return None
    return SaveResult(note=note, conflict=True, revision=None)


def flushed_base_version(note: Note, base_version: int) -> int:
    """Save text typed together first (text_sync), then the version an action that posts no
    text (publish, unpublish, discard) is checked against: a `base_version` inside the run of
    merged saves counts as current. A live editor who types and presses Publish within the
    merged save's delay posts the version of the save before; what changed since is typing
    they saw as it happened, not someone's other fields, so it is no conflict."""
    merged = text_sync.before_write(note=note)
    if merged is not None and merged.covers(note=note, base_version=base_version):
        return note.version
    return base_version


@transaction.atomic
def working_copy_discard(*, note_id: int, user, base_version: int) -> SaveResult:
    """Drop a published note's unpublished changes: the editor goes back to the live text
    (kept as a revision, so nothing is lost). Text typed together is saved first."""
    note = editable_note(note_id=note_id, user=user)
    base_version = flushed_base_version(note, base_version)
    stale = stale_result(note, base_version)
    if stale is not None:
        return stale
    if note.working is None:
        return SaveResult(note=note, conflict=False, revision=None)
    working_copy_write(note, note_state(note), user)
    version_bump(note)
    revision = revision_record(
        note=note,
        kind=NoteRevision.Kind.RESTORE,
        user=user,
        base_version=base_version,
        message="Discarded the unpublished changes",
    )
    text_sync.after_write(note=note, user=user)
    return SaveResult(note=note, conflict=False, revision=revision)


# Not the slug, date or authors: another note may have taken the slug since, restoring a date
# could publish or unpublish, and a removed author's handle no longer resolves.
_RESTORED_METADATA = (
    "summary", "description", "institute", "show_title", "tags", "promotion", "weight",
    "keywords", "canonical_url", "disable_share", "search_hidden", "hidden_in_rss",
    "robots_noindex", "params", "math_macros",
)  # fmt: skip


@transaction.atomic
def revision_restore(*, revision_id: int, user) -> SaveResult:
    """Copy a revision's title, body and metadata into what the note's authors edit: the note
    itself, or a published note's working copy (restoring never publishes). A weight and a
    promotion only an Editor may set are restored by Editors only. Text typed together is
    saved first (so it is a revision too), and the restored text goes into the live
    document."""
    revision = NoteRevision.objects.filter(pk=revision_id).first()
    if revision is None:
        raise PermissionDenied("No such revision.")
    note = editable_note(note_id=revision.note_id, user=user)
    text_sync.before_write(note=note)
    base_version = note.version
    fields = {"title": revision.title, "body": revision.body}
    for name in _RESTORED_METADATA:
        if name in revision.metadata:
            fields[name] = revision.metadata[name]
    state = working_state(note)
    if not is_editor(user):
        fields.pop("weight", None)
        fields.pop("promotion", None)
    if note.status == Status.PUBLISHED:
        working_copy_write(note, state_with_fields(state, fields), user)
        version_bump(note)
    else:
        fields_apply(note, fields)
    result = revision_record(
        note=note,
        kind=NoteRevision.Kind.RESTORE,
        user=user,
        base_version=base_version,
        message=f"Restored revision {revision.number}",
        state=working_state(note),
    )
    text_sync.after_write(note=note, user=user)
    return SaveResult(note=note, conflict=False, revision=result)


# --- Default bibliographies: the files a note's reference lists search ----------------------------


def attachable_bibfiles(user, note: Note, state: dict):
    """The files `user` may make the note's defaults: those usable by them, and those already
    chosen in what the authors edit (a co-author keeps another author's choice)."""
    usable = BibFile.objects.usable_by(user, note=note).values("pk")
    return BibFile.objects.filter(Q(pk__in=usable) | Q(name__in=state["bibliographies"]))


@transaction.atomic
def note_bibliographies_set(*, note_id: int, user, bibfile_ids) -> Note:
    """Make `bibfile_ids` (ids or BibFiles, in order) the default bibliographies of what the
    note's authors edit (a published note's working copy), re-rendered so citations resolve
    against them at once.

    Only files attachable by `user` may be named (attachable_bibfiles: usable by them, or
    already chosen, so a co-author can keep another author's choice); otherwise
    PermissionDenied and nothing changes.
    """
    note = editable_note(note_id=note_id, user=user)
    wanted = list(dict.fromkeys(int(getattr(item, "pk", item)) for item in bibfile_ids))
    state = working_state(note)
    usable = dict(
        attachable_bibfiles(user, note, state).filter(pk__in=wanted).values_list("pk", "name")
    )
    refused = [pk for pk in wanted if pk not in usable]
    if refused:
        raise PermissionDenied(
            f"You may not attach these bibliography files: {', '.join(map(str, refused))}."
        )
    names = [usable[pk] for pk in wanted]
    if state["bibliographies"] == names:
        return note
    if note.status == Status.PUBLISHED:
        working_copy_write(note, {**state, "bibliographies": names}, user)
    else:
        # The link rows' signals bump the content generation, once for the whole change.
        with deferred_bumps():
            bibliographies_set(note, wanted)
            note_render_store(note=note, force=True)
    return note
