import itertools

from django.core.management.base import BaseCommand, CommandError

from notes import completion, search_index
from notes.live_references import live_context
from notes.models import Note, Page
from notes.rendering import context_for, source_hash
from notes.services.renders import page_render_store
from notes.services.rerendering import notes_rerender
from scidraft.markup import ENGINE_VERSION, render
from scidraft.markup.crossrefs import kind_references
from scidraft.progress import Progress
from scidraft.site.generation import deferred_bumps

# Characters of each side shown where a changed page first differs.
EXCERPT = 70


def first_difference(old: str, new: str) -> str:
    """Where two renders part: the stored and the new HTML around their first difference."""
    index = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
        min(len(old), len(new)),
    )
    start = max(0, index - 20)

    def excerpt(text: str) -> str:
        return repr(text[start : start + EXCERPT])

    return f"at character {index}: {excerpt(old)} → {excerpt(new)}"


class Command(BaseCommand):
    help = (
        "Render stored notes and pages again. Without --all, only rows whose stored render is "
        "stale (another engine version, changed kinds or style); run after upgrading SciDraft. "
        "With --check, write nothing and list the rows whose HTML the render would change. "
        "Notes are rendered over --workers processes and written in batches; progress goes "
        "to stderr. Interrupted, every note keeps either its old render or its new one."
    )

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="Render every row.")
        parser.add_argument(
            "--search",
            action="store_true",
            help="Only rebuild the stored full-text search vectors (PostgreSQL), e.g. after "
            "changing SEARCH_INDEX_MAX_CHARS.",
        )
        parser.add_argument(
            "--check",
            action="store_true",
            help="Write nothing: report which notes' and pages' HTML would change.",
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=None,
            help="Processes rendering notes (default: one per core).",
        )

    def handle(self, *args, **options):
        if options["check"]:
            self.report_changes(force=options["all"])
            return
        if options["search"]:
            count = search_index.vectors_store(Note.objects.all())
            count += search_index.vectors_store(Page.objects.all())
            self.stdout.write(f"{count} search vectors rebuilt.")
            return
        force = options["all"]
        if options["workers"] is not None and options["workers"] < 1:
            raise CommandError("--workers must be at least 1.")
        pages = 0
        # One new content generation for the whole run (bulk writes send no signal; the pages'
        # saves do, each deferred to here).
        with deferred_bumps():
            try:
                with Progress("notes", Note.objects.count(), self.stderr, unit="notes") as bar:
                    notes = notes_rerender(
                        force=force, workers=options["workers"], advance=bar.advance
                    )
            except KeyboardInterrupt:
                raise CommandError(
                    "Interrupted: the notes written so far have their new render, the others "
                    "their old one; run the command again to finish."
                ) from None
            page_context = context_for(None)
            for page in Page.objects.iterator(chunk_size=200):
                current = page.source_hash == source_hash(page.body, page_context)
                if force or not current or page.render_version != ENGINE_VERSION:
                    page_render_store(page=page, context=page_context)
                    pages += 1
        # Renders cut short by time were queued as their batches committed: finish them here.
        completion.wait()
        self.stdout.write(f"{notes} notes and {pages} pages rendered (engine {ENGINE_VERSION}).")

    def report_changes(self, *, force: bool) -> None:
        """Render what `rerender` would render, compare with the stored HTML (and a note's
        search text), save nothing:
        a site owner sees what an engine upgrade changes (content written for the old engine
        that the new one reads differently) before running it."""
        checked = changed = 0
        page_context = context_for(None)
        notes = Note.objects.order_by("slug").iterator(chunk_size=200)
        pages = Page.objects.order_by("slug").iterator(chunk_size=200)
        rows = itertools.chain(
            (("note", note, live_context(note, context_for(note))) for note in notes),
            (("page", page, page_context) for page in pages),
        )
        for kind, row, context in rows:
            stale = row.render_version != ENGINE_VERSION or row.source_hash != source_hash(
                row.body, context
            )
            if not (force or stale):
                continue
            checked += 1
            rendered = render(row.body, context)
            self.report_kind_references(kind, row, rendered)
            parts = [
                (name, stored, new)
                for name, stored, new in (
                    ("html", row.rendered_html, rendered.html),
                    ("card", row.rendered_card_html, rendered.card_html),
                    ("toc", row.rendered_toc, rendered.toc),
                    # Notes' plain text (search, word counts, index.json) changes on its own too.
                    ("search text", getattr(row, "rendered_text", rendered.text), rendered.text),
                )
                if stored != new
            ]
            if not parts:
                continue
            changed += 1
            names = ", ".join(name for name, _, _ in parts)
            version = row.render_version or "none"
            self.stdout.write(
                f"{kind} {row.slug}: {names} would change (engine {version} → {ENGINE_VERSION}), "
                f"{first_difference(parts[0][1], parts[0][2])}"
            )
        self.stdout.write(
            f"{changed} of {checked} rows checked would change (engine {ENGINE_VERSION}); "
            "nothing was written."
        )

    def report_kind_references(self, kind: str, row, rendered) -> None:
        """Name each \\ref that printed its target's kind ("Lemma 2") before engine 8 and
        prints the number alone now, as LaTeX does, with the command that reads as before."""
        for found in kind_references(row.body, rendered.labels, rendered.references):
            self.stdout.write(
                f"{kind} {row.slug}: line {found.line}: \\ref{{{found.key}}} now prints "
                f'"{found.now}" where it printed "{found.was}"; write \\Cref{{{found.key}}} '
                f'to keep "{found.was}"'
            )
