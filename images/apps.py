from django.apps import AppConfig


class ImagesConfig(AppConfig):
    name = "images"
    verbose_name = "Images"

    def ready(self) -> None:
        from django.conf import settings

        from . import signals  # noqa: F401 - connects the stored-file clean-up
        from .services import pillow_limit

        pillow_limit(settings.IMAGE_UPLOAD_MAX_PIXELS)
