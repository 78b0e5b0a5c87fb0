from django.apps import AppConfig


class HugoConfig(AppConfig):
    name = "hugosite"
    verbose_name = "Hugo sites"
