"""SciDraft settings: one module, driven by environment variables.

Longer than other modules, and one module on purpose: Django reads one settings module, and
reading every environment variable in this one place is what lets the tests check the
configuration table against it, with no second place for a setting to hide in.

Every variable is documented in docs/configuration.md; tests/scidraft/test_settings.py checks
that its table names each one. The embedded default (no variables set, DEBUG=1) runs on a SQLite
file and the local-memory cache. With DEBUG off the module refuses to start without a real
SECRET_KEY, so a production deployment cannot silently run with a development key.

Reference: https://docs.djangoproject.com/en/5.2/ref/settings/
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no), got {raw!r}.")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}.") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


# --- Core -------------------------------------------------------------------------------------

# https://docs.djangoproject.com/en/5.2/ref/settings/#debug
DEBUG = env_bool("DEBUG", False)
# With DEBUG on, unknown pages still show the site's own 404 page (what readers get), unless
# this asks for Django's technical 404 (the URL patterns tried) while debugging routes.
DEBUG_TECHNICAL_404 = env_bool("DEBUG_TECHNICAL_404", False)

# A development key is only acceptable while DEBUG is on; production must bring its own.
# https://docs.djangoproject.com/en/5.2/ref/settings/#secret-key
_DEV_SECRET_KEY = "django-insecure-scidraft-development-key-never-use-in-production-0123456789"  # noqa: S105 - only with DEBUG on
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set the SECRET_KEY environment variable to a long random "
            'string (e.g. `python -c "import secrets; print(secrets.token_urlsafe(50))"`), '
            "or set DEBUG=1 for local development."
        )
    SECRET_KEY = _DEV_SECRET_KEY

# https://docs.djangoproject.com/en/5.2/ref/settings/#allowed-hosts
ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"] if DEBUG else []
)
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured(
        "ALLOWED_HOSTS is empty. Set ALLOWED_HOSTS to the site's host names, comma-separated "
        "(e.g. ALLOWED_HOSTS=notes.example.org)."
    )

# https://docs.djangoproject.com/en/5.2/ref/settings/#csrf-trusted-origins
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    # Before staticfiles so that runserver serves static files the way production does. daphne's
    # runserver (first, below) shadows it: `make run` passes --nostatic for the same effect.
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "csp",
    "scidraft.site",
    "notes",
    "bibliography",
    "editor",
    "hugosite",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Cached public pages are answered here, before sessions and views (scidraft.site.caching).
    "scidraft.site.caching.PageCacheMiddleware",
    "scidraft.site.settings_scope.SettingsReadOnceMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "scidraft.site.csp.SiteCSPMiddleware",  # django-csp's, plus the authoring pages' rule
    "scidraft.site.not_found.SiteNotFoundMiddleware",  # the site's 404 page under DEBUG too
]

ROOT_URLCONF = "scidraft.urls"
WSGI_APPLICATION = "scidraft.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "scidraft.site.context_processors.site",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------------------

# https://github.com/jazzband/dj-database-url#url-schema
DATABASE_URL = os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'scidraft.sqlite3'}")
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL,
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several gunicorn threads and the live socket write through one SQLite file: wait for
    # the lock instead of failing at once, and let readers proceed while a writer commits
    # (WAL). Transactions take the write lock when they begin (IMMEDIATE): one that read first
    # and wrote later could not wait for it, SQLite refusing at once ("database is locked")
    # when another writer had committed since its read.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
        }
    )
    # Persistent connections do not help SQLite and keep files open across tests.
    DATABASES["default"]["CONN_MAX_AGE"] = 0

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache ------------------------------------------------------------------------------------

# https://docs.djangoproject.com/en/5.2/topics/cache/#redis
REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {
            # Redis whose outages are misses and no-ops (short timeouts, logged): the cache
            # only holds copies, so Redis down must cost speed, not pages.
            "BACKEND": "scidraft.resilient_cache.ResilientRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": os.environ.get("CACHE_KEY_PREFIX", "scidraft"),
            "TIMEOUT": env_int("CACHE_TIMEOUT", 60 * 60 * 24),
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "scidraft",
            "TIMEOUT": env_int("CACHE_TIMEOUT", 60 * 60 * 24),
            "OPTIONS": {"MAX_ENTRIES": 20_000},
        }
    }

# --- Auth -------------------------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Internationalisation ---------------------------------------------------------------------

LANGUAGE_CODE = "en-us"
# Django 6 behaviour now: a URL typed without a scheme means https.
FORMS_URLFIELD_ASSUME_HTTPS = True
# Notes carry their own UTC offset (as Hugo front matter does); TIME_ZONE is the default for
# notes written without one.
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- Static and media files -------------------------------------------------------------------

STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
# static/vendor/ is filled from node_modules by `make vendor`; nothing is fetched from a CDN.
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_URL = "/media/"
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "media"))

# https://whitenoise.readthedocs.io/en/stable/django.html#add-compression-and-caching-support
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
if DEBUG:
    # runserver serves files straight from the finders; no collectstatic manifest needed.
    STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}

# Uploads larger than this are refused by Django before any view sees them (the 400 page says
# why). It must hold a note body at NOTE_BODY_MAX_BYTES, percent-encoded: up to three bytes a
# byte, plus the other fields.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int(
    "DATA_UPLOAD_MAX_MEMORY_SIZE",
    max(12 * 1024 * 1024, 3 * env_int("NOTE_BODY_MAX_BYTES", 2 * 1024 * 1024) + 1024 * 1024),
)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440

# --- Security ---------------------------------------------------------------------------------
# Secure by default once DEBUG is off; each switch can be relaxed by its variable (for example
# SECURE_SSL_REDIRECT=0 on a loopback benchmark). https://docs.djangoproject.com/en/5.2/howto/deployment/checklist/

SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    # Opt-in: only behind a proxy that strips and sets X-Forwarded-Proto itself.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# Joining the browsers' HSTS preload list is hard to undo and binds every subdomain, so it is
# the operator's explicit choice (SECURE_HSTS_PRELOAD=1), not a default; until then the deploy
# check's reminder about it is silenced rather than left as noise.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "strict-origin-when-cross-origin"
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (django-csp): scripts only from this site, never inline, so an
# author's HTML that slipped through could not run. Styles allow inline attributes because
# KaTeX positions glyphs with style="…" and Mermaid's SVG carries its own <style>.
# https://django-csp.readthedocs.io/en/latest/configuration.html
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", "https:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
# The editor and the admin (where drafts are read and reviewed) load images from this site
# only: an external image in a draft would tell its server who reviewed it, and when. The
# preview shows a note where such an image would be (scidraft.markup.external_images).
AUTHORING_CSP_REPLACE = {"img-src": ["'self'", "data:"]}

# --- Logging ----------------------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {"stdout": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["stdout"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
    },
}

# --- SciDraft ---------------------------------------------------------------------------------

# Largest .bib file accepted by upload or import, in bytes.
SCIDRAFT_BIB_MAX_BYTES = env_int("SCIDRAFT_BIB_MAX_BYTES", 10 * 1024 * 1024)
# Largest note body accepted by the write paths and rendered, in UTF-8 bytes: a
# larger one is refused with a clear message; the renderer shows an error instead of working.
NOTE_BODY_MAX_BYTES = env_int("NOTE_BODY_MAX_BYTES", 2 * 1024 * 1024)
# The render's time budget (scidraft.markup.limits: 1 s of CPU, 1.5 s of V8's work, 5 s a
# JavaScript call), in percent. A render that runs out of time is not stored as final: the
# note keeps its previous complete render while notes.completion renders it again in the
# background with RENDER_COMPLETION_TIME_SCALE times the time, up to RENDER_COMPLETION_TRIES
# times; the last try is stored whatever it reaches, with a warning.
RENDER_TIME_PERCENT = env_int("RENDER_TIME_PERCENT", 100)
RENDER_COMPLETION_TIME_SCALE = env_int("RENDER_COMPLETION_TIME_SCALE", 8)
RENDER_COMPLETION_TRIES = env_int("RENDER_COMPLETION_TRIES", 3)
# Distinct CSL styles a note's reference lists may name besides the site's (each is built in
# V8, up to a second of CPU and 75 MB): lists past them are formatted in the site's style.
CITATION_STYLES_PER_NOTE = env_int("CITATION_STYLES_PER_NOTE", 3)
# Changed previews one user may ask the editor for in any window of so many seconds, counted
# in the database (editor.previews); the same text again is answered without counting.
EDITOR_PREVIEW_LIMIT = env_int("EDITOR_PREVIEW_LIMIT", 60)
EDITOR_PREVIEW_WINDOW = env_int("EDITOR_PREVIEW_WINDOW", 60)
# Characters of a note's or page's rendered text (and of its summary and description) that
# full-text search indexes and highlights (notes.search_index): past them a word is not found.
SEARCH_INDEX_MAX_CHARS = env_int("SEARCH_INDEX_MAX_CHARS", 100_000)
# Milliseconds PostgreSQL may spend finding the matched words of one page of results
# (ts_headline, whose time grows with the text times the query's terms: 40 s for a 60,000-
# character note and a 16-term query); past it the results are highlighted by the query's own
# words (notes.search.load_results).
SEARCH_HEADLINE_TIMEOUT_MS = env_int("SEARCH_HEADLINE_TIMEOUT_MS", 300)
# Autosaves by one person within this many seconds of the first of a run are one revision
# (explicit saves, publishes and restores always make their own).
NOTE_AUTOSAVE_COALESCE_SECONDS = env_int("NOTE_AUTOSAVE_COALESCE_SECONDS", 5 * 60)
# Page cache (scidraft.site.caching): how long readers' browsers and shared caches may keep a
# page, how long stale copies may be served while revalidating, and how long the server keeps
# a rendered page (it is keyed by the content generation, so this only bounds memory).
SCIDRAFT_PAGE_MAX_AGE = env_int("SCIDRAFT_PAGE_MAX_AGE", 60)
SCIDRAFT_PAGE_STALE_WHILE_REVALIDATE = env_int("SCIDRAFT_PAGE_STALE_WHILE_REVALIDATE", 600)
SCIDRAFT_PAGE_CACHE_TTL = env_int("SCIDRAFT_PAGE_CACHE_TTL", 60 * 60 * 24)
# Bytes of recently served pages each process keeps in memory (keys never change content).
SCIDRAFT_PAGE_LOCAL_BYTES = env_int("SCIDRAFT_PAGE_LOCAL_BYTES", 16 * 1024 * 1024)
# Bytes of pages keyed by query parameters (search results) each process keeps, apart from the
# others; they never go to the shared cache, so random searches cannot fill Redis.
SCIDRAFT_PAGE_QUERY_LOCAL_BYTES = env_int("SCIDRAFT_PAGE_QUERY_LOCAL_BYTES", 8 * 1024 * 1024)
# Milliseconds a reader who misses the cache waits for another thread or process that is already
# rendering the same page, before rendering it too (after a write every hot page misses at once).
SCIDRAFT_PAGE_RENDER_WAIT_MS = env_int("SCIDRAFT_PAGE_RENDER_WAIT_MS", 5000)
# What makes a cached page stale (scidraft.site.dependencies): "dependencies", a write to
# something the page shows (the page is served stale while one process renders it again), or
# "generation", any write (readers wait for the render). Without Redis, always the generation.
SCIDRAFT_PAGE_INVALIDATION = os.environ.get("SCIDRAFT_PAGE_INVALIDATION", "dependencies")
if SCIDRAFT_PAGE_INVALIDATION not in ("dependencies", "generation"):
    raise ImproperlyConfigured("SCIDRAFT_PAGE_INVALIDATION is dependencies or generation")
# Seconds after the latest change it misses that a stale page may still be served while it is
# rendered again; past them the reader renders it.
SCIDRAFT_PAGE_STALE_MAX_SECONDS = env_int("SCIDRAFT_PAGE_STALE_MAX_SECONDS", 10)
# Milliseconds a page must have been kept since its render before a write that makes it stale
# starts its background render: writes in quick succession (the home page under five publishes
# a second) cost one render per interval, not one each. At most the stale bound.
SCIDRAFT_PAGE_REFRESH_MS = min(
    env_int("SCIDRAFT_PAGE_REFRESH_MS", 2000), SCIDRAFT_PAGE_STALE_MAX_SECONDS * 1000
)
# Background renders of stale pages one process runs at once, and how much lower than its
# readers' their threads are scheduled (a nice value, Linux only; 0 keeps the worker's).
SCIDRAFT_PAGE_REFRESH_THREADS = max(1, env_int("SCIDRAFT_PAGE_REFRESH_THREADS", 1))
SCIDRAFT_PAGE_REFRESH_NICE = env_int("SCIDRAFT_PAGE_REFRESH_NICE", 19)
# How long the generation number may be read from the cache before the database is asked again;
# 0 (the default without Redis) keeps it out of the cache: a local-memory cache is not shared by
# processes, so a write from another one (manage.py, another worker) would not be seen.
SCIDRAFT_GENERATION_TTL = env_int("SCIDRAFT_GENERATION_TTL", 300 if REDIS_URL else 0)
# Milliseconds a process may reuse the generation it read, instead of asking the shared cache on
# every page hit. Every write then waits this long after publishing the new generation, before
# it answers, so no page is stale once the write's response is out (scidraft.site.generation).
# Only worth it with a shared cache (Redis); 0 reads the cache on every request.
SCIDRAFT_GENERATION_LEASE_MS = env_int("SCIDRAFT_GENERATION_LEASE_MS", 50 if REDIS_URL else 0)
# Public pages that list notes are bounded whatever the number of notes (notes.feeds,
# notes.sitemaps, notes.archives, notes.entry_index): the most items an RSS feed carries (the
# site's `services.rss.limit` when set and smaller); the most notes and pages, and bytes,
# index.json holds (past either it answers 404: the search page never reads it); notes per
# archive page; entries one entry index shows.
SCIDRAFT_RSS_LIMIT = env_int("SCIDRAFT_RSS_LIMIT", 20)
SCIDRAFT_INDEX_JSON_MAX_NOTES = env_int("SCIDRAFT_INDEX_JSON_MAX_NOTES", 500)
SCIDRAFT_INDEX_JSON_MAX_BYTES = env_int("SCIDRAFT_INDEX_JSON_MAX_BYTES", 1_000_000)
SCIDRAFT_ARCHIVE_PAGE_NOTES = env_int("SCIDRAFT_ARCHIVE_PAGE_NOTES", 250)
SCIDRAFT_ENTRY_INDEX_MAX_ENTRIES = env_int("SCIDRAFT_ENTRY_INDEX_MAX_ENTRIES", 500)


# A worker's V8 contexts (scidraft.markup.v8pool) and what it keeps typeset: the V8 heap one
# context may hold (a call past it is stopped); seconds after which an idle context the worker
# does not need (beyond one for formulas and the citation contexts below, or holding a style
# other than the site's) is closed; idle contexts a pool keeps, and citation contexts in use at
# once (gunicorn's threads); citation
# contexts kept ready with the site's style, which is also how many slices of one list are
# formatted at once; megabytes of typeset formulas and algorithms, and of formatted entries,
# each process keeps (docs/deployment.md#memory).
SCIDRAFT_V8_HEAP_MB = env_int("SCIDRAFT_V8_HEAP_MB", 256)
SCIDRAFT_V8_IDLE_SECONDS = env_int("SCIDRAFT_V8_IDLE_SECONDS", 60)
SCIDRAFT_V8_CONTEXTS = env_int("SCIDRAFT_V8_CONTEXTS", env_int("GUNICORN_THREADS", 4))
SCIDRAFT_V8_CITATION_CONTEXTS = env_int("SCIDRAFT_V8_CITATION_CONTEXTS", 2)
SCIDRAFT_KATEX_CACHE_MB = env_int("SCIDRAFT_KATEX_CACHE_MB", 16)
SCIDRAFT_CITATION_CACHE_MB = env_int("SCIDRAFT_CITATION_CACHE_MB", 8)
# Folder with the demo site loaded by `manage.py seed_demo`.
SCIDRAFT_DEMO_DIR = Path(os.environ.get("SCIDRAFT_DEMO_DIR", BASE_DIR / "demo"))

# --- Accounts ---------------------------------------------------------------------------------
# Log in, log out, password change and reset (accounts/). Listed first so its registration/
# templates win over django.contrib.admin's. Rate limits: accounts/limits.py.
INSTALLED_APPS.insert(0, "accounts")
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/write/"  # the author's dashboard
LOGOUT_REDIRECT_URL = "/"
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "webmaster@localhost")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
# Failed logins within the window (seconds), counted in the database (accounts.limits): per
# account from one client (its known browser, else its address), per address over all
# accounts, and per account from all browsers new to it.
ACCOUNTS_LOGIN_CLIENT_LIMIT = env_int("ACCOUNTS_LOGIN_CLIENT_LIMIT", 5)
ACCOUNTS_LOGIN_ADDRESS_LIMIT = env_int("ACCOUNTS_LOGIN_ADDRESS_LIMIT", 20)
ACCOUNTS_LOGIN_ACCOUNT_LIMIT = env_int("ACCOUNTS_LOGIN_ACCOUNT_LIMIT", 50)
ACCOUNTS_LOGIN_WINDOW = env_int("ACCOUNTS_LOGIN_WINDOW", 15 * 60)
# Password reset requests per client address and per email address within the window.
ACCOUNTS_RESET_LIMIT = env_int("ACCOUNTS_RESET_LIMIT", 5)
ACCOUNTS_RESET_WINDOW = env_int("ACCOUNTS_RESET_WINDOW", 60 * 60)
# Proxies of ours in front of the app: 0 means REMOTE_ADDR is the client; N reads the client
# from the N-th X-Forwarded-For entry from the right (the one our outermost proxy appended).
ACCOUNTS_TRUSTED_PROXY_COUNT = env_int("ACCOUNTS_TRUSTED_PROXY_COUNT", 0)

# --- Operations -------------------------------------------------------------------------------
# Health and readiness endpoints, JSON logs, backup and restore (ops/); media on object storage.
INSTALLED_APPS.append("ops")
# Container and load-balancer probes speak plain HTTP to the app itself: never redirected to
# HTTPS. SecurityMiddleware matches these against the path without its leading slash.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
# …and answered right after SecurityMiddleware, before host validation, the page cache and
# sessions, so they report an outage instead of failing with it (ops/middleware.py).
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
    "ops.middleware.ProbeMiddleware",
)
# A lost database answers 503 (JSON for the editor's autosave), never 500; outside the page
# cache and sessions, which need the database too (ops/outages.py).
MIDDLEWARE.insert(
    MIDDLEWARE.index("ops.middleware.ProbeMiddleware") + 1, "ops.outages.DatabaseOutageMiddleware"
)
# Seconds to wait for PostgreSQL to accept a connection: an unreachable database fails a
# request (and /healthz) promptly instead of hanging a worker.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env_int("DATABASE_CONNECT_TIMEOUT", 5)
    )

# Logs go to stdout (the container's log), as text or as one JSON object per line.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "plain").strip().lower()
if LOG_FORMAT not in {"plain", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be plain or json, got {LOG_FORMAT!r}.")
LOGGING["formatters"]["json"] = {"()": "ops.logging.JsonFormatter"}
LOGGING["handlers"]["stdout"].update({"stream": "ext://sys.stdout", "formatter": LOG_FORMAT})

# Uploaded media: MEDIA_ROOT (a volume in docker-compose.yml) unless a bucket is configured;
# then S3 or any S3-compatible store (MinIO, Ceph, R2…) through django-storages. Note images
# are addressed on the site (/media/…) whatever the storage, and images.views.media reads
# them from the bucket for those who may see them (a draft's only to its authors and Editors),
# so the bucket may stay private. Without keys, boto3's usual chain (instance role, ~/.aws)
# applies.
# https://django-storages.readthedocs.io/en/latest/backends/amazon-S3.html
if os.environ.get("AWS_STORAGE_BUCKET_NAME"):
    STORAGES["default"] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": os.environ.get("AWS_STORAGE_BUCKET_NAME"),
            "endpoint_url": os.environ.get("AWS_S3_ENDPOINT_URL") or None,
            "region_name": os.environ.get("AWS_S3_REGION_NAME") or None,
            "access_key": os.environ.get("AWS_ACCESS_KEY_ID") or None,
            "secret_key": os.environ.get("AWS_SECRET_ACCESS_KEY") or None,
            "custom_domain": os.environ.get("AWS_S3_CUSTOM_DOMAIN") or None,
            "querystring_auth": False,
            "file_overwrite": False,
        },
    }

# --- Images -----------------------------------------------------------------------------------
# Images uploaded into notes from the editor (images/): checked by content with Pillow, stored
# in the note's folder of the default storage, served with their checked type and nosniff.
INSTALLED_APPS.append("images")
# Largest image file accepted, in bytes.
IMAGE_UPLOAD_MAX_BYTES = env_int("IMAGE_UPLOAD_MAX_BYTES", 5 * 1024 * 1024)
# Largest image accepted, in pixels (width × height): a small file can decode into a huge bitmap.
IMAGE_UPLOAD_MAX_PIXELS = env_int("IMAGE_UPLOAD_MAX_PIXELS", 24_000_000)
# nginx's internal location of MEDIA_ROOT (deploy/nginx.conf: /internal-media/): the app
# decides who may load a note image and nginx sends it (X-Accel-Redirect). Empty: the app
# sends the file itself.
MEDIA_ACCEL_REDIRECT = os.environ.get("MEDIA_ACCEL_REDIRECT", "").strip()
if MEDIA_ACCEL_REDIRECT and not (
    MEDIA_ACCEL_REDIRECT.startswith("/") and MEDIA_ACCEL_REDIRECT.endswith("/")
):
    raise ImproperlyConfigured(
        f"MEDIA_ACCEL_REDIRECT must be a path that starts and ends with /, got "
        f"{MEDIA_ACCEL_REDIRECT!r}."
    )

# --- Writing together -------------------------------------------------------------------------
# A live document per note, over WebSockets at /live/notes/<id>/ (collaboration/).
# daphne first: its runserver serves WebSockets beside the pages, so `make run` has both.
INSTALLED_APPS.insert(0, "daphne")
INSTALLED_APPS.append("collaboration")
ASGI_APPLICATION = "scidraft.asgi.application"
# Whether the editor offers writing together (the page's data-live-url) and /live/ answers.
LIVE_EDITING = env_bool("LIVE_EDITING", True)
# Consumers on different app servers reach each other through Redis; one process needs no more
# than memory (`make run`).
# https://channels.readthedocs.io/en/stable/topics/channel_layers.html
# The prefix of writing together's keys in Redis: the channel layer's and the editors' seats.
CHANNEL_LAYER_PREFIX = os.environ.get("CHANNEL_LAYER_PREFIX", "scidraft-live")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # redis-py 8 times reads out after 5 s by default, and channels-redis waits
                # for a consumer's next message with a 5 s BZPOPMIN: a consumer quiet for 5 s
                # would die (no disconnect, so no last-editor save). 15 s outlasts the wait.
                "hosts": [{"address": REDIS_URL, "socket_timeout": 15}],
                "prefix": CHANNEL_LAYER_PREFIX,
                # Messages waiting per consumer before group sends to it are dropped silently
                # (default 100): a consumer a few seconds behind under load would lose updates,
                # and its editor every later update of their authors (Yjs holds them pending).
                "capacity": 2000,
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
# Largest WebSocket message a client may send, in bytes (a larger one closes with 4413).
LIVE_MESSAGE_MAX_BYTES = env_int("LIVE_MESSAGE_MAX_BYTES", 256 * 1024)
# Largest live document, encoded: an update that would pass it is refused (4413) and not
# stored; a note's stored updates may hold twice this between compactions. A document past
# either is refused at connect, and the editor falls back to saving over HTTP.
LIVE_DOCUMENT_MAX_BYTES = env_int("LIVE_DOCUMENT_MAX_BYTES", 4 * NOTE_BODY_MAX_BYTES)
# Largest presence (awareness) message relayed to the others; larger ones are dropped.
LIVE_AWARENESS_MAX_BYTES = env_int("LIVE_AWARENESS_MAX_BYTES", 8 * 1024)
# Messages per second per connection, sustained, and the burst allowed (a token bucket); past
# it the connection closes with 4429 and the client reconnects after its back-off.
LIVE_RATE_PER_SECOND = env_int("LIVE_RATE_PER_SECOND", 50)
LIVE_RATE_BURST = env_int("LIVE_RATE_BURST", 200)
# The same for all the connections to one note in one app server together, and how many may
# be open at once: an author cannot multiply the per-connection rate by opening sockets.
LIVE_NOTE_RATE_PER_SECOND = env_int("LIVE_NOTE_RATE_PER_SECOND", 400)
LIVE_NOTE_RATE_BURST = env_int("LIVE_NOTE_RATE_BURST", 1000)
# Editors one note may have at once: across every app server with REDIS_URL (collaboration.
# limits.EditorSeats), else in the one process.
LIVE_NOTE_EDITORS_MAX = env_int("LIVE_NOTE_EDITORS_MAX", 32)
# Seats one person may take in one note (tabs, windows, devices) and across all notes, counted
# the same way: one account cannot fill a note's seats and keep its co-authors out.
LIVE_USER_NOTE_SEATS_MAX = env_int("LIVE_USER_NOTE_SEATS_MAX", 4)
LIVE_USER_SEATS_MAX = env_int("LIVE_USER_SEATS_MAX", 16)
# Merged saves: this many milliseconds after the last update, at most this many apart while
# typing goes on (and when the last editor of a note leaves).
LIVE_SAVE_IDLE_MS = env_int("LIVE_SAVE_IDLE_MS", 2000)
LIVE_SAVE_MAX_MS = env_int("LIVE_SAVE_MAX_MS", 10_000)
# A note's stored updates are merged into one row by the merged save that finds more than this.
LIVE_COMPACT_ROWS = env_int("LIVE_COMPACT_ROWS", 300)
# Seconds between two checks that a connected person may still edit the note (authors' changes
# and deactivations are checked at once as well).
LIVE_RECHECK_SECONDS = env_int("LIVE_RECHECK_SECONDS", 60)
