"""What a public page shows, named as the page cache's dependency tags
(scidraft.site.dependencies): the page goes stale when one of these notes changes."""

from __future__ import annotations

from scidraft.site import dependencies


def notes_shown(request, notes) -> None:
    """The page shows these notes' cards, titles or text, and through them the notes they
    refer to (a reference's text changes when its target is published, unpublished or
    renamed). A note read without its `render_refs` names only itself."""
    slugs = set()
    for note in notes:
        slugs.add(note.slug)
        slugs.update(key.split(":", 1)[0] for key in (note.__dict__.get("render_refs") or {}))
    dependencies.depends_on(request, *map(dependencies.note, slugs))
