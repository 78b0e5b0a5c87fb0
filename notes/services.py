"""Writes to notes, pages, authors and tags: one function per action.

Views, commands and the admin call these; none of them writes a Note on its own.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils.text import slugify

from bibliography.models import BibFile
from bibliography.services import bibfile_import
from scidraft.hugo import HugoSite, NoteSource, PageSource, Problem
from scidraft.site.caching import bump_generation, deferred_bumps
from scidraft.site.models import SiteSettings
from scidraft.site.services import assign_fields, site_configure

from .models import (
    Author,
    Note,
    NoteAuthor,
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
    batch_context,
    context_for,
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


def note_metadata(note: Note) -> dict:
    """The note's fields other than title and body, as a revision records them."""
    return {
        "slug": note.slug,
        "date": note.date.isoformat() if note.date else None,
        "date_offset_minutes": note.date_offset_minutes,
        "status": note.status,
        "authors": [link.author.handle for link in note.authorships.select_related("author")],
        "institute": note.institute,
        "tags": sorted(note.tags.values_list("name", flat=True)),
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


@transaction.atomic
def note_import(*, source: NoteSource, user=None, base=None) -> tuple[Note, str]:
    """Create or update the note `source.slug` from front matter and body.

    Returns the note and "created", "updated" or "unchanged"; every change is a revision.
    """
    body_check(source.body)
    note = Note.objects.select_for_update().filter(slug=source.slug).first()
    created = note is None
    if created:
        note = Note(slug=source.slug, created_by=user)
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
    changed = assign_fields(note, values)
    if changed or created:
        if not created:
            note.version += 1
        note.full_clean()
        note.save()

    authors = [author_for_identity(identity) for identity in source.authors]
    current_authors = [link.author_id for link in note.authorships.all()]
    if current_authors != [author.pk for author in authors]:
        note.authorships.all().delete()
        NoteAuthor.objects.bulk_create(
            NoteAuthor(note=note, author=author, position=position)
            for position, author in enumerate(dict.fromkeys(authors))
        )
        bump_generation()  # bulk_create sends no signal; every other write here does
        changed = True

    tags = [tag_get_or_create(name) for name in dict.fromkeys(source.tags)]
    if set(note.tags.values_list("pk", flat=True)) != {tag.pk for tag in tags}:
        note.tags.set(tags)
        changed = True

    note_render_store(note=note, base=base)
    if created or changed:
        revision_record(note=note, kind=NoteRevision.Kind.IMPORT, user=user)
        return note, "created" if created else "updated"
    return note, "unchanged"


def note_render_store(*, note: Note, force: bool = False, base=None) -> bool:
    """Render the note and store the result, unless the stored render is already current.

    Returns whether it rendered. The source hash covers the body, the engine version and the
    site's kinds and style, so a stale row is found without comparing HTML. `base` is a
    batch_context() shared by many notes.
    """
    context = context_for(note, base=base)
    if not force and note.source_hash == source_hash(note.body, context):
        return False
    rendered = render_note(note, context)
    note.save(update_fields=RENDERED_FIELDS)
    citations_store(note=note, rendered=rendered)
    return True


def citations_store(*, note: Note, rendered) -> None:
    """Replace the note's NoteCitation rows with what this render cited."""
    rows = [
        (index, number, key, reference_list.sources.get(key, ""))
        for index, reference_list in enumerate(rendered.citations)
        for number, key in enumerate(reference_list.keys, start=1)
    ]
    files = dict(
        BibFile.objects.filter(name__in={name for *_, name in rows if name}).values_list(
            "name", "pk"
        )
    )
    NoteCitation.objects.filter(note=note).delete()
    NoteCitation.objects.bulk_create(
        NoteCitation(
            note=note,
            bibfile_id=files.get(name),
            bib_name=name,
            key=key,
            list_index=index,
            number=number,
        )
        for index, number, key, name in rows
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
    for source in site.notes:
        try:
            _, outcome = note_import(source=source, user=user, base=base)
        except Exception as error:  # reported per file, as above
            report.problems.append(Problem(source.path, _describe(error)))
            continue
        report.count("notes", outcome)
    # A note may \ref a label of a note loaded after it: render those once more, now that
    # every note's labels are stored.
    for note in Note.objects.filter(slug__in=[source.slug for source in site.notes]):
        if any(warning["code"] == "ref-unresolved" for warning in note.render_warnings):
            note_render_store(note=note, force=True, base=base)
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
