"""The container's health check: `python -m ops.healthcheck` exits 0 when /healthz says 200.

It runs inside the web container (Dockerfile HEALTHCHECK, docker-compose.yml) and asks gunicorn
over plain HTTP on loopback. It sends a Host header taken from ALLOWED_HOSTS, since Django
answers 400 to a host it does not serve, and production lists only the site's own names.
No Django import: it must stay cheap when run every few seconds.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request


def host_header(allowed_hosts: str) -> str:
    """A Host value that ALLOWED_HOSTS accepts: its first entry, made concrete."""
    for entry in (item.strip() for item in allowed_hosts.split(",")):
        if not entry or entry == "*":
            continue
        return entry.lstrip(".")  # ".example.org" allows example.org itself
    return "localhost"


def port(bind: str) -> str:
    return bind.rsplit(":", 1)[-1] if ":" in bind else "8000"


def healthy(url: str, host: str, timeout: float = 3.0) -> bool:
    request = urllib.request.Request(url, headers={"Host": host})  # noqa: S310 - fixed http URL
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def main() -> int:
    url = f"http://127.0.0.1:{port(os.environ.get('GUNICORN_BIND', '0.0.0.0:8000'))}/healthz"
    return 0 if healthy(url, host_header(os.environ.get("ALLOWED_HOSTS", ""))) else 1


if __name__ == "__main__":
    sys.exit(main())
