"""The settings module: environment-driven, failing fast in production."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys

from tests.conftest import ROOT

PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": secrets.token_urlsafe(60),
    "ALLOWED_HOSTS": "notes.example.org",
}


def run_manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "REDIS_URL", "DATABASE_URL"}
    }
    base["DATABASE_URL"] = "sqlite:///:memory:"
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def settings_value(expression: str, env: dict[str, str]) -> str:
    result = run_manage(
        "shell",
        "--no-imports",
        "-c",
        f"from django.conf import settings; print({expression})",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_production_without_secret_key_refuses_to_start():
    """DEBUG off and no SECRET_KEY: the process stops with a message naming the variable."""
    result = run_manage("check", env={"DEBUG": "0", "ALLOWED_HOSTS": "notes.example.org"})
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_production_without_allowed_hosts_refuses_to_start():
    """DEBUG off and no ALLOWED_HOSTS: refused, rather than answering 400 to every request."""
    result = run_manage("check", env={"DEBUG": "0", "SECRET_KEY": PRODUCTION["SECRET_KEY"]})
    assert result.returncode != 0
    assert "ALLOWED_HOSTS is empty" in result.stderr


def test_unreadable_boolean_is_an_error_not_a_guess():
    """DEBUG=maybe is refused instead of being read as true or false."""
    result = run_manage("check", env={"DEBUG": "maybe"})
    assert result.returncode != 0
    assert "DEBUG must be a boolean" in result.stderr


def test_check_deploy_passes_with_production_variables():
    """`check --deploy` reports nothing at warning level with production variables."""
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr


def test_development_defaults_use_sqlite_and_local_memory_cache():
    """Without DATABASE_URL and REDIS_URL the site runs embedded."""
    env = {"DEBUG": "1"}
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "--no-imports",
            "-c",
            "from django.conf import settings as s; "
            "print(s.DATABASES['default']['ENGINE'], s.CACHES['default']['BACKEND'])",
        ],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}} | env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    engine, cache = result.stdout.split()
    assert engine == "django.db.backends.sqlite3"
    assert cache == "django.core.cache.backends.locmem.LocMemCache"


def test_database_url_and_redis_url_select_postgresql_and_redis():
    """DATABASE_URL=postgres://… and REDIS_URL switch the backends."""
    env = {"DEBUG": "1", "REDIS_URL": "redis://127.0.0.1:6379/3"}
    expression = (
        "settings.DATABASES['default']['ENGINE'], settings.CACHES['default']['BACKEND'], "
        "settings.CACHES['default']['LOCATION']"
    )
    result = run_manage(
        "shell",
        "--no-imports",
        "-c",
        f"from django.conf import settings; print(*({expression}))",
        env={**env, "DATABASE_URL": "postgres://scidraft@127.0.0.1:5432/scidraft"},
    )
    assert result.returncode == 0, result.stderr
    engine, cache, location = result.stdout.split()
    assert engine == "django.db.backends.postgresql"
    # A Redis backend degrading to misses when Redis is down (scidraft.resilient_cache).
    assert cache == "scidraft.resilient_cache.ResilientRedisCache"
    assert location == "redis://127.0.0.1:6379/3"


def test_production_is_secure_by_default():
    """With DEBUG off, HTTPS redirect, HSTS and secure cookies are on without extra variables."""
    values = settings_value(
        "settings.SECURE_SSL_REDIRECT, settings.SECURE_HSTS_SECONDS, "
        "settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE, "
        "settings.STORAGES['staticfiles']['BACKEND']",
        PRODUCTION,
    )
    assert values == (
        "True 31536000 True True whitenoise.storage.CompressedManifestStaticFilesStorage"
    )


def _configuration_table_names() -> set[str]:
    """The variables named in the first column of docs/configuration.md's tables."""
    text = (ROOT / "docs" / "configuration.md").read_text()
    cells = re.findall(r"^\|([^|\n]*)\|", text, flags=re.MULTILINE)
    return {name for cell in cells for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", cell)}


def test_every_environment_variable_is_documented_in_the_configuration_table():
    """Each variable settings.py reads has a row in docs/configuration.md's settings table."""
    source = (ROOT / "scidraft" / "settings.py").read_text()
    names = set(
        re.findall(r'(?:os\.environ\.get|env_bool|env_int|env_list)\(\s*"([A-Z_]+)"', source)
    )
    assert {
        "DATABASE_URL",
        "REDIS_URL",
        "SECRET_KEY",
        "DEBUG",
        "ALLOWED_HOSTS",
        "CSRF_TRUSTED_ORIGINS",
    } <= names
    documented = _configuration_table_names()
    missing = sorted(names - documented)
    assert not missing, f"not in docs/configuration.md's table: {missing}"


def test_sqlite_writers_wait_for_each_other(tmp_path):
    """On a SQLite file, image uploads and a live editor's stored updates of one note run at
    once and every write of both succeeds (none meets "database is locked")."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env |= {"DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'site.sqlite3'}"}
    result = subprocess.run(
        [sys.executable, "-m", "tests.scidraft.sqlite_writers", str(tmp_path / "media")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["errors"] == []
    assert report["uploads"] == report["updates"] == 40
    assert report["body"] == "".join(f"word {index} " for index in range(40))


def test_media_accel_redirect_must_be_a_location_path():
    """MEDIA_ACCEL_REDIRECT names nginx's internal location: a path with both slashes, else
    the process stops with a message (a wrong one would send every note image nowhere)."""
    result = run_manage("check", env={"DEBUG": "1", "MEDIA_ACCEL_REDIRECT": "internal-media"})
    assert result.returncode != 0
    assert "MEDIA_ACCEL_REDIRECT must be a path" in result.stderr
    env = {"DEBUG": "1", "MEDIA_ACCEL_REDIRECT": "/internal-media/"}
    assert settings_value("settings.MEDIA_ACCEL_REDIRECT", env) == "/internal-media/"
