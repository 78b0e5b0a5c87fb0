"""Security headers on every public page, the probes included."""

from __future__ import annotations

import pytest

from notes.models import Note

PUBLIC = ["/", "/tags/", "/about/", "/search/?q=proof", "/index.xml", "/healthz", "/readyz"]


@pytest.fixture
def public_urls(demo_loaded) -> list[str]:
    note = Note.objects.published().order_by("slug").first()
    return [*PUBLIC, f"/notes/{note.slug}/"]


@pytest.mark.django_db
def test_every_public_page_carries_the_security_headers(client, public_urls):
    """nosniff, Referrer-Policy, framing refused, and a CSP that allows no inline script."""
    for url in public_urls:
        for attempt in ("first", "cached"):
            response = client.get(url)
            assert response.status_code == 200, (url, attempt)
            where = f"{url} ({attempt})"
            assert response["X-Content-Type-Options"] == "nosniff", where
            assert response["Referrer-Policy"] == "strict-origin-when-cross-origin", where
            csp = response.get("Content-Security-Policy", "")
            assert csp, where
            assert response.get("X-Frame-Options") == "DENY" or "frame-ancestors 'none'" in csp
            script = next(
                (part for part in csp.split(";") if part.strip().startswith("script-src")),
                "",
            ) or next(part for part in csp.split(";") if part.strip().startswith("default-src"))
            assert "'unsafe-inline'" not in script, where
