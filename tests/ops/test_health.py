"""/healthz and /readyz: JSON, 200 or 503, never cached, reachable over plain HTTP."""

from __future__ import annotations

import json

import pytest

from ops.healthcheck import healthy, host_header, port
from tests.ops.helpers import shell

CALL = (
    "from django.test import Client; r = Client().get('{url}'); "
    "print(r.status_code, r.content.decode())"
)


def _called(url: str, env: dict[str, str]) -> tuple[int, dict]:
    result = shell(CALL.format(url=url), env=env)
    assert result.returncode == 0, result.stderr
    status, body = result.stdout.strip().splitlines()[-1].split(" ", 1)
    return int(status), json.loads(body)


@pytest.mark.django_db
def test_healthz_reports_ok_as_json(client):
    """Database and cache reachable: 200 with every check "ok" and the version."""
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == "ok"
    assert body["cache"] == "ok"
    assert body["version"]


@pytest.mark.django_db
def test_healthz_is_never_cached(client):
    """no-store for every cache, no page-cache headers, and no cookie set."""
    first = client.get("/healthz")
    second = client.get("/healthz")
    for response in (first, second):
        assert "no-store" in response["Cache-Control"]
        assert "public" not in response["Cache-Control"]
        assert not response.has_header("X-Cache")
        assert not response.has_header("ETag")
        assert not response.cookies


@pytest.mark.django_db
def test_probes_are_not_redirected_to_https(client, settings):
    """With SECURE_SSL_REDIRECT on, /healthz and /readyz answer over HTTP; pages redirect."""
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 200
    assert client.get("/tags/").status_code == 301


def test_healthz_reports_a_database_outage_as_503():
    """DATABASE_URL at a closed port: 503 with the database check in error."""
    status, body = _called(
        "/healthz", {"DEBUG": "1", "DATABASE_URL": "postgres://postgres@127.0.0.1:1/x"}
    )
    assert status == 503
    assert body["status"] == "error"
    assert body["database"].startswith("error")
    assert body["cache"] == "ok"


@pytest.mark.django_db
def test_healthz_reports_a_cache_outage_as_degraded_but_alive(client, settings):
    """REDIS_URL at a closed port: the site serves without its cache, so liveness stays 200
    and the answer says "degraded" with the cache check's reason."""
    settings.CACHES = {
        "default": {
            "BACKEND": "scidraft.resilient_cache.ResilientRedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        }
    }
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    assert body["cache"].startswith("degraded: ")
    assert body["database"] == "ok"


@pytest.mark.django_db
def test_readyz_is_ready_on_the_migrated_test_database(client):
    """Migrations applied (and DEBUG on: static files come from the finders): 200."""
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["migrations"] == "ok"
    assert "no-store" in response["Cache-Control"]


def test_readyz_reports_unapplied_migrations_as_503(tmp_path):
    """A fresh SQLite file that was never migrated: 503 naming the pending migrations."""
    status, body = _called(
        "/readyz", {"DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'fresh.sqlite3'}"}
    )
    assert status == 503
    assert body["status"] == "error"
    assert body["migrations"].startswith("error: ")
    assert "unapplied" in body["migrations"]
    assert "contenttypes.0001_initial" in body["migrations"]


@pytest.mark.django_db
def test_readyz_requires_the_static_manifest_when_debug_is_off(client, settings, tmp_path):
    """Without DEBUG, a missing staticfiles.json (no collectstatic) is not ready; present, it is."""
    settings.DEBUG = False
    settings.STATIC_ROOT = tmp_path
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    response = client.get("/readyz")
    assert response.status_code == 503
    assert "staticfiles.json missing" in response.json()["static"]
    (tmp_path / "staticfiles.json").write_text('{"paths": {}, "version": "1.1"}')
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["static"] == "ok"


def test_container_health_check_sends_a_host_that_allowed_hosts_accepts():
    """The Host header comes from ALLOWED_HOSTS, wildcards made concrete; the port from bind."""
    assert host_header("notes.example.org,www.example.org") == "notes.example.org"
    assert host_header(".example.org") == "example.org"
    assert host_header("*") == "localhost"
    assert host_header(" , *, lab.example.org") == "lab.example.org"
    assert host_header("") == "localhost"
    assert port("0.0.0.0:8000") == "8000"
    assert port("[::]:9000") == "9000"


@pytest.mark.django_db(transaction=True)
def test_container_health_check_passes_against_a_running_server(live_server, settings):
    """ops.healthcheck gets 200 from a real server; probes answer whatever the Host header."""
    settings.ALLOWED_HOSTS = ["notes.example.org"]
    url = f"{live_server.url}/healthz"
    assert healthy(url, host_header("notes.example.org"))
    assert healthy(url, "10.0.0.7")  # a load balancer asking by address
    assert not healthy("http://127.0.0.1:1/healthz", "notes.example.org", timeout=1)
