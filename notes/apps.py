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

        from django.conf import settings
        from django.core.cache import cache

        from scidraft.markup import jsengine, shared_cache, v8pool

        # Formulas and entries formatted by one process are reused by the others (Redis in
        # production).
        shared_cache.use_shared_cache(cache)
        v8pool.configure(
            heap_bytes=settings.SCIDRAFT_V8_HEAP_MB * 1024 * 1024,
            idle_seconds=settings.SCIDRAFT_V8_IDLE_SECONDS,
            idle_contexts=settings.SCIDRAFT_V8_CONTEXTS,
        )
        jsengine.configure(cache_bytes=settings.SCIDRAFT_KATEX_CACHE_MB * 1024 * 1024)
        receivers.connect()
