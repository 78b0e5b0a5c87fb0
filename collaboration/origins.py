"""The WebSocket handshake's origin check: a page of this site, as Django's CSRF check sees it.
An Origin whose host is in ALLOWED_HOSTS, or that CSRF_TRUSTED_ORIGINS names (with its
`https://*.example.org` wildcards), may open a socket; any other, or none, is refused at the
handshake. The session cookie would otherwise let any site's script write as the visitor."""

from __future__ import annotations

from urllib.parse import urlparse, urlsplit

from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host


def allowed_hosts() -> list[str]:
    hosts = settings.ALLOWED_HOSTS
    if settings.DEBUG and not hosts:
        return [".localhost", "127.0.0.1", "[::1]"]  # Django's own DEBUG default
    return hosts


def _origin(scope):
    for name, value in scope.get("headers", []):
        if name == b"origin":
            try:
                return urlparse(value.decode("latin1"))
            except (UnicodeDecodeError, ValueError):
                return None
    return None


def trusted_origin(origin: str) -> bool:
    parts = urlsplit(origin)
    if not parts.scheme or not parts.netloc:
        return False
    for trusted in settings.CSRF_TRUSTED_ORIGINS:
        wanted = urlsplit(trusted)
        if wanted.scheme == parts.scheme and is_same_domain(parts.netloc, wanted.netloc):
            return True
    return False


async def refuse_socket(scope, receive, send) -> None:
    """Close a WebSocket handshake unaccepted (the browser sees 403).

    Channels' WebsocketDenier is a consumer, and every consumer reads its own channel on the
    channel layer until the client goes: each refused handshake would hold a Redis read open
    for nothing."""
    message = await receive()
    if message["type"] == "websocket.connect":
        await send({"type": "websocket.close"})


class SiteOriginValidator:
    """ASGI middleware: sockets from the site's own pages reach `application`; any other is
    refused at the handshake."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            raise ValueError("SiteOriginValidator guards WebSocket connections only")
        if not self.valid_origin(_origin(scope)):
            return await refuse_socket(scope, receive, send)
        return await self.application(scope, receive, send)

    def valid_origin(self, parsed_origin) -> bool:
        if parsed_origin is None or not parsed_origin.netloc:
            return False
        host, _port = split_domain_port(parsed_origin.netloc)
        if host and validate_host(host, allowed_hosts()):
            return True
        return trusted_origin(parsed_origin.geturl())
