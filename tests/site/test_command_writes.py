"""A management command's write is served by a running server: at once, or within the staleness
bound when pages follow their dependencies.

The server is a real gunicorn; each write is a `manage.py` command in a process of its own
(seed_demo, import_hugo, import_bib, rerender), run while the server holds the old pages in its
cache. On the embedded default (SQLite, the local-memory cache, no Redis) the server kept the
content generation in its own memory for 300 s, so it served the old pages for up to five
minutes; now the generation is read from the database there. The same sequence runs against
PostgreSQL and Redis when the suite has them (as CI does).
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

import pytest
from django.conf import settings

from reliability.servers import terminated

from .test_two_processes import _cached, _get, _start, _wait, own_site, served_fresh
from .test_two_processes import _manage as manage

NOTE = "method-citations-reference-heading"
TITLE = 'title = "Why Two Machines Disagree in the Last Digit"'
ENTRY_TITLE = "What Every Computer Scientist Should Know About Floating-Point Arithmetic"
REDIS_DB = 10

_EDIT_BODY = f"""
from notes.models import Note
# A queryset update sends no signal and bumps nothing: the row is stale until rerender.
Note.objects.filter(slug={NOTE!r}).update(body=Note.objects.get(slug={NOTE!r}).body + {{text!r}})
"""


def _manage(env: dict, *args: str) -> None:
    manage(env, *args, timeout=120)


def _site_with_title(tmp_path: Path, name: str, title: str) -> Path:
    """A copy of the demo site whose note NOTE has another title."""
    site = tmp_path / name
    shutil.copytree(settings.SCIDRAFT_DEMO_DIR, site)
    note = site / "content" / "notes" / f"{NOTE}.md"
    text = note.read_text(encoding="utf-8")
    assert TITLE in text
    note.write_text(text.replace(TITLE, f'title = "{title}"'), encoding="utf-8")
    return site


def _bib_with_title(tmp_path: Path, title: str) -> Path:
    source = settings.SCIDRAFT_DEMO_DIR / "assets" / "bib" / "computing.bib"
    text = source.read_text(encoding="utf-8")
    assert ENTRY_TITLE in text
    changed = tmp_path / "computing.bib"
    changed.write_text(text.replace(ENTRY_TITLE, title), encoding="utf-8")
    return changed


def _writes_are_served_at_once(env: dict, tmp_path: Path, within: float = 0) -> None:
    _manage(env, "migrate", "--noinput")
    _manage(env, "seed_demo")
    log = tmp_path / "gunicorn.log"
    server, base = _start(env, log)
    try:
        _wait(server, base, log)
        page = f"/notes/{NOTE}/"
        token = secrets.token_hex(4)
        steps = [
            ("seed_demo", f"Seeded title {token}"),
            ("import_hugo", f"Imported title {token}"),
            ("import_bib", f"Imported entry {token}"),
            ("rerender", f"Rerendered text {token}"),
        ]
        for command, text in steps:
            _cached(base, page)  # the server holds the current page in its cache
            if command == "seed_demo":
                _manage(env, "seed_demo", "--dir", str(_site_with_title(tmp_path, "seed", text)))
            elif command == "import_hugo":
                _manage(env, "import_hugo", str(_site_with_title(tmp_path, "hugo", text)))
            elif command == "import_bib":
                bib = _bib_with_title(tmp_path, text)
                _manage(env, "import_bib", str(bib), "--name", "bib/computing.bib")
            else:
                _manage(env, "shell", "-c", _EDIT_BODY.format(text=f"\n\n{text}.\n"))
                assert text not in _get(base, page)[2]  # no bump yet: the cached page stands
                _manage(env, "rerender")
            cache, html = served_fresh(base, page, [text], within)
            assert text in html, f"{command}: the server still served the old page ({cache})"
            _cached(base, page, text)  # and it is cached again
    finally:
        terminated(server)


@pytest.mark.slow
def test_command_writes_are_served_at_once_on_the_embedded_default(tmp_path):
    """SQLite and the local-memory cache: every command's write is on the next page read."""
    env = {
        key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "DATABASE_URL")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="scidraft.settings",
        DEBUG="1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'site.sqlite3'}",
        MEDIA_ROOT=str(tmp_path / "media"),
        LOG_LEVEL="WARNING",
    )
    _writes_are_served_at_once(env, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(("invalidation", "within"), [("generation", 0), ("dependencies", 10)])
def test_command_writes_are_served_with_postgresql_and_redis(tmp_path, invalidation, within):
    """The production shape: every command's write is on the next page read when pages follow
    the generation, and within SCIDRAFT_PAGE_STALE_MAX_SECONDS when they follow their
    dependencies (the stale page is served while it is rendered again)."""
    database = settings.DATABASES["default"]
    if database["ENGINE"] != "django.db.backends.postgresql" or not os.environ.get("REDIS_URL"):
        pytest.skip("needs the test database on PostgreSQL and REDIS_URL")
    media = str(tmp_path / "media")
    extra = {"MEDIA_ROOT": media, "SCIDRAFT_PAGE_INVALIDATION": invalidation}
    with own_site(database, os.environ["REDIS_URL"], "commands", REDIS_DB, **extra) as env:
        _writes_are_served_at_once(env, tmp_path, within)
