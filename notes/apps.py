from django.apps import AppConfig


class NotesConfig(AppConfig):
    name = "notes"
    verbose_name = "Notes"

    def ready(self):
        from scidraft.site import caching

        from . import receivers
        from .models import Note

        def next_scheduled(since):
            # A scheduled note goes live without a write: the page cache must know when (the
            # first date after the generation's last change: scidraft.site.caching).
            notes = Note.objects.scheduled(since)
            return notes.order_by("date").values_list("date", flat=True).first()

        caching.due_sources.append(next_scheduled)

        from django.core.cache import cache

        from scidraft.markup import shared_cache

        # Formulas and entries formatted by one process are reused by the others (Redis in
        # production).
        shared_cache.use_shared_cache(cache)
        receivers.connect()
