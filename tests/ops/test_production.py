"""Production settings of the operations section: deploy check, logs, media storage."""

from __future__ import annotations

import json
import logging
import secrets
import sys

import pytest

from ops.logging import JsonFormatter
from tests.ops.helpers import manage, shell

PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": secrets.token_urlsafe(60),
    "ALLOWED_HOSTS": "notes.example.org",
    "DATABASE_URL": "sqlite:///:memory:",
}
BUCKET = {
    "AWS_STORAGE_BUCKET_NAME": "scidraft-media",
    "AWS_S3_ENDPOINT_URL": "https://minio.example.org",
    "AWS_S3_REGION_NAME": "eu-central-1",
    "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "not-a-real-secret",
}


def test_check_deploy_is_clean_with_every_operations_variable():
    """`check --deploy` reports nothing with JSON logs, a bucket and the proxy header on."""
    env = {**PRODUCTION, **BUCKET, "LOG_FORMAT": "json", "SECURE_PROXY_SSL_HEADER": "1"}
    env["AWS_S3_CUSTOM_DOMAIN"] = "media.example.org"
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_probes_are_exempt_from_the_https_redirect_in_production():
    """SECURE_REDIRECT_EXEMPT names both probes (matched without the leading slash)."""
    result = shell(
        "import re; from django.conf import settings as s; "
        "print([p for p in ('healthz', 'readyz', 'tags/') "
        "if any(re.search(x, p) for x in s.SECURE_REDIRECT_EXEMPT)], s.SECURE_SSL_REDIRECT)",
        env=PRODUCTION,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['healthz', 'readyz'] True"


def test_json_logs_are_one_object_per_line_on_stdout():
    """LOG_FORMAT=json: a warning logged in the app is a JSON line on stdout, not stderr."""
    result = shell(
        "import logging; logging.getLogger('scidraft.test').warning('disk %s', 'low', "
        "extra={'free_mb': 12})",
        env={**PRODUCTION, "LOG_FORMAT": "json"},
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, result.stdout
    entry = lines[0]
    assert entry["level"] == "WARNING"
    assert entry["logger"] == "scidraft.test"
    assert entry["message"] == "disk low"
    assert entry["free_mb"] == 12
    assert entry["time"].endswith("+00:00")
    assert "disk low" not in result.stderr


def test_plain_logs_stay_text_and_unknown_formats_are_refused():
    """The default is text on stdout; LOG_FORMAT=xml stops the process with a message."""
    result = shell(
        "import logging; logging.getLogger('scidraft.test').warning('plain text')",
        env=PRODUCTION,
    )
    assert result.returncode == 0, result.stderr
    assert "WARNING scidraft.test: plain text" in result.stdout
    refused = manage("check", env={**PRODUCTION, "LOG_FORMAT": "xml"})
    assert refused.returncode != 0
    assert "LOG_FORMAT must be plain or json" in refused.stderr


def test_json_formatter_keeps_exceptions_and_request_paths():
    """Tracebacks go in "exception"; Django's request records give method and path."""
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("django.request", logging.ERROR, __file__, 1, "failed %s",
                                   ("x",), sys.exc_info())  # fmt: skip

    class Request:
        method = "GET"
        path = "/notes/x/"

    record.request = Request()
    record.status_code = 500
    entry = json.loads(JsonFormatter().format(record))
    assert entry["message"] == "failed x"
    assert "ValueError: boom" in entry["exception"]
    assert (entry["method"], entry["path"], entry["status_code"]) == ("GET", "/notes/x/", 500)


@pytest.mark.slow
def test_media_use_the_volume_by_default_and_s3_when_a_bucket_is_named():
    """FileSystemStorage in MEDIA_ROOT without a bucket; django-storages' S3 with one."""
    code = (
        "from django.core.files.storage import default_storage as s; "
        "print(s.__class__.__module__, s.__class__.__name__, getattr(s, 'bucket_name', '-'), "
        "getattr(s, 'endpoint_url', '-'), getattr(s, 'querystring_auth', '-'))"
    )
    volume = shell(code, env={**PRODUCTION, "MEDIA_ROOT": "/data/media"})
    assert volume.returncode == 0, volume.stderr
    assert volume.stdout.split()[:2] == [
        "django.core.files.storage.filesystem",
        "FileSystemStorage",
    ]
    bucket = shell(code, env={**PRODUCTION, **BUCKET})
    assert bucket.returncode == 0, bucket.stderr
    assert bucket.stdout.split() == [
        "storages.backends.s3",
        "S3Storage",
        "scidraft-media",
        "https://minio.example.org",
        "False",
    ]
    url = shell(
        "from django.core.files.storage import default_storage as s; print(s.url('a/b.png'))",
        env={**PRODUCTION, **BUCKET, "AWS_S3_CUSTOM_DOMAIN": "media.example.org"},
    )
    assert url.returncode == 0, url.stderr
    assert url.stdout.strip() == "https://media.example.org/a/b.png"
