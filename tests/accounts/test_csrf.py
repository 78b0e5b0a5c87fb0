"""CSRF on every state-changing request, for every URL of the site.

The URL list comes from the URLconf itself (the admin, the editor, accounts, the public site
and whatever is added later), with arguments built from the converters and regular
expressions: an int is the id of an existing note, a slug or string its slug, a path a file
name. Each URL gets POST, PUT, PATCH and DELETE without a token, from a browser that holds a
CSRF cookie (as a victim's does), logged in as an admin and anonymous: every one must be
refused with Django's CSRF failure (403), before any view runs. A URL the builder cannot fill
fails the test instead of being skipped.
"""

from __future__ import annotations

import re
import uuid

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.middleware.csrf import _get_new_csrf_string
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.converters import IntConverter, PathConverter, UUIDConverter
from django.urls.resolvers import RegexPattern, RoutePattern

from notes import services

from .conftest import PASSWORD

UNSAFE_METHODS = ("post", "put", "patch", "delete")
CSRF_FAILURE = b"CSRF verification failed"

# Answered before the CSRF middleware runs, with a reason each. Nothing else may be.
EXCEPTIONS = {
    "healthz": "a probe answered by ops.ProbeMiddleware ahead of sessions and CSRF; GET and "
    "HEAD only (405 otherwise), it reads and changes nothing",
    "readyz": "as healthz",
}


def url_patterns() -> list[tuple[URLPattern, list]]:
    """Every URL pattern of the root URLconf with the chain of patterns leading to it."""
    found: list[tuple[URLPattern, list]] = []

    def walk(entries, chain: list) -> None:
        for entry in entries:
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, [*chain, entry.pattern])
            else:
                found.append((entry, [*chain, entry.pattern]))

    walk(get_resolver().url_patterns, [])
    return found


def route_of(chain: list) -> str:
    """The route resolve() reports for a URL matched through `chain` (URLResolver._join_route)."""
    route = ""
    for pattern in chain:
        piece = str(pattern)
        route = piece if not route else route + piece.removeprefix("^")
    return route


class Values:
    """Argument values: ints are an existing note's id, slugs and strings its slug."""

    def __init__(self, note_id: int, slug: str):
        self.note_id = str(note_id)
        self.slug = slug
        # For regular-expression groups: the first candidate the group matches is taken.
        self.candidates = [slug, self.note_id, "bib", "refs.bib", "bib/refs.bib", "x"]

    def for_converter(self, converter) -> str:
        if isinstance(converter, IntConverter):
            value = self.note_id
        elif isinstance(converter, UUIDConverter):
            value = str(uuid.UUID(int=1))
        elif isinstance(converter, PathConverter):
            value = "bib/refs.bib"
        else:  # str, slug and custom converters with slug-like values
            value = self.slug
        assert re.fullmatch(converter.regex, value), (converter, value)
        return value

    def for_group(self, regex: str) -> str:
        # A choice of words (the admin's app labels, export formats): its first word.
        choices = [_REGEX_ESCAPE.sub(r"\1", word) for word in regex.split("|")]
        for value in [*self.candidates, choices[0]]:
            if re.fullmatch(regex, value):
                return value
        raise LookupError(f"no candidate value matches ({regex})")


_ROUTE_PARAMETER = re.compile(r"<(?:[^>:]+:)?(?P<name>[^>]+)>")
_REGEX_ESCAPE = re.compile(r"\\(.)")
_REGEX_SYNTAX = re.compile(r"[()\[\]?*+{}|^$]")


def _named_groups(regex: str) -> list[tuple[int, int, str, str]]:
    """(start, end, name, inner regex) of each top-level (?P<name>…) group."""
    groups = []
    for match in re.finditer(r"\(\?P<(\w+)>", regex):
        depth, index = 1, match.end()
        while depth:
            char = regex[index]
            if char == "\\":
                index += 2
                continue
            depth += {"(": 1, ")": -1}.get(char, 0)
            index += 1
        groups.append((match.start(), index, match.group(1), regex[match.end() : index - 1]))
    return groups


def _piece(pattern, values: Values) -> str:
    if isinstance(pattern, RoutePattern):
        route = str(pattern)
        return _ROUTE_PARAMETER.sub(
            lambda match: values.for_converter(pattern.converters[match.group("name")]), route
        )
    if isinstance(pattern, RegexPattern):
        regex = str(pattern).removeprefix("^").removesuffix("$").removesuffix(r"\Z")
        out, position = [], 0
        for start, end, _, inner in _named_groups(regex):
            out += [regex[position:start], values.for_group(inner)]
            position = end
        out.append(regex[position:])
        literal = "".join(
            _REGEX_ESCAPE.sub(r"\1", part) if index % 2 == 0 else part
            for index, part in enumerate(out)
        )
        leftover = [part for index, part in enumerate(out) if index % 2 == 0]
        if any(_REGEX_SYNTAX.search(_REGEX_ESCAPE.sub("", part)) for part in leftover):
            raise LookupError(f"regular expression too rich to fill: {pattern}")
        return literal
    raise LookupError(f"unknown pattern type {type(pattern).__name__}: {pattern}")


def build_url(chain: list, values: Values) -> str:
    """A URL that resolves to the pattern at the end of `chain`; LookupError if none can."""
    url = "/" + "".join(_piece(pattern, values) for pattern in chain)
    match = resolve(url)
    if match.route != route_of(chain):
        raise LookupError(f"{url} resolves to {match.route!r}, not {route_of(chain)!r}")
    return url


@pytest.fixture
def site_urls(db):
    """(name, url) for every pattern, with the note the arguments point at."""
    admin = User.objects.create_superuser("root", "root@example.org", PASSWORD)
    note = services.note_create(user=admin, title="A note")
    values = Values(note.pk, note.slug)
    urls, unbuildable = [], []
    for pattern, chain in url_patterns():
        label = pattern.name or route_of(chain)
        try:
            urls.append((label, build_url(chain, values)))
        except LookupError as error:
            unbuildable.append(f"{label}: {error}")
    assert not unbuildable, "\n".join(unbuildable)
    return admin, urls


def _victim(user=None) -> Client:
    """A browser with a CSRF cookie (and a session when `user`) whose requests carry no token."""
    client = Client(enforce_csrf_checks=True)
    client.cookies[settings.CSRF_COOKIE_NAME] = _get_new_csrf_string()
    if user is not None:
        client.force_login(user)
    return client


def test_the_urlconf_is_large_and_buildable(site_urls):
    """Every pattern of the URLconf (the admin's included) gets a URL resolving back to it."""
    _, urls = site_urls
    names = {name for name, _ in urls}
    assert len(urls) > 50
    assert {"login", "logout", "password_change", "password_reset"} <= names
    assert {"edit", "preview", "autosave", "note_detail", "healthz"} <= names


def test_every_unsafe_request_without_a_token_is_refused(site_urls):
    """POST, PUT, PATCH and DELETE without a token: 403 from the CSRF check on every URL, for
    an admin's session and for an anonymous visitor (public forms: login, reset, set password),
    except the probes of EXCEPTIONS."""
    admin, urls = site_urls
    failures = []
    for who, client in (("admin", _victim(admin)), ("anonymous", _victim())):
        for name, url in urls:
            if name in EXCEPTIONS:
                continue
            for method in UNSAFE_METHODS:
                response = getattr(client, method)(url, {"x": "1"})
                if response.status_code != 403 or CSRF_FAILURE not in response.content:
                    failures.append(f"{method.upper()} {url} ({name}) as {who}: "
                                    f"{response.status_code}")  # fmt: skip
    assert not failures, "\n".join(failures)


def test_exceptions_change_nothing_and_refuse_unsafe_methods(site_urls):
    """The probes answer ahead of the CSRF check, but only to GET and HEAD."""
    admin, urls = site_urls
    client = _victim(admin)
    exempt = [(name, url) for name, url in urls if name in EXCEPTIONS]
    assert {name for name, _ in exempt} == set(EXCEPTIONS)
    for name, url in exempt:
        for method in UNSAFE_METHODS:
            assert getattr(client, method)(url).status_code == 405, (method, name)


def test_the_same_requests_with_a_token_pass_the_check(site_urls):
    """With the cookie's token in the header, no URL gets the CSRF failure: the refusals above
    are the missing token's doing."""
    admin, urls = site_urls
    client = _victim(admin)
    token = client.cookies[settings.CSRF_COOKIE_NAME].value
    for name, url in urls:
        response = client.post(url, {"x": "1"}, headers={"X-CSRFToken": token})
        assert CSRF_FAILURE not in response.content, (name, url, response.status_code)


def test_a_token_from_another_origin_is_refused(site_urls):
    """A valid token sent with a foreign Origin header is refused too."""
    admin, _ = site_urls
    client = _victim(admin)
    token = client.cookies[settings.CSRF_COOKIE_NAME].value
    response = client.post(
        "/accounts/password/change/",
        {"old_password": PASSWORD, "new_password1": "x" * 20, "new_password2": "x" * 20},
        headers={"X-CSRFToken": token, "Origin": "https://evil.example"},
    )
    assert response.status_code == 403 and CSRF_FAILURE in response.content
    admin.refresh_from_db()
    assert admin.check_password(PASSWORD)


def test_a_new_url_is_covered_without_listing_it(settings):
    """A URL added anywhere in the URLconf is enumerated and built (here, a regex one)."""
    import types

    from django.urls import include, path, re_path

    import scidraft.urls

    extra = re_path(r"^write/(?P<note_id>\d+)/secret/(?P<kind>bib|ris)$", lambda r: None)
    nested = path("more/", include([path("<slug:slug>/<int:n>/", lambda r: None, name="x")]))
    root = types.ModuleType("extended_urls")
    root.urlpatterns = [
        *scidraft.urls.urlpatterns[:-1],
        extra,
        nested,
        scidraft.urls.urlpatterns[-1],
    ]
    settings.ROOT_URLCONF = root
    values = Values(7, "a-note")
    built = {build_url(chain, values) for pattern, chain in url_patterns()}
    assert {"/write/7/secret/bib", "/more/a-note/7/"} <= built
