"""Health (`/healthz`: can this process reach its database and cache?) and readiness
(`/readyz`: is the schema migrated and are the static files collected?).

A cache outage is reported as "degraded" with a 200: the site keeps serving without its cache
(scidraft.resilient_cache), so restarting the process because Redis is away would only cost
the pages it is serving.

Both answer JSON with 200 or 503, need no login, and are never cached: they are plain views,
outside the page cache, marked `Cache-Control: no-store`. Errors name the exception class
only; the details go to the log, not to anonymous callers.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from importlib import metadata

from django.conf import settings
from django.contrib.staticfiles.storage import ManifestFilesMixin, staticfiles_storage
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

logger = logging.getLogger(__name__)


def version() -> str:
    try:
        return metadata.version("scidraft")
    except metadata.PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown"


def _probe(name: str, check: Callable[[], str | None]) -> str:
    try:
        return check() or "ok"
    except Exception as exc:  # any failure is the answer, not a crash
        logger.warning("%s check failed: %s", name, exc, exc_info=True)
        return f"error: {type(exc).__name__}"


def check_database() -> None:
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT 1")
        if cursor.fetchone()[0] != 1:
            raise RuntimeError("SELECT 1 returned something else")


def check_cache() -> None:
    key = f"ops:healthz:{uuid.uuid4().hex}"
    token = uuid.uuid4().hex
    cache.set(key, token, 30)
    try:
        if cache.get(key) != token:
            raise RuntimeError("the value read back differs from the value written")
    finally:
        cache.delete(key)


def check_migrations() -> str | None:
    connection = connections[DEFAULT_DB_ALIAS]
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        names = [f"{migration.app_label}.{migration.name}" for migration, _ in plan]
        shown = ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
        return f"error: {len(names)} unapplied ({shown}); run manage.py migrate"
    return None


def check_static() -> str | None:
    if settings.DEBUG:
        return "not checked (DEBUG is on)"
    storage = staticfiles_storage  # a lazy object: isinstance sees the configured class
    if isinstance(storage, ManifestFilesMixin) and not storage.manifest_storage.exists(
        storage.manifest_name
    ):
        return f"error: {storage.manifest_name} missing; run manage.py collectstatic"
    return None


def _answer(checks: dict[str, str]) -> JsonResponse:
    healthy = not any(value.startswith("error") for value in checks.values())
    degraded = any(value.startswith("degraded") for value in checks.values())
    status = "error" if not healthy else "degraded" if degraded else "ok"
    body = {"status": status, **checks, "version": version()}
    return JsonResponse(body, status=200 if healthy else 503)


def _degraded(check: str) -> str:
    return "degraded" + check.removeprefix("error") if check.startswith("error") else check


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: the database answers `SELECT 1`; the cache round-trips a value, or the answer
    says the site is degraded (still 200)."""
    return _answer(
        {
            "database": _probe("database", check_database),
            "cache": _degraded(_probe("cache", check_cache)),
        }
    )


@never_cache
@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: no unapplied migrations; the static manifest exists when DEBUG is off."""
    return _answer(
        {
            "migrations": _probe("migrations", check_migrations),
            "static": _probe("static", check_static),
        }
    )
