"""The environment of a gunicorn run with the production settings on loopback, shared by the
serving benchmark and `make reliability` (a helper module: the benchmark runner skips `_` files).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

# Settings the caller decides: never inherited from the shell that started the script.
_OWN = ("DJANGO_", "GUNICORN_", "SCIDRAFT_", "DATABASE_", "REDIS_")


def production_environment(
    database_url: str, redis_url: str, static_root: Path, cache_prefix: str, **extra: str
) -> dict[str, str]:
    """DEBUG off, a fresh secret key, plain HTTP on 127.0.0.1, the given database, Redis and
    collected static files; `extra` adds or overrides variables."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(_OWN)}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "scidraft.settings",
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "SECURE_HSTS_SECONDS": "0",
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "CACHE_KEY_PREFIX": cache_prefix,
            "STATIC_ROOT": str(static_root),
            "LOG_LEVEL": "WARNING",
            **extra,
        }
    )
    return env
