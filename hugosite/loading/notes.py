"""Notes loaded in one batch (NoteImportBatch): what importing them one by one would ask the
database for note by note is read up front, and revisions and citation rows are written in
bulk. The rows written are those of importing the notes one at a time
(tests/hugosite/test_loading.py)."""

from __future__ import annotations

import copy
import dataclasses

from django.db import transaction
from django.db.models import Max
from django.db.models.signals import m2m_changed

from notes.live_references import live_context
from notes.models import (
    Author,
    Note,
    NoteAuthor,
    NoteBibliography,
    NoteCitation,
    NoteRevision,
    Status,
    Tag,
    tag_name,
    tag_names,
)
from notes.rendering import (
    apply_rendered,
    context_for,
    context_with_bibliographies,
    source_hash,
)
from notes.services.records import (
    author_for_identity,
    body_check,
    identity_handle,
    note_metadata,
    tag_get_or_create,
)
from notes.services.renders import bibfile_pks as stored_bibfile_pks
from notes.services.renders import citation_rows, note_render_fields
from scidraft.markup import Rendered, render
from scidraft.site.generation import bump_generation
from scidraft.site.models import SiteSettings

from ..content import NoteSource
from .report import LoadPolicy, RowChange, changed_fields

# Parameters per `__in` query: SQLite builds before 3.32 allow 999 in one statement.
_IN_CHUNK = 500


def _chunks(items: list, size: int = _IN_CHUNK):
    for start in range(0, len(items), size):
        yield items[start : start + size]


class NoteImportBatch:
    """What importing many notes would otherwise ask the database for note by note.

    Made for the slugs about to be imported, or given them batch by batch (read()): their notes
    (row-locked), authors, tags, default bibliographies and last revision numbers are read in a
    few queries; flush() then release() between batches bounds what it holds. Tags, authors and
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
        # None: known to have no note; a slug missing from the dict is asked for again.
        self.notes: dict[str, Note | None] = {}
        self.authors_of: dict[int, list[int]] = {}
        self.tags_of: dict[int, set[int]] = {}
        self.bibliographies_of: dict[int, tuple[str, ...]] = {}
        self.last_revision: dict[int, int] = {}
        self.tags: dict[str, Tag] = {}
        self.authors: dict[str, Author] = {}
        self.bibfiles: dict[str, int | None] = {}
        self.revisions: list[NoteRevision] = []
        self.citations: dict[int, list[NoteCitation]] = {}
        self.new_tags: dict[int, tuple[Note, set[int]]] = {}
        self.changes: list[RowChange] = []  # the notes updated, with the fields that changed
        self.read(slugs)

    def read(self, slugs) -> None:
        """Read (row-locked) the notes `slugs` name and their links, before importing them."""
        slugs = [slug for slug in dict.fromkeys(slugs) if slug not in self.notes]
        found: dict[str, Note] = {}
        for chunk in _chunks(slugs):
            found.update(
                (n.slug, n) for n in Note.objects.select_for_update().filter(slug__in=chunk)
            )
        self.notes.update((slug, found.get(slug)) for slug in slugs)
        unread = [note.pk for note in found.values() if note.pk not in self.authors_of]
        for pk in unread:
            self.authors_of[pk], self.tags_of[pk] = [], set()
        for chunk in _chunks(unread):
            self._read_links(chunk)

    def release(self) -> None:
        """Forget the notes read or written so far (their rows, bodies and renders): after
        flush(), between batches of a large import. A slug asked for again is read again."""
        self.notes.clear()

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
