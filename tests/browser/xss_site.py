"""The sites of tests/browser/test_xss.py, published through the services: the hostile one
(the corpus in notes with their tags and authors, a standalone page, a bibliography cited by a
note, shortcode arguments, and an Author's notes, one with a second revision for the editor's
diff) and a small plain one whose settings a test fills with payloads; the site settings and
menu made of payloads; and each pytest-xdist worker's own ports for the beacon and the live
server."""

from __future__ import annotations

import datetime as dt
import os
import socket
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import connections
from django.test import Client
from django.utils import timezone

from bibliography.services import bibfile_import
from hugosite.content import NoteSource, PageSource
from hugosite.loading import REPLACE_ALL, note_import, page_import, site_configure
from hugosite.site_config import MenuEntry, SiteConfig
from notes.models import Author, Note
from notes.services import note_save
from tests.browser.xss_corpus import (
    bibtex_value,
    fit,
    hostile_strings,
    hostile_urls,
    packed,
    shortcode_argument,
)
from tests.browser.xss_watch import Beacon

# The ports of test_xss.py's beacon and live server: each pytest-xdist worker its own ten,
# should the module's tests be spread over workers (`--dist load`).
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:])
PORTS = range(8340 + 10 * _WORKER, 8350 + 10 * _WORKER)
BIB_NAME = "bib/xss.bib"


def free_port(exclude: set[int] = frozenset()) -> int:
    for port in PORTS:
        if port in exclude:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {PORTS.start}-{PORTS.stop - 1}")


# --- The hostile site -----------------------------------------------------------------------


@dataclass
class HostileSite:
    url: str
    beacon: Beacon
    strings: list[str]
    urls: list[str]
    groups: list[list[str]]  # the strings of each packed note, in note order
    note_slugs: list[str]
    tag_slugs: list[str]
    author_handles: list[str]
    writer_session: dict  # the cookie of a logged-in Author who wrote the special notes
    writer_note_ids: list[int]


def _bib_text(strings: list[str], urls: list[str]) -> str:
    """Entry xssN carries string N in every field; the entries after them carry the URLs."""
    entries = []
    for number, text in enumerate(strings):
        value = bibtex_value(text)
        entries.append(
            f"@article{{xss{number},\n  title = {value},\n  author = {value} and Doe, Jane,\n"
            f"  journal = {value},\n  year = {{2024}},\n  volume = {{1}},\n"
            f"  url = {value},\n  doi = {value}\n}}\n"
        )
    for number, url in enumerate(urls, start=len(strings)):
        value = bibtex_value(url)
        entries.append(
            f"@misc{{xss{number},\n  title = {{Link {number}}},\n  author = {{Doe, Jane}},\n"
            f"  year = {{2024}},\n  url = {value},\n  doi = {value}\n}}\n"
        )
    return "\n".join(entries)


def _citing_body(strings: list[str], entries: int) -> str:
    """One reference list per payload (titled with it), then every entry in one list."""
    parts = [
        f"Cited \\cite{{xss{number}}}.\n\n"
        f'{{{{< references bib="{BIB_NAME}" title={shortcode_argument(text, one_line=True)} >}}}}'
        for number, text in enumerate(strings)
    ]
    keys = ",".join(f"xss{number}" for number in range(entries))
    parts.append(f'All \\cite{{{keys}}}.\n\n{{{{< references bib="{BIB_NAME}" >}}}}')
    return "\n\n".join(parts)


def _shortcode_body(strings: list[str], urls: list[str]) -> str:
    parts = []
    for text in strings:
        arg = shortcode_argument(text)
        parts.append(
            f"{{{{< promotion-textual title={arg} subtitle={arg} buttonLink={arg} "
            f"buttonText={arg} rel={arg} target={arg} align={arg} >}}}}\n\n"
            f"{{{{< gallery-item image={arg} link={arg} caption={arg} >}}}}\n\n"
            f"{{{{< term id={arg} def={arg} >}}}}term{{{{< /term >}}}}"
        )
    for url in urls:
        arg = shortcode_argument(url)
        parts.append(
            f'{{{{< promotion-textual title="t" buttonLink={arg} buttonText="go" >}}}}\n\n'
            f"{{{{< gallery-item image={arg} link={arg} >}}}}"
        )
    parts.append("{{< glossary >}}")
    return "\n\n".join(parts)


def hostile_settings(texts: list[str]) -> dict:
    """Every site string a page shows, made of payloads."""
    return {
        "title": " ".join(packed(texts, 200)[0]),
        "description": "\n".join(texts),
        "copyright": " ".join(packed(texts[::-1], 300)[0]),
        "footer_text": "\n".join(texts),
        "institute": " ".join(packed(texts[1:], 200)[0]),
        "author": " ".join(packed(texts[2:], 100)[0]),
    }


def hostile_menu(texts: list[str], urls: list[str]) -> list[MenuEntry]:
    """Menu entries labelled, hinted and linked with the payloads, then linked to the hostile
    URLs: every tenth is a parent of the nine after it; the first has no URL (a label)."""
    links = [(text, text) for text in texts] + [(f"Link {n}", url) for n, url in enumerate(urls)]
    return [
        MenuEntry(
            identifier=f"xss-menu-{number}",
            name=fit(name, 200),
            url="" if number == 0 else fit(url, 500),
            weight=number,
            parent="" if number % 10 == 0 else f"xss-menu-{number - number % 10}",
            note=fit(name, 200),
        )
        for number, (name, url) in enumerate(links)
    ]


PLAIN_SETTINGS = {
    "title": "Plain site",
    "description": "",
    "copyright": "",
    "footer_text": "",
    "institute": "Plain Institute",
    "author": "plain",
    "notes_per_page": 1000,
    "pager_size": 1000,
    "promotions_per_page": 2,
    "promotion_positions": "1-2",
    "show_full_text_in_rss": True,
}


def _author(number: int, text: str) -> str:
    handle = f"xss-author-{number:03d}"
    author = Author(name=fit(text, 200), handle=handle, institute=fit(text, 200), bio=text)
    author.full_clean()
    author.save()
    return handle


def _build(beacon: Beacon) -> HostileSite:
    """Publish the corpus through the services (in a worker thread: the main one holds
    Playwright's event loop, in which the math engine refuses to run)."""
    try:
        strings = hostile_strings(beacon.url)
        urls = hostile_urls(beacon.url)
        past = timezone.now() - dt.timedelta(days=1)
        site_configure(config=SiteConfig(settings=PLAIN_SETTINGS), policy=REPLACE_ALL)
        for slug, layout in (("search", "search"), ("archives", "archives")):
            page_import(source=PageSource(path=f"{slug}.md", slug=slug, body="", layout=layout))
        page_import(
            source=PageSource(
                path="about.md",
                slug="about",
                title=" ".join(packed(strings, 300)[0]),
                body="\n\n".join(strings),
                summary="\n".join(strings),
                description="\n".join(strings),
                keywords=strings,
            )
        )
        result = bibfile_import(name=BIB_NAME, raw=_bib_text(strings, urls))
        assert result.entries_kept == len(strings) + len(urls), result.problems

        handles = [_author(number, text) for number, text in enumerate(strings)]
        groups = packed(strings, 300)
        slugs = []
        first = 0
        for number, group in enumerate(groups):
            slug = f"xss-{number:03d}"
            members = strings[first : first + len(group)]  # uncut, for the long fields
            note_import(
                source=NoteSource(
                    path=f"{slug}.md",
                    slug=slug,
                    body="\n\n".join(members),
                    title=" ".join(group),
                    date=past - dt.timedelta(minutes=number),
                    authors=handles[first : first + len(group)],
                    institute=" ".join(packed(members, 200)[0]),
                    tags=[fit(text, 100) for text in members],
                    show_title=True,
                    promotion=number % 30 == 1,
                    summary="\n".join(members),
                    description="\n".join(members),
                    keywords=members,
                )
            )
            slugs.append(slug)
            first += len(group)
        assert first == len(strings)

        writer = User.objects.create_user("xss-writer", "w@example.org", "a long passphrase 12")
        writer.groups.add(Group.objects.get(name="Author"))
        Author.objects.filter(handle=handles[0]).update(user=writer)
        written = []
        for slug, body in (
            ("xss-citations", _citing_body(strings, len(strings) + len(urls))),
            ("xss-shortcodes", _shortcode_body(strings, urls)),
        ):
            note, _ = note_import(
                source=NoteSource(
                    path=f"{slug}.md", slug=slug, body=body, title=slug,
                    date=past + dt.timedelta(minutes=1), authors=[handles[0]],
                )
            )  # fmt: skip
            written.append(note.pk)
        # A second revision of the first note, so the editor has a diff to show.
        first_note = Note.objects.get(slug=slugs[0])
        note_save(
            note_id=first_note.pk, user=writer, base_version=first_note.version,
            fields={"body": "\n\n".join(reversed(strings[: len(groups[0])]))},
        )  # fmt: skip
        written.append(first_note.pk)

        client = Client()
        client.force_login(writer)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        tag_slugs = list(
            Note.objects.filter(slug__in=slugs)
            .values_list("tags__slug", flat=True)
            .order_by("tags__pk")
            .distinct()
        )
        return HostileSite(
            url="",
            beacon=beacon,
            strings=strings,
            urls=urls,
            groups=groups,
            note_slugs=slugs,
            tag_slugs=tag_slugs,
            author_handles=handles,
            writer_session={"name": settings.SESSION_COOKIE_NAME, "value": cookie.value},
            writer_note_ids=written,
        )
    finally:
        connections.close_all()


def _build_plain() -> None:
    try:
        site_configure(config=SiteConfig(settings=PLAIN_SETTINGS), policy=REPLACE_ALL)
        for slug, layout in (("search", "search"), ("archives", "archives"), ("about", "")):
            page_import(
                source=PageSource(path=f"{slug}.md", slug=slug, body="About.", layout=layout)
            )
        author = Author(name="Plain Author", handle="plain-author")
        author.full_clean()
        author.save()
        note_import(
            source=NoteSource(
                path="plain.md", slug="plain", title="Plain", body="Text $x$.",
                date=timezone.now() - dt.timedelta(days=1), authors=["plain-author"],
                tags=["plain"],
            )
        )  # fmt: skip
    finally:
        connections.close_all()
