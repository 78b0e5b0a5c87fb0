"""The Content-Security-Policy of authoring pages and of readers' pages.

The editor (every URL of its namespace) and the admin load images from this site only, so a
draft's external image cannot tell its server who reviewed it; readers' pages keep the site's
policy, which allows https: images. The rest of the policy is the same everywhere.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from bibliography.services import bibfile_create
from scidraft.site.csp import is_authoring
from tests.editor.test_permissions import editor_patterns
from tests.factories import publish, write

AUTHORING_IMG = ["'self'", "data:"]
PUBLIC_IMG = ["'self'", "data:", "https:"]


def directives(response) -> dict[str, list[str]]:
    policy = response["Content-Security-Policy"]
    parsed = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            parsed[words[0]] = words[1:]
    return parsed


def assert_same_apart_from_images(authoring: dict, public: dict) -> None:
    assert {k: v for k, v in authoring.items() if k != "img-src"} == {
        k: v for k, v in public.items() if k != "img-src"
    }


@pytest.fixture
def published(author, note):
    return publish(write(note, author, body="![x](https://tracker.example/p.gif)"), author)


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["author", "editor_user", "admin_user"])
def test_every_editor_page_loads_images_from_this_site_only(request, role, author, published):
    """Each editor URL a role may GET, and the preview it may POST, has img-src 'self' data:
    and otherwise the site's policy."""
    user = request.getfixturevalue(role)
    bibfile = bibfile_create(user=author, name="bib/own.bib", raw="@misc{k, title={T}}").bibfile
    params = {
        "note_id": published.pk, "revision_id": published.revisions.first().pk,
        "bibfile_id": bibfile.pk, "user_id": author.pk, "author_id": author.author.pk,
    }  # fmt: skip
    client = Client()
    client.force_login(user)
    public = directives(client.get("/"))
    checked = []
    for pattern in editor_patterns():
        kwargs = {key: params[key] for key in pattern.pattern.converters}
        url = reverse(f"editor:{pattern.name}", kwargs=kwargs)
        response = client.get(url)
        if response.status_code != 200:
            continue  # POST-only, or not for this role (tests/editor/test_permissions.py)
        policy = directives(response)
        assert policy["img-src"] == AUTHORING_IMG, url
        assert_same_apart_from_images(policy, public)
        checked.append(pattern.name)
    assert {"dashboard", "edit", "revisions", "bibliographies"} <= set(checked)
    preview = client.post(f"/write/{published.pk}/preview/", {"content": "![x](/a.png)"})
    assert directives(preview)["img-src"] == AUTHORING_IMG


@pytest.mark.django_db
def test_the_admin_loads_images_from_this_site_only(admin_user, published):
    """The admin's pages, the note form with its preview among them."""
    client = Client()
    client.force_login(admin_user)
    for url in (
        "/admin/",
        f"/admin/notes/note/{published.pk}/change/",
        "/admin/notes/note/add/",
        "/admin/bibliography/bibfile/",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        assert directives(response)["img-src"] == AUTHORING_IMG, url
    preview = client.post(reverse("admin:notes_note_preview"), {"content": "text"})
    assert directives(preview)["img-src"] == AUTHORING_IMG


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["anonymous", "author", "editor_user", "admin_user"])
def test_readers_pages_keep_the_site_policy(request, role, published):
    """Public pages allow https: images for everyone, logged in or not, cached or not."""
    client = Client()
    if role != "anonymous":
        client.force_login(request.getfixturevalue(role))
    for url in ("/", f"/notes/{published.slug}/", "/tags/", "/index.xml", "/accounts/login/"):
        for _attempt in ("first", "cached"):
            response = client.get(url)
            assert response.status_code == 200, url
            assert directives(response)["img-src"] == PUBLIC_IMG, (role, url)


def test_authoring_is_decided_by_the_url_namespace(rf):
    """By the resolved view's namespace, not by the path's look."""
    from django.urls import resolve

    cases = {"/write/": True, "/write/review/": True, "/admin/": True, "/": False}
    cases["/notes/write/"] = False
    for path, expected in cases.items():
        request = rf.get(path)
        request.resolver_match = resolve(path)
        assert is_authoring(request) is expected, path
    assert is_authoring(rf.get("/write/")) is False  # not routed yet: the site's policy
