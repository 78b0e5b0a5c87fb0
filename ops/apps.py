from django.apps import AppConfig


class OpsConfig(AppConfig):
    """Operations: health and readiness endpoints, JSON logging, backup and restore."""

    name = "ops"
    verbose_name = "Operations"
