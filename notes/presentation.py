"""How notes appear to readers: cards, dates, titles, share links (docs/theme.md#the-feed,
#the-note-page).

Rendered HTML comes from the stored render, which the engine sanitised; it is marked safe
here and nowhere else.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from urllib.parse import quote

from django.utils.safestring import SafeString, mark_safe

from scidraft.site.models import SHARE_BUTTONS, SiteSettings

from .identity import Identity, identity_for
from .models import Note

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
MONTHS_LONG = ["January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December"]  # fmt: skip


# Hugo's .ReadingTime for languages written with spaces: minutes at 213 words a minute,
# rounded up, which the theme prints as "N min". The editor's live count uses the same
# (static/js/editor-stats.js).
WORDS_PER_MINUTE = 213


def reading_minutes(words: int) -> int:
    return (max(words, 0) + WORDS_PER_MINUTE - 1) // WORDS_PER_MINUTE


# The theme prints English dates in the offset the note was written in, whatever the server's
# locale: formats are built here rather than with strftime or the date filter.
def date_short(moment: dt.datetime) -> str:
    return f"{MONTHS[moment.month - 1]} {moment.day}, {moment.year}"


def date_with_time(moment: dt.datetime) -> str:
    return f"{date_short(moment)} {moment:%H:%M}"


def date_note_page(moment: dt.datetime) -> str:
    return f"{date_short(moment)} · {moment:%H:%M}"


def date_long(moment: dt.datetime) -> str:
    return f"{MONTHS_LONG[moment.month - 1]} {moment.day}, {moment.year}"


def month_name(month: int) -> str:
    return MONTHS_LONG[month - 1]


def card_shows_title(note: Note) -> bool:
    """docs/theme.md#card-titles: set → as set; unset → shown only when the note has preview
    markers. A note without a title never gets an empty heading."""
    if not note.title:
        return False
    if note.show_title is not None:
        return note.show_title
    return bool((note.render_flags or {}).get("has_preview"))


@dataclass
class Card:
    note: Note
    promotion: bool
    identity: Identity
    show_title: bool
    url: str
    date: str
    date_title: str
    read_more: bool
    tags: list  # the note's tags by name (prefetched)

    @property
    def body(self) -> SafeString:
        # Trusted: rendered and sanitised by scidraft.markup at save time.
        return mark_safe(self.note.rendered_card_html)  # noqa: S308


def card(note: Note, site: SiteSettings, *, promotion: bool = False) -> Card:
    moment = note.local_date
    return Card(
        note=note,
        promotion=promotion,
        identity=identity_for(note, site),
        show_title=card_shows_title(note),
        url=f"/notes/{note.slug}/",
        date=date_short(moment),
        date_title=date_with_time(moment),
        read_more=bool((note.render_flags or {}).get("has_preview")),
        tags=note.ordered_tags(),
    )


# A page asset → the render flag saying a note (or its card) needs it.
_ASSET_FLAGS = {
    "math": "has_math",
    "code": "has_code",
    "algorithm": "has_algorithm",
    "mermaid": "has_mermaid",
}


def assets_for(notes, *, cards: bool = False) -> dict[str, bool]:
    """Which vendor CSS/JS a page needs: only what its notes use (Mermaid only with a diagram).

    With `cards`, only what the notes' cards show (`card_html`, the preview region): a feed
    page whose cards hold no diagram loads no Mermaid, even if a note behind a card has one.
    A render stored before the engine recorded its card's flags counts
    the whole note, as before: an asset too many, never one missing."""
    flags = [note.render_flags or {} for note in notes]
    prefix = "card_" if cards else ""
    return {
        asset: any(flag.get(prefix + name, flag.get(name)) for flag in flags)
        for asset, name in _ASSET_FLAGS.items()
    }


@dataclass(frozen=True)
class ShareLink:
    name: str
    label: str
    url: str


_SHARE_LABELS = {
    "x": "share on x",
    "linkedin": "share on linkedin",
    "reddit": "share on reddit",
    "facebook": "share on facebook",
    "whatsapp": "share on whatsapp",
    "telegram": "share on telegram",
    "ycombinator": "share on ycombinator",
}


def share_links(note: Note, site: SiteSettings, url: str) -> list[ShareLink]:
    if note.disable_share or not site.show_share_buttons:
        return []
    allowed = note.share_buttons if note.share_buttons is not None else site.share_buttons
    title, link = quote(note.title or note.slug), quote(url, safe="")
    hashtags = quote(",".join("".join(tag.name.split()) for tag in note.ordered_tags()))
    targets = {
        "x": f"https://x.com/intent/tweet/?text={title}&url={link}&hashtags={hashtags}",
        "linkedin": f"https://www.linkedin.com/shareArticle?mini=true&url={link}&title={title}",
        "reddit": f"https://reddit.com/submit?url={link}&title={title}",
        "facebook": f"https://facebook.com/sharer/sharer.php?u={link}",
        "whatsapp": f"https://api.whatsapp.com/send?text={title}%20-%20{link}",
        "telegram": f"https://telegram.me/share/url?text={title}&url={link}",
        "ycombinator": f"https://news.ycombinator.com/submitlink?t={title}&u={link}",
    }
    return [
        ShareLink(name, _SHARE_LABELS[name], targets[name])
        for name in SHARE_BUTTONS
        if name in allowed
    ]


_HEADING = re.compile(r'<h([1-6]) id="([^"]+)">(.*?)</h\1>', re.S)


def anchored_headings(markup: str) -> str:
    """PaperMod's anchored headings on standalone pages: a # link shown on hover."""
    return _HEADING.sub(
        r'<h\1 id="\2">\3<a hidden class="anchor" aria-hidden="true" href="#\2">#</a></h\1>',
        markup,
    )
