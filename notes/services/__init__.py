"""Writes to notes, pages, authors and tags: one function per action, by family.

- records: the rows every write makes (authors and tags by name, revisions, the size check);
- renders: a note's stored render and the citation rows of what it cites;
- editing: the editor's create, save, restore and default bibliographies;
- publishing: publish (or submit for review, or schedule) and unpublish;
- review: an Editor's approval or sending back.

Importing a Hugo site is hugo.loading's. Views, commands and the admin call these; none of
them writes a Note on its own.
"""

from .editing import (
    EDITOR_FIELDS,
    SaveResult,
    author_for_user,
    note_bibliographies_set,
    note_create,
    note_save,
    revision_restore,
)
from .publishing import note_publish, note_unpublish
from .records import (
    assign_fields,
    author_for_identity,
    body_check,
    note_metadata,
    revision_record,
    tag_get_or_create,
)
from .renders import citations_store, note_render_store
from .review import (
    REVIEW_COMMENT_MAX_CHARS,
    ReviewError,
    note_review_approve,
    note_review_send_back,
)

__all__ = [
    "EDITOR_FIELDS",
    "REVIEW_COMMENT_MAX_CHARS",
    "ReviewError",
    "SaveResult",
    "assign_fields",
    "author_for_identity",
    "author_for_user",
    "body_check",
    "citations_store",
    "note_bibliographies_set",
    "note_create",
    "note_metadata",
    "note_publish",
    "note_render_store",
    "note_review_approve",
    "note_review_send_back",
    "note_save",
    "note_unpublish",
    "revision_record",
    "revision_restore",
    "tag_get_or_create",
]
