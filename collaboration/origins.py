"""The WebSocket handshake's origin check: a page of this site, as Django's CSRF check sees it.
An Origin whose host is in ALLOWED_HOSTS, or that CSRF_TRUSTED_ORIGINS names (with its
`https://*.example.org` wildcards), may open a socket; any other, or none, is refused at the
handshake. The session cookie would otherwise let any site's script write as the visitor."""

from __future__ import annotations

from urllib.parse import urlsplit

from channels.security.websocket import OriginValidator
from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host


def allowed_hosts() -> list[str]:
    hosts = settings.ALLOWED_HOSTS
    if settings.DEBUG and not hosts:
        return [".localhost", "127.0.0.1", "[::1]"]  # Django's own DEBUG default
    return hosts


def trusted_origin(origin: str) -> bool:
    parts = urlsplit(origin)
    if not parts.scheme or not parts.netloc:
        return False
    for trusted in settings.CSRF_TRUSTED_ORIGINS:
        wanted = urlsplit(trusted)
        if wanted.scheme == parts.scheme and is_same_domain(parts.netloc, wanted.netloc):
            return True
    return False


class SiteOriginValidator(OriginValidator):
    def __init__(self, application):
        super().__init__(application, allowed_origins=[])

    def valid_origin(self, parsed_origin) -> bool:
        if parsed_origin is None or not parsed_origin.netloc:
            return False
        host, _port = split_domain_port(parsed_origin.netloc)
        if host and validate_host(host, allowed_hosts()):
            return True
        return trusted_origin(parsed_origin.geturl())
