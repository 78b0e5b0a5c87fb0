"""Running manage.py in a child process with its own environment (database, cache, media)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid

from tests.conftest import ROOT

# Variables a child must not inherit from the test run: each test says what it wants.
_OWN = {
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "DATABASE_URL",
    "REDIS_URL",
    "MEDIA_ROOT",
    "LOG_FORMAT",
    "SECURE_SSL_REDIRECT",
    "SECURE_PROXY_SSL_HEADER",
}


def manage(*args: str, env: dict[str, str], timeout: int = 300) -> subprocess.CompletedProcess:
    base = {key: value for key, value in os.environ.items() if key not in _OWN}
    base.setdefault("PYTHONUNBUFFERED", "1")
    if not any(key.startswith("AWS_") for key in env):
        base = {key: value for key, value in base.items() if not key.startswith("AWS_")}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def shell(code: str, *, env: dict[str, str]) -> subprocess.CompletedProcess:
    return manage("shell", "--no-imports", "-c", code, env=env)


def postgres_available() -> bool:
    if not (shutil.which("pg_isready") and shutil.which("createdb")):
        return False
    result = subprocess.run(
        ["pg_isready", "-q", "-h", "127.0.0.1", "-p", "5432"], capture_output=True, timeout=10
    )
    return result.returncode == 0


def createdb() -> str:
    name = f"scidraft_ops_{uuid.uuid4().hex[:12]}"
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", name], check=True, timeout=60)
    return name


def dropdb(name: str) -> None:
    subprocess.run(
        ["dropdb", "--if-exists", "-h", "127.0.0.1", "-U", "postgres", name],
        capture_output=True,
        timeout=60,
    )


def postgres_url(name: str) -> str:
    return f"postgres://postgres@127.0.0.1:5432/{name}"
