"""With DEBUG on (make run) a missing page is the site's own 404 page, as readers get it."""

from __future__ import annotations

import pytest

SITE_PAGE = "This page does not exist, or it is not published yet."


@pytest.fixture
def debug(settings):
    settings.DEBUG = True
    settings.DEBUG_TECHNICAL_404 = False
    return settings


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/no/such/path/here/", "/notes/no-such-note/", "/no-page/"])
def test_debug_shows_the_sites_404_page(client, debug, url):
    """Unknown URLs and missing notes render templates/404.html in the site's look."""
    response = client.get(url)
    text = response.content.decode()
    assert response.status_code == 404
    assert SITE_PAGE in text and 'class="header"' in text
    assert "Using the URLconf" not in text and "Django" not in text


@pytest.mark.django_db
def test_the_technical_page_when_asked_for(client, debug):
    """DEBUG_TECHNICAL_404=1 gives Django's page with the URL patterns tried."""
    debug.DEBUG_TECHNICAL_404 = True
    response = client.get("/no/such/path/here/")
    assert response.status_code == 404 and "Using the URLconf" in response.content.decode()


@pytest.mark.django_db
def test_without_debug_the_sites_page_is_unchanged(client, settings):
    """With DEBUG off Django renders the same page on its own."""
    settings.DEBUG = False
    response = client.get("/no/such/path/here/")
    assert response.status_code == 404 and SITE_PAGE in response.content.decode()
