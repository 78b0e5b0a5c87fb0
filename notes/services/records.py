"""What every write path of notes shares: authors and tags by name, revisions, the body size
check, and assigning only the fields that changed."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db.models import Max
from django.utils.text import slugify

from ..models import Author, Note, NoteRevision, Tag, body_size_error, tag_name


def identity_handle(identity: str) -> str:
    """The handle of the Author a front-matter `author` value (a handle or a name) names."""
    return slugify(identity.strip(), allow_unicode=True) or "author"


def author_for_identity(identity: str) -> Author:
    """The Author for a front-matter `author` value: a handle (`coauthor`) or a name.

    An existing author keeps the name an admin gave it.
    """
    identity = identity.strip()
    author, _ = Author.objects.get_or_create(
        handle=identity_handle(identity), defaults={"name": identity}
    )
    return author


def tag_get_or_create(name: str) -> Tag:
    name = tag_name(name)
    tag = Tag.objects.filter(name=name).first()
    if tag is not None:
        return tag
    base = slugify(name, allow_unicode=True) or "tag"
    slug, suffix = base, 2
    # "C" and "C++" urlize alike; the second one gets a suffix rather than an error.
    while Tag.objects.filter(slug=slug).exists():
        slug, suffix = f"{base}-{suffix}", suffix + 1
    return Tag.objects.create(name=name, slug=slug)


def note_metadata(
    note: Note, *, authors: list[str] | None = None, tags: list[str] | None = None
) -> dict:
    """The note's fields other than title and body, as a revision records them. `authors`
    (handles, in order) and `tags` (names, in the author's order) are read from the database
    unless given."""
    if authors is None:
        authors = [link.author.handle for link in note.authorships.select_related("author")]
    if tags is None:
        tags = [tag.name for tag in note.ordered_tags()]
    return {
        "slug": note.slug,
        "date": note.date.isoformat() if note.date else None,
        "date_offset_minutes": note.date_offset_minutes,
        "status": note.status,
        "authors": authors,
        "institute": note.institute,
        "tags": tags,
        "show_title": note.show_title,
        "promotion": note.promotion,
        "weight": note.weight,
        "summary": note.summary,
        "description": note.description,
        "math": note.math,
        "math_macros": note.math_macros,
        "keywords": note.keywords,
        "canonical_url": note.canonical_url,
        "share_buttons": note.share_buttons,
        "disable_share": note.disable_share,
        "search_hidden": note.search_hidden,
        "hidden_in_rss": note.hidden_in_rss,
        "robots_noindex": note.robots_noindex,
        "params": note.params,
    }


def revision_record(
    *,
    note: Note,
    kind: str,
    user=None,
    base_version: int | None = None,
    message: str = "",
    state: dict | None = None,
    replacing: NoteRevision | None = None,
) -> NoteRevision:
    """A revision of the note's row, or of `state` (note_state's shape: a working copy).

    `replacing` is a revision the same action recorded a moment before (the save that a
    Publish click makes first): it becomes this revision, under its own number and base
    version, so that one action is one revision."""
    if state is None:
        title, body, metadata = note.title, note.body, note_metadata(note)
    else:
        title, body = state["title"], state["body"]
        metadata = {k: v for k, v in state.items() if k not in {"title", "body"}}
    if replacing is not None and replacing.note_id == note.pk:
        replacing.kind, replacing.message = kind, message
        replacing.title, replacing.body, replacing.metadata = title, body, metadata
        replacing.save(update_fields=["kind", "message", "title", "body", "metadata"])
        return replacing
    # Numbers are per note; the row lock on the note (callers hold it) keeps them unique.
    last = note.revisions.aggregate(last=Max("number"))["last"] or 0
    return NoteRevision.objects.create(
        note=note,
        number=last + 1,
        kind=kind,
        title=title,
        body=body,
        metadata=metadata,
        base_version=note.version if base_version is None else base_version,
        message=message,
        created_by=user if user is not None and user.is_authenticated else None,
    )


def body_check(body: str) -> None:
    """Refuse a body over NOTE_BODY_MAX_BYTES (UTF-8) with a ValidationError on "body" that
    says both sizes: it is checked before anything is written, revisions included,
    so the caller still holds the text and can show the error next to it."""
    if message := body_size_error(body):
        raise ValidationError({"body": message})


def assign_fields(instance, values: dict) -> bool:
    """Set the values that differ; returns whether any did (imports save only real changes)."""
    changed = False
    for name, value in values.items():
        if getattr(instance, name) != value:
            setattr(instance, name, value)
            changed = True
    return changed


def is_editor(user) -> bool:
    """Editors and Admins: they may edit any note, pin notes and confirm bylines."""
    return bool(
        user is not None
        and user.is_authenticated
        and user.is_active
        and (user.is_superuser or user.has_perm("notes.edit_any_note"))
    )


def note_state(note: Note) -> dict:
    """The note as the editor sees it: title, body, note_metadata's fields and the default
    bibliographies by name. A working copy holds the same shape."""
    return {
        "title": note.title,
        "body": note.body,
        **note_metadata(note),
        "bibliographies": list(
            note.bibliography_links.order_by("position").values_list("bibfile__name", flat=True)
        ),
    }
