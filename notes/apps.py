from django.apps import AppConfig


class NotesConfig(AppConfig):
    name = "notes"
    verbose_name = "Notes"

    def ready(self):
        from . import receivers  # noqa: F401 - connects the signal receivers
