from django.apps import AppConfig


class ImagesConfig(AppConfig):
    name = "images"
    verbose_name = "Images"

    def ready(self) -> None:
        from . import signals  # noqa: F401 - connects the stored-file clean-up
