import datetime as dt

from django.apps import AppConfig


class NotesConfig(AppConfig):
    name = "notes"
    verbose_name = "Notes"

    def ready(self):
        from scidraft.site import generation

        from . import receivers
        from .models import Note

        def next_scheduled(since):
            # A scheduled note goes live without a write: the page cache must know when (the
            # first date after the generation's last change: scidraft.site.generation).
            notes = Note.objects.scheduled(since)
            return notes.order_by("date").values_list("date", flat=True).first()

        generation.due_sources.append(next_scheduled)

        from scidraft.site import dependencies

        def dated_next_to(value: str) -> list[str]:
            # The notes whose « Prev / Next » a note entering or leaving the list at this date
            # changes: those of the nearest dates before and after it (scidraft.site.receivers).
            moment = dt.datetime.fromisoformat(value)
            published = Note.objects.published().order_by()
            before = published.filter(date__lt=moment).order_by("-date")
            after = published.filter(date__gt=moment).order_by("date")
            dates = [rows.values_list("date", flat=True).first() for rows in (before, after)]
            return [dependencies.nav(date) for date in dates if date is not None]

        dependencies.expanders["near:"] = dated_next_to

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
