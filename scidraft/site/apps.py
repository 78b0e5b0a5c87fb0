from django.apps import AppConfig


class SiteConfig(AppConfig):
    name = "scidraft.site"
    label = "site"
    verbose_name = "Site"

    def ready(self):
        from . import receivers

        receivers.connect()
