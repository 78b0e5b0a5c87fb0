"""Notes, standalone pages, authors, tags, theorem-like environment kinds and revisions.

One module per model family; every public name is here, so code imports `from notes.models`.
"""

from .authors import Author, AuthorConsent, AuthorConsentQuerySet, NoteAuthor
from .citations import LiveBibEntry, LiveBibliography, NoteBibliography, NoteCitation
from .environments import Environment
from .notes import Note, NoteQuerySet, card_prefetches, prefetch_cards
from .pages import Page, PageQuerySet
from .rendered import (
    EXCERPT_SOURCE_CHARS,
    RenderedContent,
    RenderedQuerySet,
    Status,
    body_size_error,
    in_written_offset,
    validate_share_buttons_or_none,
    validate_string_list,
)
from .review import ReviewComment, ReviewCommentQuerySet
from .revisions import NoteRevision
from .tags import Tag, TagQuerySet, tag_name, tag_names
from .working import WorkingCopy

__all__ = [
    "EXCERPT_SOURCE_CHARS",
    "Author",
    "AuthorConsent",
    "AuthorConsentQuerySet",
    "Environment",
    "LiveBibEntry",
    "LiveBibliography",
    "Note",
    "NoteAuthor",
    "NoteBibliography",
    "NoteCitation",
    "NoteQuerySet",
    "NoteRevision",
    "Page",
    "PageQuerySet",
    "RenderedContent",
    "RenderedQuerySet",
    "ReviewComment",
    "ReviewCommentQuerySet",
    "Status",
    "Tag",
    "TagQuerySet",
    "WorkingCopy",
    "body_size_error",
    "card_prefetches",
    "in_written_offset",
    "prefetch_cards",
    "tag_name",
    "tag_names",
    "validate_share_buttons_or_none",
    "validate_string_list",
]
