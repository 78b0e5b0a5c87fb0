"""Each request reads the site's settings row at most once (SiteSettings.objects.current()),
however many of the code paths it runs ask for it."""

from __future__ import annotations

from .models import settings_read_once


class SettingsReadOnceMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with settings_read_once():
            return self.get_response(request)
