from django.apps import AppConfig


class HugoConfig(AppConfig):
    name = "hugo"
    verbose_name = "Hugo sites"
