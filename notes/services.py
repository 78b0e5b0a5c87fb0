"""Writes to notes, pages, authors and tags: one function per action.

Views, commands and the admin call these; none of them writes a Note on its own.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import Counter
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max
from django.db.models.signals import m2m_changed
from django.utils.text import slugify

from bibliography.models import BibFile
from bibliography.services import bibfile_import
from scidraft.hugo import HugoSite, NoteSource, PageSource, Problem
from scidraft.markup import Rendered, render
from scidraft.site.caching import bump_generation, deferred_bumps
from scidraft.site.models import SiteSettings
from scidraft.site.services import assign_fields, site_configure

from .models import (
    Author,
    Note,
    NoteAuthor,
    NoteBibliography,
    NoteCitation,
    NoteRevision,
    Page,
    ReviewComment,
    Status,
    Tag,
    body_size_error,
)
from .rendering import (
    RENDERED_FIELDS,
    apply_rendered,
    batch_context,
    context_for,
    context_with_bibliographies,
    render_note,
    render_page,
    source_hash,
)


def author_for_identity(identity: str) -> Author:
    """The Author for a front-matter `author` value: a handle (`coauthor`) or a name.

    An existing author keeps the name an admin gave it.
    """
    identity = identity.strip()
    handle = slugify(identity, allow_unicode=True) or "author"
    author, _ = Author.objects.get_or_create(handle=handle, defaults={"name": identity})
    return author


def tag_get_or_create(name: str) -> Tag:
    name = " ".join(name.split())
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
    (handles, in order) and `tags` (names, sorted) are read from the database unless given."""
    if authors is None:
        authors = [link.author.handle for link in note.authorships.select_related("author")]
    if tags is None:
        tags = sorted(note.tags.values_list("name", flat=True))
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
    *, note: Note, kind: str, user=None, base_version: int | None = None, message: str = ""
) -> NoteRevision:
    # Numbers are per note; the row lock on the note (callers hold it) keeps them unique.
    last = note.revisions.aggregate(last=Max("number"))["last"] or 0
    return NoteRevision.objects.create(
        note=note,
        number=last + 1,
        kind=kind,
        title=note.title,
        body=note.body,
        metadata=note_metadata(note),
        base_version=note.version if base_version is None else base_version,
        message=message,
        created_by=user if user is not None and user.is_authenticated else None,
    )


def body_check(body: str) -> None:
    """Refuse a body over NOTE_BODY_MAX_BYTES (UTF-8) with a ValidationError on "body" that
    says both sizes (issue #10): it is checked before anything is written, revisions included,
    so the caller still holds the text and can show the error next to it."""
    if message := body_size_error(body):
        raise ValidationError({"body": message})


# --- Importing notes: one at a time (note_import) or a whole site's worth (NoteImportBatch) ---

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
    the ones importing the notes one by one writes (tests/notes/test_import_batch.py).

    Call inside a transaction, and `flush()` before it ends.
    """

    def __init__(self, *, slugs, user=None, base=None):
        self.user = user
        self.base = base
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
            found = _bibfile_pks(set(unknown))
            self.bibfiles.update((name, found.get(name)) for name in unknown)
        return {name: self.bibfiles[name] for name in names}

    def context(self, note: Note):
        if self.base is None:
            return context_for(note)
        return context_with_bibliographies(self.base, self.bibliographies_of.get(note.pk, ()))

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
        "keywords": source.keywords,
        "canonical_url": source.canonical_url,
        "share_buttons": source.share_buttons,
        "disable_share": source.disable_share,
        "search_hidden": source.search_hidden,
        "hidden_in_rss": source.hidden_in_rss,
        "robots_noindex": source.robots_noindex,
        "params": source.params,
        "date_offset_minutes": source.date_offset_minutes,
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


def _note_import(source: NoteSource, batch: NoteImportBatch) -> tuple[Note, str]:
    body_check(source.body)
    note = batch.note(source.slug)
    created = note is None
    if created:
        note = Note(slug=source.slug, created_by=batch.user)
    changed = assign_fields(note, _note_values(source))
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
        batch.tags_of[note.pk] = {tag.pk for tag in tags}
        changed = True

    if early is None:
        batch.flush_tags()  # the render may list notes by tag
    rendered = early or _note_render(note=note, context=batch.context(note))
    if rendered is not None:
        batch.citations[note.pk] = _citation_rows(note, rendered, batch.bibfile_pks)
    if created or changed:
        batch.revisions.append(_import_revision(note, batch, authors=authors, tags=tags))
        return note, "created" if created else "updated"
    return note, "unchanged"


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
        tags=sorted({tag.pk: tag.name for tag in tags}.values()),
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


def note_render_store(*, note: Note, force: bool = False, base=None) -> bool:
    """Render the note and store the result, unless the stored render is already current.

    Returns whether it rendered. The source hash covers the body, the engine version and the
    site's kinds and style, so a stale row is found without comparing HTML. `base` is a
    batch_context() shared by many notes.
    """
    rendered = _note_render(note=note, context=context_for(note, base=base), force=force)
    if rendered is None:
        return False
    citations_store(note=note, rendered=rendered)
    return True


def _note_render(*, note: Note, context, force: bool = False) -> Rendered | None:
    """Render and save the rendered fields, unless current; the citations are the caller's."""
    if not force and note.source_hash == source_hash(note.body, context):
        return None
    rendered = render_note(note, context)
    note.save(update_fields=RENDERED_FIELDS)
    return rendered


def _bibfile_pks(names: set[str]) -> dict[str, int]:
    return dict(BibFile.objects.filter(name__in=names).values_list("name", "pk"))


def _citation_rows(note: Note, rendered: Rendered, bibfile_pks=_bibfile_pks) -> list[NoteCitation]:
    """The NoteCitation rows of what this render cited; `bibfile_pks` maps file names to ids."""
    rows = [
        (index, number, key, reference_list.sources.get(key, ""))
        for index, reference_list in enumerate(rendered.citations)
        for number, key in enumerate(reference_list.keys, start=1)
    ]
    files = bibfile_pks({name for *_, name in rows if name})
    return [
        NoteCitation(
            note=note,
            bibfile_id=files.get(name),
            bib_name=name,
            key=key,
            list_index=index,
            number=number,
        )
        for index, number, key, name in rows
    ]


def citations_store(*, note: Note, rendered: Rendered) -> None:
    """Replace the note's NoteCitation rows with what this render cited."""
    rows = _citation_rows(note, rendered)
    NoteCitation.objects.filter(note=note).delete()
    NoteCitation.objects.bulk_create(rows)


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
def page_import(*, source: PageSource) -> tuple[Page, str]:
    page = Page.objects.select_for_update().filter(slug=source.slug).first()
    created = page is None
    if created:
        page = Page(slug=source.slug)
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
    changed = assign_fields(page, values)
    if changed or created:
        if not created:
            page.version += 1
        page.full_clean()
        page.save()
    authors = [author_for_identity(identity) for identity in source.authors]
    if set(page.authors.values_list("pk", flat=True)) != {author.pk for author in authors}:
        page.authors.set(authors)
        changed = True
    context = context_for(None)
    if page.source_hash != source_hash(page.body, context):
        render_page(page, context)
        page.save(update_fields=RENDERED_FIELDS)
    if created:
        return page, "created"
    return page, "updated" if changed else "unchanged"


@dataclass
class LoadReport:
    """What loading a Hugo site did, per kind of object."""

    counts: dict[str, Counter] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def count(self, kind: str, outcome: str) -> None:
        self.counts.setdefault(kind, Counter())[outcome] += 1

    @property
    def changed(self) -> bool:
        return any(counter["created"] or counter["updated"] for counter in self.counts.values())

    def lines(self) -> list[str]:
        rows = []
        for kind, counter in self.counts.items():
            parts = ", ".join(
                f"{counter[outcome]} {outcome}"
                for outcome in ("created", "updated", "unchanged")
                if counter[outcome]
            )
            rows.append(f"{kind}: {parts}")
        rows.extend(f"problem: {problem}" for problem in self.problems)
        return rows


def hugo_site_load(*, site: HugoSite, user=None) -> LoadReport:
    """Write a Hugo site's config, bibliographies, notes and pages; idempotent.

    A file that cannot be read is reported and skipped; the rest loads.
    """
    # One bump for the whole load instead of one per saved row.
    with deferred_bumps():
        return _hugo_site_load(site=site, user=user)


def _hugo_site_load(*, site: HugoSite, user=None) -> LoadReport:
    report = LoadReport(problems=list(site.problems))
    for part, outcome in site_configure(config=site.config).items():
        report.count(part, outcome)
    for bib in site.bib_files:
        try:
            result = bibfile_import(name=bib.name, raw=bib.text, owner=user)
        except Exception as error:  # one bad file is reported; the rest of the site loads
            report.problems.append(Problem(bib.path, str(error)))
            continue
        report.count("bibliography files", result.outcome)
        for problem in result.problems:
            report.problems.append(Problem(bib.path, problem.reason, problem.line))
    base = batch_context()
    # One transaction for the notes (a savepoint inside import_site's) keeps the batch's row
    # locks until its revisions and citations are written.
    with transaction.atomic():
        batch = NoteImportBatch(slugs=[source.slug for source in site.notes], user=user, base=base)
        for source in site.notes:
            try:
                _, outcome = note_import_batched(source=source, batch=batch)
            except Exception as error:  # reported per file, as above
                report.problems.append(Problem(source.path, _describe(error)))
                continue
            report.count("notes", outcome)
        batch.flush()
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
            _, outcome = page_import(source=source)
        except Exception as error:  # reported per file, as above
            report.problems.append(Problem(source.path, _describe(error)))
            continue
        report.count("pages", outcome)
    return report


def _describe(error: Exception) -> str:
    messages = getattr(error, "message_dict", None)
    if messages:
        return "; ".join(f"{name}: {' '.join(texts)}" for name, texts in messages.items())
    return str(error)


# --- The web editor (issue 6): create, save, publish, restore --------------------------------

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


def _editable_note(*, note_id: int, user) -> Note:
    """The note, row-locked, if `user` may edit it; PermissionDenied otherwise."""
    if not Note.objects.editable_by(user).filter(pk=note_id).exists():
        raise PermissionDenied("You may not edit this note.")
    return Note.objects.select_for_update().get(pk=note_id)


def _author_for_user(user) -> Author:
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
    NoteAuthor.objects.create(note=note, author=_author_for_user(user), position=0)
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
    note = _editable_note(note_id=note_id, user=user)
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


def _stale(note: Note, base_version: int) -> SaveResult | None:
    if note.version == base_version:
        return None
    return SaveResult(note=note, conflict=True, revision=None)


@transaction.atomic
def note_publish(*, note_id: int, user, base_version: int) -> SaveResult:
    """Publish (a future date schedules it). When the site requires review, a user without
    notes.review_note submits the note for review instead; a reviewer's publish approves it."""
    if not user.has_perm("notes.publish_note"):
        raise PermissionDenied("You may not publish notes.")
    note = _editable_note(note_id=note_id, user=user)
    stale = _stale(note, base_version)
    if stale is not None:
        return stale
    review = SiteSettings.objects.current().require_review and not user.has_perm(
        "notes.review_note"
    )
    note.status = Status.REVIEW if review else Status.PUBLISHED
    note.version += 1
    note.full_clean()
    note.save()
    if review:
        kind, message = NoteRevision.Kind.SAVE, "Submitted for review"
    else:
        kind, message = NoteRevision.Kind.PUBLISH, ""
    revision = revision_record(
        note=note, kind=kind, user=user, base_version=base_version, message=message
    )
    return SaveResult(note=note, conflict=False, revision=revision)


@transaction.atomic
def note_unpublish(*, note_id: int, user, base_version: int) -> SaveResult:
    """Back to draft: readers no longer see it (also withdraws a review request)."""
    note = _editable_note(note_id=note_id, user=user)
    stale = _stale(note, base_version)
    if stale is not None:
        return stale
    note.status = Status.DRAFT
    note.version += 1
    note.full_clean()
    note.save()
    revision = revision_record(
        note=note, kind=NoteRevision.Kind.UNPUBLISH, user=user, base_version=base_version
    )
    return SaveResult(note=note, conflict=False, revision=revision)


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
    note = _editable_note(note_id=revision.note_id, user=user)
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


# --- Review (site setting "require review"): approve or send back ----------------------------

REVIEW_COMMENT_MAX_CHARS = 10_000


class ReviewError(Exception):
    """A review action that does not apply to the note as it stands; the message says why."""


def _reviewable_note(*, note_id: int, user) -> Note:
    """The note, row-locked, if `user` may review notes; PermissionDenied otherwise."""
    if not (user.is_authenticated and user.is_active and user.has_perm("notes.review_note")):
        raise PermissionDenied("Only editors review notes.")
    note = Note.objects.select_for_update().get(pk=note_id)
    if note.status != Status.REVIEW:
        raise ReviewError(f"This note is not awaiting review: it is {note.get_status_display()}.")
    return note


def _reviewer_name(user) -> str:
    return user.get_full_name() or user.get_username()


def _review_comment(comment: str, *, required: bool) -> str:
    comment = comment.strip()
    if required and not comment:
        raise ReviewError("Write a comment: it tells the authors what to change.")
    if len(comment) > REVIEW_COMMENT_MAX_CHARS:
        raise ReviewError(
            f"The comment is {len(comment):,} characters; the limit is "
            f"{REVIEW_COMMENT_MAX_CHARS:,}."
        )
    return comment


def _review_decide(
    *, note_id: int, user, base_version: int | None, status: str, kind: str, comment: str
) -> SaveResult:
    """A reviewer's decision: the note's new status, its revision and the ReviewComment. With
    `base_version`, a note changed since the reviewer read it is left alone (a conflict)."""
    note = _reviewable_note(note_id=note_id, user=user)
    if base_version is not None:
        stale = _stale(note, base_version)
        if stale is not None:
            return stale
    base = note.version
    note.status = status
    note.version += 1
    note.full_clean()
    note.save()
    approved = kind == ReviewComment.Kind.APPROVE
    revision = revision_record(
        note=note,
        kind=NoteRevision.Kind.PUBLISH if approved else NoteRevision.Kind.UNPUBLISH,
        user=user,
        base_version=base,
        message=f"{'Approved' if approved else 'Sent back'} by {_reviewer_name(user)}",
    )
    ReviewComment.objects.create(note=note, reviewer=user, kind=kind, body=comment)
    return SaveResult(note=note, conflict=False, revision=revision)


@transaction.atomic
def note_review_approve(
    *, note_id: int, user, base_version: int | None = None, comment: str = ""
) -> SaveResult:
    """Publish a note submitted for review (a future date schedules it). With `base_version`,
    a note changed since the reviewer read it is not approved: the result is a conflict."""
    return _review_decide(
        note_id=note_id, user=user, base_version=base_version, status=Status.PUBLISHED,
        kind=ReviewComment.Kind.APPROVE, comment=_review_comment(comment, required=False),
    )  # fmt: skip


@transaction.atomic
def note_review_send_back(
    *, note_id: int, user, comment: str, base_version: int | None = None
) -> SaveResult:
    """Return a note submitted for review to its authors as a draft, with a comment they see
    in the editor."""
    return _review_decide(
        note_id=note_id, user=user, base_version=base_version, status=Status.DRAFT,
        kind=ReviewComment.Kind.SEND_BACK, comment=_review_comment(comment, required=True),
    )  # fmt: skip


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
    note = _editable_note(note_id=note_id, user=user)
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
