from django.apps import AppConfig


class BibliographyConfig(AppConfig):
    name = "bibliography"
    verbose_name = "Bibliography"

    def ready(self):
        from django.conf import settings

        from . import formatted, jsbundle

        jsbundle.configure(
            calls_at_once=settings.SCIDRAFT_V8_CITATION_CONTEXTS,
            contexts=settings.SCIDRAFT_V8_CONTEXTS,
        )
        formatted.configure(cache_bytes=settings.SCIDRAFT_CITATION_CACHE_MB * 1024 * 1024)
