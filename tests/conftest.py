"""Shared fixtures. Tests run on SQLite by default and on PostgreSQL when DATABASE_URL says so."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db.models.signals import post_migrate
from django.dispatch import receiver

ROOT = Path(__file__).resolve().parent.parent
# ../shared beside the checkout, or beside the folder that holds it (a git worktree kept in a
# subfolder of a common one).
SHARED = next(
    (path for path in (ROOT.parent / "shared", ROOT.parent.parent / "shared") if path.is_dir()),
    ROOT.parent / "shared",
)
EXAMPLE_SITE = SHARED / "reference" / "scidraft-exampleSite"

pytest_plugins = ["tests.people"]


BROWSER_TESTS = ROOT / "tests" / "browser"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    # Every test under tests/browser drives Chromium, whether or not its module says so, and
    # `-m "not browser"` (make test-fast) must leave it out; before -m's own selection runs.
    for item in items:
        if BROWSER_TESTS in item.path.parents:
            item.add_marker(pytest.mark.browser)


@receiver(post_migrate)
def _rows_of_data_migrations(sender, **kwargs):
    """A transactional test ends with Django's flush, which deletes every row, the environments
    and the Editor and Author groups that data migrations made included, and then sends
    post_migrate, app by app: after the last app's (its permissions made), they are put back
    as `migrate` left them. pytest-django runs transactional tests after the others, but
    pytest-xdist gives each worker whole files in an order of its own, so a test may follow a
    flush. After `migrate` itself there is nothing to do."""
    from django.apps import apps

    from notes.models import Environment
    from tests.people import role_group

    if sender is not [config for config in apps.get_app_configs() if config.models_module][-1]:
        return
    if not Environment.objects.exists():
        roles = importlib.import_module("notes.migrations.0002_environments_and_roles")
        roles.create_environments(apps, None)
    role_group("Editor")
    role_group("Author")


@pytest.fixture(autouse=True)
def _fast_hasher(settings):
    # Thousands of users and logins: PBKDF2's deliberate slowness is not what the tests measure.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _plain_static_storage(settings):
    # The manifest storage needs `collectstatic` first; tests exercise views, not hashing.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture(autouse=True)
def _channel_layer_in_memory(settings, request):
    # Writing together's rules are the same on any channel layer: memory, unless the test is
    # about Redis (marked redis_layer) or talks to the in-process daphne, whose consumers hear
    # the test's group messages only through Redis. channels-redis keeps one layer's reads for
    # one event loop at a time; a test's loop ending while it read beside daphne's could hang.
    if request.node.get_closest_marker("redis_layer") or "live_asgi_server" in request.fixturenames:
        return
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


@pytest.fixture(autouse=True)
def _pages_follow_the_generation(settings):
    # Most tests write inside a transaction that never commits, so no commit hook gives the
    # dependency tags new versions: with REDIS_URL set, their pages would stay fresh. Pages
    # follow the generation unless a (transactional) test sets "dependencies" itself
    # (tests/site/test_dependencies.py, test_caching_stale.py).
    settings.SCIDRAFT_PAGE_INVALIDATION = "generation"


@pytest.fixture(autouse=True)
def _empty_cache():
    # Each test's database starts from the same generation number: a page cached by an earlier
    # test under that number must not be served to this one.
    from django.core.cache import cache

    from notes import completion
    from scidraft.site import dependencies, snapshot
    from scidraft.site.caching import local_pages, local_queries, refreshes
    from scidraft.site.generation import lease

    cache.clear()
    local_pages.clear()
    local_queries.clear()
    lease.drop()
    dependencies.lease.drop()
    lease.last = None
    snapshot.forget_all()
    yield
    # Background renders must not outlive their test's database, nor run beside the next test.
    refreshes.stop()
    if not completion.wait(timeout=60):
        raise AssertionError("a render completion still ran a minute after its test")


@pytest.fixture
def example_site() -> Path:
    if not EXAMPLE_SITE.is_dir():
        pytest.skip("../shared/reference/scidraft-exampleSite is not beside the checkout")
    return EXAMPLE_SITE


@pytest.fixture
def demo_loaded(db):
    """The demo content, loaded through the seed_demo command."""
    call_command("seed_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115


def pytest_report_header(config):
    from django.conf import settings

    database = settings.DATABASES["default"]
    cache = settings.CACHES["default"]
    return [
        f"database: {database['ENGINE']} ({database['NAME']})",
        f"cache: {cache['BACKEND']}",
        f"shared reference site: {'present' if EXAMPLE_SITE.is_dir() else 'absent (skipped)'}",
    ]
