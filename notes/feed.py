"""The feed's arithmetic: pages, the numbered-pagination window, promotion placement.

Pure functions (no queries), following docs/theme.md#the-feed. Random draws are seeded: the theme
uses its build time, SciDraft its content generation, so a page looks the same on every
reload and is rearranged only when the site's content changes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


def seeded_index(text: str, modulo: int) -> int:
    """A stable draw in range(modulo): the first 8 hex digits of a hash of `text`."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()
    return int(digest[:8], 16) % modulo


def page_count(items: int, per_page: int) -> int:
    return max(1, -(-items // max(per_page, 1)))


@dataclass(frozen=True)
class PageLink:
    number: int | None  # None: a gap (…)
    current: bool = False


def pagination_window(current: int, last: int, radius: int = 2) -> list[PageLink]:
    """1, the last page and ±radius around the current one, with one gap (…) per hole."""
    if last <= 1:
        return []
    shown = {1, last} | set(range(max(1, current - radius), min(last, current + radius) + 1))
    links: list[PageLink] = []
    previous = 0
    for number in sorted(shown):
        if number - previous > 1:
            links.append(PageLink(None))
        links.append(PageLink(number, number == current))
        previous = number
    return links


def _positions(range_text: str, page_length: int, count: int) -> list[int]:
    """Candidate slots (1-based among the page's cards): the configured range, clamped to the
    page, then the slots right after it when the range is too small."""
    first, _, last = range_text.replace(" ", "").partition("-")
    low, high = int(first), int(last or first)
    low, high = min(low, high), max(low, high)
    high = min(high, page_length)
    low = max(1, min(low, high))
    slots = list(range(low, high + 1))
    after = high + 1
    while len(slots) < count and after <= page_length:
        slots.append(after)
        after += 1
    before = low - 1
    # A short page: the range and the slots after it cannot hold them all; use earlier ones.
    while len(slots) < count and before >= 1:
        slots.insert(0, before)
        before -= 1
    return slots


def place_promotions(
    *,
    promotions: list[str],
    page: int,
    notes_on_page: int,
    per_page: int,
    positions: str,
    seed: int,
) -> dict[int, str]:
    """Slot → promotion key for `page` (slots are 1-based among notes + promotions).

    The draw walks page by page from the first, so each page knows what the previous one
    showed: a promotion never appears twice on a page, and not on consecutive pages unless the
    pool is too small (n < 2k).
    """
    count = min(per_page, len(promotions))
    if count <= 0 or notes_on_page <= 0:
        return {}
    previous: list[str] = []
    chosen: list[str] = []
    for number in range(1, page + 1):
        pool = [key for key in promotions if len(promotions) < 2 * count or key not in previous]
        chosen = []
        for index in range(count):
            candidates = [key for key in pool if key not in chosen]
            if not candidates:
                break
            chosen.append(candidates[seeded_index(f"{seed}-{number}-{index}", len(candidates))])
        previous = chosen
    page_length = notes_on_page + len(chosen)
    free = _positions(positions, page_length, len(chosen))
    placed: dict[int, str] = {}
    for index, key in enumerate(chosen):
        if not free:
            break
        slot = free.pop(seeded_index(f"{seed}-pos-{page}-{index}", len(free)))
        placed[slot] = key
    return placed


def interleave(notes: list, promotions: dict[int, object]) -> list[tuple[str, object]]:
    """Cards in order: ("note", note) and ("promotion", note) at their slots."""
    cards: list[tuple[str, object]] = []
    remaining = list(notes)
    slot = 1
    while remaining or any(position >= slot for position in promotions):
        if slot in promotions:
            cards.append(("promotion", promotions[slot]))
        elif remaining:
            cards.append(("note", remaining.pop(0)))
        else:
            # A promotion slot past the notes (a short last page): keep it at the end.
            pending = sorted(position for position in promotions if position > slot)
            cards.extend(("promotion", promotions[position]) for position in pending)
            break
        slot += 1
    return cards


# Recommendations (docs/theme.md#the-note-page): each note has a stored place on a ring,
# `Note.draw_key`; a note page shows the regular notes that follow a point drawn from the seed
# and its slug, wrapping round. The pick is one indexed read of `count` rows, whatever the
# number of notes; ordering every candidate by a hash of the pair would read them all.
DRAW_KEYS = 2**31


def draw_key(slug: str) -> int:
    """A note's place on the recommendation ring: a stable hash of its slug."""
    return seeded_index(slug, DRAW_KEYS)


def recommendation_start(seed: int, slug: str) -> int:
    """Where on the ring `slug`'s recommendations start, for this seed."""
    return seeded_index(f"{seed}-{slug}", DRAW_KEYS)


def recommendation_count(count: int) -> int:
    """recommendationCount: 0 or less falls back to the theme's 3."""
    return count if count > 0 else 3
