from django.apps import AppConfig


class CollaborationConfig(AppConfig):
    """Writing together: a live document per note over WebSockets."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "collaboration"
    verbose_name = "Writing together"

    def ready(self):
        from notes.services import text_sync

        from . import access, reconciliation, sessions

        text_sync.register(reconciliation.LiveTextSync())
        access.connect()
        sessions.connect()
