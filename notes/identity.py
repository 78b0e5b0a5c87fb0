"""Who a note is by: note → site settings → theme defaults (docs/theme.md#front-matter)."""

from __future__ import annotations

from dataclasses import dataclass

from scidraft.site.models import SiteSettings

from .models import Note

DEFAULT_INSTITUTE = "Your Institute"
DEFAULT_HANDLE = "yourname"


@dataclass(frozen=True)
class Byline:
    name: str
    handle: str
    url: str  # the author's page, or "" for the site's default identity


@dataclass(frozen=True)
class Identity:
    institute: str
    authors: tuple[Byline, ...]

    @property
    def avatar(self) -> str:
        return (self.institute.strip()[:1] or "?").upper()

    @property
    def first(self) -> Byline:
        return self.authors[0]

    @property
    def names(self) -> str:
        """All authors joined, for the byline and <meta name="author">."""
        return ", ".join(author.name for author in self.authors)


def identity_for(note: Note | None, site: SiteSettings) -> Identity:
    """Uses note.authorships with their authors prefetched (no query per note)."""
    institute = (note.institute if note is not None else "") or site.institute or DEFAULT_INSTITUTE
    authors: tuple[Byline, ...] = ()
    if note is not None:
        authors = tuple(
            Byline(link.author.name, link.author.handle, f"/authors/{link.author.handle}/")
            for link in note.authorships.all()
        )
    if not authors:
        handle = site.author or DEFAULT_HANDLE
        authors = (Byline(handle, handle, ""),)
    return Identity(institute, authors)
