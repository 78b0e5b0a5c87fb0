from django.apps import AppConfig


class EditorConfig(AppConfig):
    """The web editor at /write/: dashboard, editor, preview, revisions."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "editor"
