"""Writes to notes, pages, authors and tags: one function per action, by family.

- records: the rows every write makes (authors and tags by name, revisions, the size check);
- renders: a note's stored render and the citation rows of what it cites;
- working: where a note's editable state lives (the row of a draft, the working copy of a
  published note) and how it goes live;
- authorship: bylines by consent, and who may pin notes;
- editing: the editor's create, save, discard, restore and default bibliographies;
- publishing: publish (or submit for review, or schedule) and unpublish; the editor's
  Save or Publish click as one write (note_save_and_publish);
- review: an Editor's approval or sending back, an author's withdrawal;
- kept_entries, references: the entries a live version cites, kept when it goes live, and
  what a change to a cited bibliography file does to them (notes.live_references reads them);
- trash: delete into the trash, an Editor's restore, and the purge after TRASH_DAYS;
- text_sync: the hooks through which the live document of writing together (collaboration)
  is saved before, and told of, the editor's HTTP writes.

Importing a Hugo site is hugosite.loading's. Views, commands and the admin call these; none of
them writes a Note on its own.
"""

from .authorship import (
    AuthorshipError,
    authorship_confirm,
    authorship_decline,
    unconfirmed_authors,
)
from .editing import (
    EDITOR_FIELDS,
    SaveResult,
    author_for_user,
    note_bibliographies_set,
    note_create,
    note_live_save,
    note_save,
    revision_restore,
    working_copy_discard,
)
from .publishing import (
    PUBLISH_BLOCKERS,
    SUBMITTED,
    EditorWrite,
    note_publish,
    note_save_and_publish,
    note_unpublish,
    publish_problems,
)
from .records import (
    assign_fields,
    author_for_identity,
    body_check,
    is_editor,
    note_metadata,
    note_state,
    revision_record,
    tag_get_or_create,
)
from .renders import citations_store, note_render_store
from .review import (
    REVIEW_COMMENT_MAX_CHARS,
    ReviewError,
    awaiting_review,
    note_review_approve,
    note_review_send_back,
    note_review_withdraw,
)
from .trash import TRASH_DAYS, TrashError, note_delete, note_restore, trash_purge
from .working import STATE_FIELDS, working_context, working_copy_refresh, working_state

__all__ = [
    "AuthorshipError",
    "EditorWrite",
    "PUBLISH_BLOCKERS",
    "EDITOR_FIELDS",
    "REVIEW_COMMENT_MAX_CHARS",
    "STATE_FIELDS",
    "SUBMITTED",
    "TRASH_DAYS",
    "TrashError",
    "ReviewError",
    "SaveResult",
    "assign_fields",
    "author_for_identity",
    "author_for_user",
    "awaiting_review",
    "authorship_confirm",
    "authorship_decline",
    "body_check",
    "citations_store",
    "is_editor",
    "note_bibliographies_set",
    "note_create",
    "note_delete",
    "note_live_save",
    "note_metadata",
    "note_publish",
    "note_render_store",
    "note_restore",
    "note_review_approve",
    "note_review_send_back",
    "note_review_withdraw",
    "note_save",
    "note_save_and_publish",
    "note_state",
    "note_unpublish",
    "publish_problems",
    "revision_record",
    "revision_restore",
    "tag_get_or_create",
    "trash_purge",
    "unconfirmed_authors",
    "working_context",
    "working_copy_discard",
    "working_copy_refresh",
    "working_state",
]
