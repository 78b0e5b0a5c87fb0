from django.apps import AppConfig


class BibliographyConfig(AppConfig):
    name = "bibliography"
    verbose_name = "Bibliography"
