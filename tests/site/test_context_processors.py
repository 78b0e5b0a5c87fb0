"""The menu in every page's header: entries whose URL a click would run as script are not links."""

from __future__ import annotations

import pytest

from scidraft.site.context_processors import safe_href
from scidraft.site.models import MenuItem


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        " JaVaScRiPt:alert(1)",
        "jav\tascript:alert(1)",
        "java\nscript:alert(1)",
        "\x01\x0e javascript:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html,<script>alert(1)</script>",
        "about:blank",
    ],
)
def test_script_urls_are_not_linked(url):
    """A scheme other than http(s)/mailto, as a browser reads it, gives no href."""
    assert safe_href(url) == ""


@pytest.mark.parametrize(
    "url",
    [
        "/notes/",
        "/search/?q=a:b",
        "#top",
        "?page=2",
        "https://example.org/x",
        "HTTP://example.org/",
        "mailto:lab@example.org",
        "javascript&#58;alert(1)",  # escaped on output: a harmless relative URL
    ],
)
def test_ordinary_urls_are_kept(url):
    """Relative, http(s) and mailto URLs are linked as they are."""
    assert safe_href(url) == url


@pytest.mark.django_db
def test_menu_entry_with_a_script_url_renders_without_href(client):
    """The header shows such an entry (its label) but links neither it nor its child."""
    parent = MenuItem.objects.create(identifier="p", name="Evil", url="javascript:alert(1)")
    MenuItem.objects.create(identifier="c", name="Child", url=" data:text/html,x", parent=parent)
    MenuItem.objects.create(identifier="ok", name="Notes", url="/notes/")
    html = client.get("/").content.decode()
    assert "javascript:" not in html and "data:text/html" not in html
    assert "Evil" in html and "Child" in html
    assert 'href="/notes/"' in html


NOTE_URL = "/notes/result-theorem-gronwall-inequality/"


@pytest.mark.django_db
def test_signed_in_people_see_write_and_sign_out_in_the_header(client, demo_loaded, author):
    """A signed-in reader's header links the editor and signs out with a POST form."""
    client.force_login(author)
    html = client.get(NOTE_URL).content.decode()
    header = html.split("</header>")[0]
    assert 'href="/write/"' in header and ">Write<" in header
    assert 'action="/accounts/logout/"' in header and 'method="post"' in header
    assert "Sign out" in header and "csrfmiddlewaretoken" in header
    assert "Sign in" not in html


@pytest.mark.django_db
def test_an_anonymous_reader_never_sees_a_signed_in_header(client, demo_loaded, author):
    """Pages and headers rendered for someone signed in never reach anonymous readers."""
    client.force_login(author)
    assert "Sign out" in client.get(NOTE_URL).content.decode()
    assert "Sign out" in client.get("/").content.decode()
    client.logout()
    client.cookies.clear()
    for _ in range(2):  # the render, then the cached copy
        for url in (NOTE_URL, "/"):
            html = client.get(url).content.decode()
            assert "Sign out" not in html and "Lovelace" not in html and "Write<" not in html
            assert 'href="/accounts/login/"' in html.split('<footer class="footer"')[1]


@pytest.mark.django_db
def test_the_editor_has_an_account_menu(client, author):
    """In the editor the header names the person, with Change password and Sign out."""
    client.force_login(author)
    header = client.get("/write/").content.decode().split("</header>")[0]
    assert "Ada Lovelace" in header
    assert 'href="/accounts/password/change/"' in header and "Change password" in header
    assert "Sign out" in header
