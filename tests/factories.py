"""Notes, pages, bibliography files and images as tests need them, each built the way the site
builds it.

Three ways in, by what the test is about:
- through the services (`draft_note`, `write`, `publish`, `published_note`…), as an author in
  the editor makes them: revisions, permissions, renders and citations as in production;
- through the Hugo import (`imported_note`, `imported_page`), as `import_hugo` and the demo
  make them: front matter fields (dates with their offset, tags, layouts) without a user;
- as raw rows (`note_row`, `note_rows`), for reads that need a state the services take many
  steps to reach (a scheduled note, a dangling author) or many notes at once.

Users of each role are fixtures in tests/people.py (`author`, `editor_user`…).
"""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from bibliography.models import BibFile
from bibliography.services import bibfile_create, bibfile_import
from hugosite.content import NoteSource, PageSource
from hugosite.loading import note_import, page_import
from images.models import NoteImage
from images.services import image_upload
from notes import services
from notes.models import Note, NoteAuthor, Page, Status
from tests.images.samples import png_upload


def yesterday() -> dt.datetime:
    return timezone.now() - dt.timedelta(days=1)


# --- Through the services -------------------------------------------------------------------


def draft_note(user, title: str = "Heat equation", **fields) -> Note:
    """`user`'s new note; saved once with `fields` (body, tags, authors…) when there are any."""
    note = services.note_create(user=user, title=title)
    return write(note, user, **fields) if fields else note


def draft_notes(user, count: int, title: str) -> list[Note]:
    """`count` new notes of `user`'s, titled `title` and their index: "Draft 0", "Draft 1"…"""
    return [draft_note(user, f"{title} {index}") for index in range(count)]


def write(note: Note, user, **fields) -> Note:
    """`fields` saved on `note` by `user`, on top of the note's current version."""
    note.refresh_from_db()
    return services.note_save(
        note_id=note.pk, user=user, base_version=note.version, fields=fields
    ).note


def publish(note: Note, user) -> Note:
    """`note` published (or, where review is required of `user`, submitted) by `user`."""
    note.refresh_from_db()
    return services.note_publish(note_id=note.pk, user=user, base_version=note.version).note


def unpublish(note: Note, user) -> Note:
    note.refresh_from_db()
    return services.note_unpublish(note_id=note.pk, user=user, base_version=note.version).note


def published_note(user, title: str = "Heat equation", body: str = "Text.", *, by=None, **fields):
    """`user`'s note with `body` (and `fields`), published by `by` (an Editor) or by `user`."""
    note = draft_note(user, title, body=body, **fields)
    published = publish(note, by or user)
    assert published.status == Status.PUBLISHED, published.status
    return published


def bib_file(user, name: str, raw: str | bytes) -> BibFile:
    """A .bib file `user` uploads (private to them until a published note uses it)."""
    return bibfile_create(user=user, name=name, raw=raw).bibfile


def site_bib_file(name: str, raw: str | bytes) -> BibFile:
    """A .bib file as `import_bib` or a Hugo import stores it: shared by every note."""
    return bibfile_import(name=name, raw=raw).bibfile


def note_image(note: Note, user) -> NoteImage:
    """A small PNG `user` uploads to `note`; its `markdown` shows it in a body."""
    return image_upload(note_id=note.pk, user=user, uploaded_file=png_upload()).image


# --- Through the Hugo import ----------------------------------------------------------------


def imported_note(slug: str, body: str = "Plain text of the note.", **fields) -> Note:
    """A note stored (and rendered) as a Hugo import stores it: titled after its slug and dated
    yesterday unless `fields` say otherwise. A date given with a UTC offset keeps the offset,
    as front matter's `2026-09-22T07:20:00+09:00` does."""
    fields.setdefault("title", slug.replace("-", " ").title())
    fields.setdefault("path", f"content/notes/{slug}.md")
    if "date" not in fields:
        fields["date"] = yesterday()
    elif fields["date"] is not None and fields["date"].utcoffset() is not None:
        offset = fields["date"].utcoffset().total_seconds()
        fields.setdefault("date_offset_minutes", int(offset // 60))
    note, _ = note_import(source=NoteSource(slug=slug, body=body, **fields))
    return note


def imported_page(slug: str, body: str = "", **fields) -> Page:
    """A standalone page (`content/<slug>.md`) stored as a Hugo import stores it."""
    fields.setdefault("path", f"content/{slug}.md")
    page, _ = page_import(source=PageSource(slug=slug, body=body, **fields))
    return page


# --- Raw rows -------------------------------------------------------------------------------


def note_row(slug: str, body: str = "Some text.", *, author=None, rendered=False, **fields):
    """A note row saved directly, with no revision: published yesterday unless `fields` say
    otherwise. `author` (a user) becomes its creator and first author, so they may edit it;
    `rendered` stores its render as the services do."""
    fields.setdefault("status", Status.PUBLISHED)
    fields.setdefault("date", yesterday())
    if author is not None:
        fields["created_by"] = author
    note = Note.objects.create(slug=slug, body=body, **fields)
    if author is not None:
        NoteAuthor.objects.create(note=note, author=services.author_for_user(author), position=0)
    if rendered:
        services.note_render_store(note=note, force=True)
    return note


def note_rows(count: int, *, title: str, body: str, text: str) -> list[Note]:
    """`count` published notes `extra-0`… in one query, stored as rendered to `text` in one
    paragraph; `title` is formatted with the note's index. Two days old, a minute apart, the
    first the newest. No search vectors: a test that searches stores them."""
    now = timezone.now() - dt.timedelta(days=2)
    return Note.objects.bulk_create(
        Note(
            slug=f"extra-{index}",
            title=title.format(index),
            body=body,
            rendered_html=f"<p>{text}</p>",
            rendered_text=text,
            has_body=True,  # bulk_create skips save(), which keeps it
            status=Status.PUBLISHED,
            date=now - dt.timedelta(minutes=index),
        )
        for index in range(count)
    )
