from django.core.management.base import BaseCommand

from notes.models import Note, Page
from notes.rendering import RENDERED_FIELDS, context_for, render_page, source_hash
from notes.services import note_render_store
from scidraft.markup import ENGINE_VERSION


class Command(BaseCommand):
    help = (
        "Render stored notes and pages again. Without --all, only rows whose stored render is "
        "stale (another engine version, changed kinds or style); run after upgrading SciDraft."
    )

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="Render every row.")

    def handle(self, *args, **options):
        force = options["all"]
        notes = pages = 0
        for note in Note.objects.iterator(chunk_size=200):
            stale = note.render_version != ENGINE_VERSION or not note.source_hash
            if note_render_store(note=note, force=force or stale):
                notes += 1
        page_context = context_for(None)
        for page in Page.objects.iterator(chunk_size=200):
            current = page.source_hash == source_hash(page.body, page_context)
            if force or not current or page.render_version != ENGINE_VERSION:
                render_page(page, page_context)
                page.save(update_fields=RENDERED_FIELDS)
                pages += 1
        self.stdout.write(f"{notes} notes and {pages} pages rendered (engine {ENGINE_VERSION}).")
