"""The WebSocket handshake's origin check, Django's CSRF origin check applied to the socket:
the page's Origin must be this site's own origin (scheme, host and port), or one that
CSRF_TRUSTED_ORIGINS names (exactly, or with its `https://*.example.org` wildcards). Any
other, "null" or none is refused at the handshake: the session cookie would otherwise let
another site's script, or another port or scheme of this host, write as the visitor.

The site's own origin is the request's, as Django's request.scheme and get_host() see it:
the scheme is https when SECURE_PROXY_SSL_HEADER is on and the proxy says so (nginx sets
X-Forwarded-Proto from its own scheme), else the socket's own (daphne behind nginx speaks
plain ws); the host is the Host header (X-Forwarded-Host with USE_X_FORWARDED_HOST), and a
request to a host ALLOWED_HOSTS refuses has no origin of its own."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import is_same_domain, split_domain_port, validate_host

DEFAULT_PORTS = {"http": "80", "https": "443"}


def allowed_hosts() -> list[str]:
    hosts = settings.ALLOWED_HOSTS
    if settings.DEBUG and not hosts:
        return [".localhost", "127.0.0.1", "[::1]"]  # Django's own DEBUG default
    return hosts


def _headers(scope) -> dict[bytes, str]:
    """The handshake's headers by lower-case name (the first of each), as text."""
    headers: dict[bytes, str] = {}
    for name, value in scope.get("headers", []):
        headers.setdefault(bytes(name).lower(), bytes(value).decode("latin1"))
    return headers


def _scheme(scope, headers: dict[bytes, str]) -> str:
    if settings.SECURE_PROXY_SSL_HEADER:
        header, secure = settings.SECURE_PROXY_SSL_HEADER
        name = header.removeprefix("HTTP_").replace("_", "-").lower().encode("latin1")
        value = headers.get(name)
        if value is not None:
            return "https" if value.split(",", 1)[0].strip() == secure else "http"
    return "https" if scope.get("scheme") in ("wss", "https") else "http"


def _normal(scheme: str, netloc: str) -> str:
    """`scheme://netloc` in lower case, without the scheme's default port."""
    netloc = netloc.lower()
    host, _, port = netloc.rpartition(":")
    if host and port == DEFAULT_PORTS.get(scheme):
        netloc = host
    return f"{scheme}://{netloc}"


def site_origin(scope) -> str | None:
    """The origin the socket's own request was made to, or None when its host is not one of
    ALLOWED_HOSTS (then only CSRF_TRUSTED_ORIGINS may admit it)."""
    headers = _headers(scope)
    if settings.USE_X_FORWARDED_HOST and b"x-forwarded-host" in headers:
        host = headers[b"x-forwarded-host"]
    else:
        host = headers.get(b"host", "")
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, allowed_hosts()):
        return None
    return _normal(_scheme(scope, headers), host)


def trusted_origin(origin: str) -> bool:
    """CSRF_TRUSTED_ORIGINS as Django's CSRF check reads it: an entry without "*" is one
    origin exactly; `scheme://*.domain` admits that scheme on the domain and its subdomains,
    on the port the entry names (none: the scheme's own)."""
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    if not parts.scheme or not parts.netloc:
        return False
    wanted = _normal(parts.scheme, parts.netloc)
    for trusted in settings.CSRF_TRUSTED_ORIGINS:
        entry = urlsplit(trusted)
        if "*" not in trusted:
            if _normal(entry.scheme, entry.netloc) == wanted:
                return True
        elif entry.scheme == parts.scheme and is_same_domain(
            wanted.split("://", 1)[1], entry.netloc.lstrip("*").lower()
        ):
            return True
    return False


def origin_allowed(scope) -> bool:
    """The handshake's Origin is the site's own or a trusted one."""
    origin = _headers(scope).get(b"origin", "").strip()
    if not origin or origin == "null":
        return False
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    if not parts.scheme or not parts.netloc or parts.path or parts.query:
        return False
    own = site_origin(scope)
    if own is not None and _normal(parts.scheme, parts.netloc) == own:
        return True
    return trusted_origin(origin)


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
        if not origin_allowed(scope):
            return await refuse_socket(scope, receive, send)
        return await self.application(scope, receive, send)
