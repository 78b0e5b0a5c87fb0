"""docker-compose.yml and deploy/nginx.conf: parsed and checked without a Docker engine."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from tests.conftest import ROOT

COMPOSE = ROOT / "docker-compose.yml"
# ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?error}, ${NAME?error}; $$ is a literal $.
INTERPOLATION = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)((?::?[-?+])[^}]*)?\}")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def test_services_are_web_authoring_live_db_redis_and_nginx_always_together(compose):
    """The six services exist and all start together: nginx, the one way in, needs both pools
    and the socket behind it."""
    services = compose["services"]
    assert set(services) == {"web", "live", "db", "redis", "nginx", "authoring"}
    assert all("profiles" not in service for service in services.values())
    assert services["db"]["image"].startswith("postgres:15")
    assert services["redis"]["image"].startswith("redis:7")
    assert "allkeys-lru" in services["redis"]["command"]
    assert "--maxmemory" in services["redis"]["command"]


def test_every_service_has_a_health_check_and_waits_for_healthy_dependencies(compose):
    """Health checks everywhere; web waits for db and redis, the authoring pool for web (which
    migrated), nginx for both pools, all healthy."""
    services = compose["services"]
    for name, service in services.items():
        assert service["healthcheck"]["test"], name
    assert "pg_isready" in " ".join(services["db"]["healthcheck"]["test"])
    assert services["web"]["healthcheck"]["test"] == ["CMD", "python", "-m", "ops.healthcheck"]
    assert services["web"]["depends_on"] == {
        "db": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
    }
    assert services["authoring"]["depends_on"] == {"web": {"condition": "service_healthy"}}
    assert services["nginx"]["depends_on"] == {
        "web": {"condition": "service_healthy"},
        "authoring": {"condition": "service_healthy"},
        "live": {"condition": "service_healthy"},
    }


def test_the_live_service_runs_daphne_on_the_asgi_application_after_the_migrations(compose):
    """daphne serves scidraft.asgi on 8001 (where nginx sends /live/) from web's image and
    variables; it needs PostgreSQL (updates are stored before they are acknowledged) and Redis
    (the channel layer), and starts once web has migrated: it never migrates itself."""
    web, live = compose["services"]["web"], compose["services"]["live"]
    assert live["command"] == [
        "daphne", "-b", "0.0.0.0", "-p", "8001", "scidraft.asgi:application",  # noqa: S104
    ]  # fmt: skip
    assert live["build"] == web["build"]
    assert live["depends_on"] == {
        "db": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
        "web": {"condition": "service_healthy"},
    }
    own = {"GUNICORN_BIND"}
    assert {k: v for k, v in live["environment"].items() if k not in own} == {
        k: v for k, v in web["environment"].items() if k not in own
    }
    # The health check asks /healthz on the port GUNICORN_BIND names: daphne's, not gunicorn's.
    assert live["environment"]["GUNICORN_BIND"].endswith(":8001")
    assert live["healthcheck"]["test"] == web["healthcheck"]["test"]
    assert "ports" not in live
    assert live["restart"] == "unless-stopped"


def test_the_image_copies_every_app_of_the_project():
    """Each of the project's own apps in INSTALLED_APPS (collaboration, the live socket's, among
    them) is copied into the image: one left out stops every container at start."""
    from django.conf import settings

    dockerfile = (ROOT / "Dockerfile").read_text()
    own = {app.split(".")[0] for app in settings.INSTALLED_APPS}
    own = {name for name in own if (ROOT / name / "__init__.py").is_file()}
    assert {"collaboration", "notes", "scidraft"} <= own
    missing = sorted(name for name in own if f"COPY {name} {name}\n" not in dockerfile)
    assert not missing, f"not copied into the image: {missing}"


def test_the_image_can_run_daphne_and_exposes_its_port():
    """The live service's command exists in the image (a locked dependency) and its port is
    declared."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^EXPOSE 8000 8001$", dockerfile, re.MULTILINE)
    assert re.search(r"^daphne==", (ROOT / "requirements.lock").read_text(), re.MULTILINE)
    assert '"daphne==' in (ROOT / "pyproject.toml").read_text()


def test_the_authoring_pool_runs_web_settings_without_migrating(compose):
    """Same image and variables as web but its own worker count; it starts gunicorn alone, so
    two containers never run the migrations at once."""
    web, authoring = compose["services"]["web"], compose["services"]["authoring"]
    assert authoring["build"] == web["build"]
    assert authoring["volumes"] == web["volumes"]
    assert authoring["healthcheck"]["test"] == web["healthcheck"]["test"]
    same = {name: value for name, value in web["environment"].items() if name != "WEB_CONCURRENCY"}
    assert {k: v for k, v in authoring["environment"].items() if k != "WEB_CONCURRENCY"} == same
    assert authoring["environment"]["WEB_CONCURRENCY"] == "${AUTHORING_CONCURRENCY:-1}"
    assert authoring["command"][0] == "gunicorn"
    assert "migrate" not in " ".join(authoring["command"])


def test_only_nginx_publishes_a_port_and_the_app_trusts_exactly_it(compose):
    """The app trusts one proxy's X-Forwarded-For (nginx's): no port of the app (the pools,
    daphne) is published, so every request passes nginx, which appends the address it sees:
    the entry the app reads. The database and Redis are not published either."""
    services = compose["services"]
    published = {name: service["ports"] for name, service in services.items() if "ports" in service}
    assert published == {"nginx": ["${PROXY_PORT:-80}:80"]}
    assert "expose" not in services["web"] and "network_mode" not in services["web"]
    environment = services["web"]["environment"]
    assert environment["ACCOUNTS_TRUSTED_PROXY_COUNT"] == "${ACCOUNTS_TRUSTED_PROXY_COUNT:-1}"
    location = _block(_nginx_directives(), "location / ")
    assert "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;" in location


def test_the_public_pool_yields_the_cpu_to_the_database_and_the_authors(compose):
    """Readers' renders have a quarter of the default CPU weight (1024), which the authoring
    pool and PostgreSQL keep: under contention an author's save is not starved by readers."""
    services = compose["services"]
    assert services["web"]["cpu_shares"] == 256
    assert "cpu_shares" not in services["authoring"] and "cpu_shares" not in services["db"]


def _nginx_directives() -> str:
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    return "\n".join(line.split("#", 1)[0] for line in conf.splitlines())


def _block(directives: str, opening: str) -> str:
    """The text of the `{ … }` block that starts at `opening`."""
    start = directives.index(opening)
    depth = 0
    for at in range(directives.index("{", start), len(directives)):
        depth += {"{": 1, "}": -1}.get(directives[at], 0)
        if depth == 0:
            return directives[start : at + 1]
    raise AssertionError(f"unclosed block {opening}")


def test_nginx_sends_the_editor_accounts_and_admin_to_the_authoring_pool():
    """Writing paths go to the authoring upstream, uncached, with the public pool as its
    backup; every other page goes to the public pool."""
    directives = _nginx_directives()
    upstream = _block(directives, "upstream scidraft_authoring")
    assert "server authoring:8000;" in upstream
    assert "server web:8000 backup;" in upstream
    location = _block(directives, "location ~ ^/(write|accounts|admin)/")
    assert "proxy_pass http://scidraft_authoring;" in location
    assert "proxy_cache off;" in location
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in location
    assert "proxy_pass http://scidraft_web;" in _block(directives, "location / ")


def test_nginx_never_serves_note_images_from_the_volume_itself():
    """Note images go through the app (who may load a draft's), uncached by nginx; the volume
    is read for them only by the internal location the app's X-Accel-Redirect names."""
    directives = _nginx_directives()
    through_app = _block(directives, "location ^~ /media/notes/ ")
    assert "proxy_pass http://scidraft_web;" in through_app
    assert "proxy_cache off;" in through_app
    assert "alias" not in through_app and "expires" not in through_app
    internal = _block(directives, "location ^~ /internal-media/notes/ ")
    assert "internal;" in internal and "alias /data/media/notes/;" in internal
    assert "expires" not in internal  # the app's Cache-Control stands (private, no-store)
    assert "X-Content-Type-Options" in internal
    aliases = re.findall(r"alias ([^;]+);", directives)
    assert sorted(aliases) == ["/data/media/", "/data/media/notes/"]
    assert not re.search(r"location ~[^{]*media", directives)


def test_nginx_sends_live_to_daphne_as_an_unbuffered_websocket():
    """/live/ goes to the live upstream (daphne, no backup: gunicorn cannot answer a
    WebSocket) over HTTP/1.1 with the Upgrade and Connection headers passed on, the browser's
    Host with its port (the origin check compares it), read timeouts far above daphne's 20 s
    ping, no buffering, no cache; no regex location can take it."""
    directives = _nginx_directives()
    assert _block(directives, "upstream scidraft_live").split("{", 1)[1].split() == [
        "server",
        "live:8001;",
        "}",
    ]
    mapping = _block(directives, "map $http_upgrade $scidraft_connection_upgrade")
    assert re.search(r"default\s+upgrade;", mapping)
    assert re.search(r'""\s+close;', mapping)
    location = _block(directives, "location ^~ /live/")
    for directive in (
        "proxy_pass http://scidraft_live;",
        "proxy_http_version 1.1;",
        "proxy_set_header Upgrade $http_upgrade;",
        "proxy_set_header Connection $scidraft_connection_upgrade;",
        "proxy_set_header Host $http_host;",
        "proxy_set_header X-Forwarded-Proto $scheme;",
        "proxy_buffering off;",
        "proxy_cache off;",
    ):
        assert directive in location, directive
    timeouts = dict(re.findall(r"(proxy_(?:read|send)_timeout) (\d+)s;", location))
    assert set(timeouts) == {"proxy_read_timeout", "proxy_send_timeout"}
    assert all(int(seconds) >= 600 for seconds in timeouts.values()), timeouts


def test_the_routed_writing_prefixes_are_where_the_url_conf_puts_them():
    """The editor (saves, previews, uploads), sign-in and the admin live under the three
    prefixes nginx routes to the authoring pool."""
    from django.urls import reverse

    assert reverse("editor:dashboard") == "/write/"
    assert reverse("editor:autosave", args=[1]).startswith("/write/")
    assert reverse("editor:image_upload", args=[1]).startswith("/write/")
    assert reverse("accounts:login").startswith("/accounts/")
    assert reverse("admin:index") == "/admin/"


def test_volumes_hold_the_database_media_and_proxy_cache(compose):
    """PostgreSQL data and media live on named volumes; nginx reads media read-only."""
    assert set(compose["volumes"]) == {"pgdata", "media", "nginxcache"}
    assert "pgdata:/var/lib/postgresql/data" in compose["services"]["db"]["volumes"]
    assert "media:/data/media" in compose["services"]["web"]["volumes"]
    nginx = compose["services"]["nginx"]["volumes"]
    assert "media:/data/media:ro" in nginx
    assert "./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro" in nginx
    assert (ROOT / "deploy" / "nginx.conf").is_file()


def test_every_interpolated_variable_has_a_default_or_an_error_message():
    """`${VAR}` alone would silently become empty: each has `:-default` or `:?message`."""
    found = INTERPOLATION.findall(COMPOSE.read_text())
    assert found, "no variables found: the pattern is wrong"
    bare = sorted({name for name, modifier in found if not modifier})
    assert not bare, f"variables without a default or an error: {bare}"
    required = {name for name, modifier in found if modifier.lstrip(":").startswith("?")}
    assert required == {"SECRET_KEY"}


def test_web_environment_names_only_documented_variables(compose):
    """Each variable the web container receives, and each compose reads, has a row in the
    settings table (docs/configuration.md) or compose's own (docs/deployment.md)."""
    documented = set()
    for name in ("configuration.md", "deployment.md"):
        text = (ROOT / "docs" / name).read_text()
        cells = re.findall(r"^\|([^|\n]*)\|", text, flags=re.MULTILINE)
        documented |= {v for cell in cells for v in re.findall(r"`([A-Z][A-Z0-9_]*)`", cell)}
    names = set(compose["services"]["web"]["environment"])
    names |= {name for name, _ in INTERPOLATION.findall(COMPOSE.read_text())}
    missing = sorted(names - documented)
    assert not missing, f"not in a table of docs/configuration.md or docs/deployment.md: {missing}"


def test_nginx_honours_the_app_cache_control_and_skips_signed_in_readers():
    """No proxy_cache_valid (the app decides); the session cookie bypasses the cache."""
    directives = _nginx_directives()
    assert "proxy_pass http://scidraft_web;" in directives
    assert "server web:8000;" in directives
    assert "proxy_cache_valid" not in directives
    assert "proxy_cache_bypass $cookie_sessionid $scidraft_query;" in directives
    assert "proxy_no_cache $cookie_sessionid $scidraft_query;" in directives
    assert "proxy_set_header X-Forwarded-Proto $scheme;" in directives
    assert directives.count("{") == directives.count("}")


def test_dockerfile_has_a_health_check_and_ships_the_ops_app():
    """The image copies ops/ and declares the same health check as the compose file."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "COPY ops ops" in dockerfile
    assert 'CMD ["python", "-m", "ops.healthcheck"]' in dockerfile
    assert re.search(r"^HEALTHCHECK ", dockerfile, re.MULTILINE)
    assert "USER scidraft" in dockerfile


def _compose_cli() -> bool:
    if not shutil.which("docker"):
        return False
    version = subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30)
    return version.returncode == 0


@pytest.mark.skipif(not _compose_cli(), reason="no docker compose CLI (parsed with PyYAML above)")
def test_docker_compose_config_accepts_the_file():
    """Where the docker CLI exists, `docker compose config` (no engine needed) validates it."""
    result = subprocess.run(
        ["docker", "compose", "config", "--quiet"],
        cwd=ROOT,
        env={"SECRET_KEY": "x" * 50, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
