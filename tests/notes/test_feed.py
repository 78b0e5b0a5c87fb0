"""The feed's arithmetic (notes/feed.py, docs/theme.md#the-feed, #the-note-page): pure functions, no
database."""

from __future__ import annotations

import pytest

from notes.feed import (
    DRAW_KEYS,
    draw_key,
    interleave,
    page_count,
    pagination_window,
    place_promotions,
    recommendation_count,
    recommendation_start,
    seeded_index,
)

PROMOS = ["promo-a", "promo-b", "promo-c", "promo-d", "promo-e", "promo-f"]


def _bar(links) -> str:
    """The pagination window as text: `1 … 5 6 [7] 8 9 … 13`."""
    return " ".join(
        "…" if link.number is None else f"[{link.number}]" if link.current else str(link.number)
        for link in links
    )


def _layouts(
    promotions, *, pages, per_page, notes_on_page=8, positions="3-5", seed=7
) -> list[dict[int, str]]:
    return [
        place_promotions(
            promotions=promotions,
            page=page,
            notes_on_page=notes_on_page,
            per_page=per_page,
            positions=positions,
            seed=seed,
        )
        for page in range(1, pages + 1)
    ]


# --- page_count and pagination_window -------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "per_page", "pages"),
    [(0, 8, 1), (1, 8, 1), (8, 8, 1), (9, 8, 2), (25, 8, 4), (64, 8, 8), (65, 8, 9), (3, 0, 3)],
)
def test_page_count(items, per_page, pages):
    """Pages needed for the items: at least one, rounding up, a zero page size treated as 1."""
    assert page_count(items, per_page) == pages


@pytest.mark.parametrize("last", [0, 1])
def test_one_page_has_no_pagination(last):
    """With a single page (or none) the numbered bar is hidden: no links at all."""
    assert pagination_window(1, last) == []


@pytest.mark.parametrize(
    ("current", "last", "expected"),
    [
        (1, 2, "[1] 2"),
        (2, 2, "1 [2]"),
        (2, 3, "1 [2] 3"),
        (3, 5, "1 2 [3] 4 5"),
        (1, 5, "[1] 2 3 … 5"),
        (5, 5, "1 … 3 4 [5]"),
        (4, 7, "1 2 3 [4] 5 6 7"),
        (4, 8, "1 2 3 [4] 5 6 … 8"),
        (1, 10, "[1] 2 3 … 10"),
        (10, 10, "1 … 8 9 [10]"),
        (5, 10, "1 … 3 4 [5] 6 7 … 10"),
        (4, 10, "1 2 3 [4] 5 6 … 10"),
        (6, 10, "1 … 4 5 [6] 7 8 … 10"),
        (7, 13, "1 … 5 6 [7] 8 9 … 13"),
        (4, 63, "1 2 3 [4] 5 6 … 63"),
        (60, 63, "1 … 58 59 [60] 61 62 63"),
    ],
)
def test_pagination_window(current, last, expected):
    """First, last and ±2 around the current page, one gap (…) per hole."""
    assert _bar(pagination_window(current, last)) == expected


def test_pagination_window_radius():
    """The window's radius is a parameter (±1 here)."""
    assert _bar(pagination_window(5, 10, radius=1)) == "1 … 4 [5] 6 … 10"


def test_pagination_window_invariants_for_many_pairs():
    """For every (current, last) up to 40 pages: ordered numbers, the first, the last, the
    whole ±2 window, exactly one current link, and a gap exactly where numbers skip."""
    for last in range(2, 41):
        for current in range(1, last + 1):
            links = pagination_window(current, last)
            numbers = [link.number for link in links if link.number is not None]
            assert numbers == sorted(set(numbers)), (current, last)
            assert numbers[0] == 1 and numbers[-1] == last
            window = set(range(max(1, current - 2), min(last, current + 2) + 1))
            assert window <= set(numbers)
            assert set(numbers) == window | {1, last}
            assert [link.number for link in links if link.current] == [current]
            assert sum(link.number is None for link in links) <= 2
            for before, link, after in zip(links, links[1:], links[2:], strict=False):
                if link.number is None:
                    assert before.number is not None and after.number is not None
                    assert after.number - before.number > 1
            for before, after in zip(links, links[1:], strict=False):
                if before.number is not None and after.number is not None:
                    assert after.number == before.number + 1, (current, last)


# --- place_promotions ---------------------------------------------------------------------


@pytest.mark.parametrize("count", range(1, 7))
@pytest.mark.parametrize("per_page", [1, 2, 3, 4])
def test_a_promotion_never_appears_twice_on_one_page(count, per_page):
    """Each page shows min(k, n) distinct promotions, whatever the pool and the seed."""
    for seed in range(15):
        for placed in _layouts(PROMOS[:count], pages=8, per_page=per_page, seed=seed):
            assert len(placed) == min(per_page, count)
            assert len(set(placed.values())) == len(placed)


@pytest.mark.parametrize(("count", "per_page"), [(2, 1), (3, 1), (4, 2), (5, 2), (6, 3), (6, 2)])
def test_no_promotion_on_consecutive_pages_when_the_pool_allows(count, per_page):
    """With n ≥ 2k, a page never repeats a promotion of the page before it."""
    for seed in range(25):
        layouts = _layouts(PROMOS[:count], pages=12, per_page=per_page, seed=seed)
        for before, after in zip(layouts, layouts[1:], strict=False):
            assert not set(before.values()) & set(after.values()), seed


def test_a_single_promotion_is_on_every_page():
    """With one promotion in the pool (n < 2k) it shows on every page."""
    for seed in range(10):
        layouts = _layouts(["only"], pages=10, per_page=1, seed=seed)
        assert all(list(placed.values()) == ["only"] for placed in layouts)


def test_two_promotions_one_per_page_alternate():
    """The demo case (n = 2, k = 1): the two promotions alternate page after page."""
    for seed in range(10):
        shown = [
            next(iter(placed.values()))
            for placed in _layouts(["winter-school", "grants"], pages=10, per_page=1, seed=seed)
        ]
        assert set(shown) == {"winter-school", "grants"}
        assert all(a != b for a, b in zip(shown, shown[1:], strict=False))


def test_small_pool_repeats_only_what_it_must():
    """With n < 2k every promotion may repeat, but each page still shows k distinct ones."""
    for seed in range(10):
        for placed in _layouts(PROMOS[:3], pages=6, per_page=2, seed=seed):
            assert len(set(placed.values())) == 2


def test_positions_stay_inside_the_configured_range():
    """Range "3-5" on a full page: every slot is 3, 4 or 5, and over many seeds all three occur."""
    seen = set()
    for seed in range(60):
        for placed in _layouts(PROMOS[:3], pages=4, per_page=1, seed=seed):
            assert set(placed) <= {3, 4, 5}
            seen |= set(placed)
    assert seen == {3, 4, 5}


def test_positions_with_two_promotions_in_a_range():
    """Two promotions in "3-5" take two different slots of the range."""
    for seed in range(30):
        for placed in _layouts(PROMOS, pages=5, per_page=2, seed=seed):
            assert len(placed) == 2 and set(placed) <= {3, 4, 5}


@pytest.mark.parametrize("notes_on_page", [1, 2, 3])
def test_positions_are_clamped_to_a_short_page(notes_on_page):
    """On a short last page the range is clamped: the slot never lies past the page's cards."""
    for seed in range(30):
        placed = place_promotions(
            promotions=PROMOS[:2],
            page=3,
            notes_on_page=notes_on_page,
            per_page=1,
            positions="3-5",
            seed=seed,
        )
        (slot,) = placed
        assert 1 <= slot <= notes_on_page + 1
        assert slot == min(3, notes_on_page + 1) or 3 <= slot <= notes_on_page + 1


def test_a_single_position():
    """Position "4" puts the one promotion in slot 4 on every page."""
    for seed in range(20):
        for placed in _layouts(PROMOS[:2], pages=5, per_page=1, positions="4", seed=seed):
            assert list(placed) == [4]


@pytest.mark.parametrize(
    ("positions", "per_page", "slots"),
    [("4", 2, {4, 5}), ("4", 3, {4, 5, 6}), ("3-4", 3, {3, 4, 5}), ("2-2", 2, {2, 3})],
)
def test_a_range_too_small_spills_right_after_it(positions, per_page, slots):
    """More promotions than the range holds: the extra ones take the slots right after it."""
    for seed in range(20):
        for placed in _layouts(PROMOS, pages=4, per_page=per_page, positions=positions, seed=seed):
            assert set(placed) == slots


def test_positions_with_spaces_and_reversed_bounds():
    """The text " 5 - 3 " reads as the range 3-5."""
    for seed in range(20):
        for placed in _layouts(PROMOS[:2], pages=3, per_page=1, positions=" 5 - 3 ", seed=seed):
            assert set(placed) <= {3, 4, 5}


def test_slots_lie_within_the_page():
    """Every page, short ones included, gets its k promotions, each in a slot between 1 and the
    page's card count (notes + promotions)."""
    for notes_on_page in range(1, 10):
        for per_page in (1, 2, 3):
            for seed in range(8):
                placed = place_promotions(
                    promotions=PROMOS,
                    page=2,
                    notes_on_page=notes_on_page,
                    per_page=per_page,
                    positions="3-5",
                    seed=seed,
                )
                assert len(placed) == per_page, (notes_on_page, per_page, seed, placed)
                assert all(1 <= slot <= notes_on_page + len(placed) for slot in placed)


def test_no_promotions_when_disabled_or_empty():
    """k = 0, an empty pool or a page without notes: nothing is placed."""
    common = {"page": 1, "positions": "3-5", "seed": 1}
    assert place_promotions(promotions=PROMOS, notes_on_page=8, per_page=0, **common) == {}
    assert place_promotions(promotions=[], notes_on_page=8, per_page=1, **common) == {}
    assert place_promotions(promotions=PROMOS, notes_on_page=0, per_page=1, **common) == {}


def test_placement_is_stable_for_a_seed():
    """The same seed gives the same page every time (a reload changes nothing)."""
    first = _layouts(PROMOS[:4], pages=10, per_page=1, seed=1234)
    assert _layouts(PROMOS[:4], pages=10, per_page=1, seed=1234) == first


def test_placement_changes_with_the_seed():
    """Another seed (a content change) rearranges the pages."""
    first = _layouts(PROMOS[:4], pages=10, per_page=1, seed=1234)
    assert _layouts(PROMOS[:4], pages=10, per_page=1, seed=1235) != first
    layouts = {repr(_layouts(PROMOS[:4], pages=10, per_page=1, seed=seed)) for seed in range(10)}
    assert len(layouts) > 5


def test_a_page_is_computed_from_the_walk_alone():
    """Page p is the same whether or not other pages were asked for first."""
    walked = _layouts(PROMOS[:5], pages=9, per_page=2, seed=99)
    for page in (9, 4, 1, 7):
        alone = place_promotions(
            promotions=PROMOS[:5], page=page, notes_on_page=8, per_page=2,
            positions="3-5", seed=99,
        )  # fmt: skip
        assert alone == walked[page - 1]


# --- interleave ---------------------------------------------------------------------------


def test_interleave_puts_promotions_at_their_slots():
    """Slots count notes and promotions together, from 1."""
    cards = interleave(["a", "b", "c", "d"], {2: "P"})
    assert cards == [("note", "a"), ("promotion", "P"), ("note", "b"), ("note", "c"),
                     ("note", "d")]  # fmt: skip


def test_interleave_several_promotions():
    """Several promotions, the first in slot 1."""
    cards = interleave(["a", "b", "c"], {1: "P", 3: "Q"})
    assert [item for _, item in cards] == ["P", "a", "Q", "b", "c"]


def test_interleave_without_promotions():
    """No promotions: the notes in order."""
    assert interleave(["a", "b"], {}) == [("note", "a"), ("note", "b")]
    assert interleave([], {}) == []


def test_interleave_keeps_slots_past_the_notes_at_the_end():
    """A slot past a short page's notes still shows its promotion, after the notes, in order."""
    assert [item for _, item in interleave(["a"], {3: "P"})] == ["a", "P"]
    assert [item for _, item in interleave(["a"], {4: "Q", 3: "P"})] == ["a", "P", "Q"]


def test_interleave_keeps_every_card():
    """Nothing is lost or duplicated: every note and promotion appears once."""
    notes = [f"n{i}" for i in range(8)]
    for seed in range(20):
        placed = place_promotions(
            promotions=PROMOS, page=1, notes_on_page=8, per_page=3, positions="3-5", seed=seed
        )
        cards = interleave(notes, placed)
        assert [item for kind, item in cards if kind == "note"] == notes
        assert sorted(item for kind, item in cards if kind == "promotion") == sorted(
            placed.values()
        )
        for slot, key in placed.items():
            assert cards[slot - 1] == ("promotion", key)


# --- The recommendation ring and seeded_index ------------------------------------------------


def test_draw_key_is_a_stable_hash_of_the_slug_on_the_ring():
    """A note's place is the same for the same slug, within the ring, and spread out."""
    keys = [draw_key(f"note-{index:02d}") for index in range(200)]
    assert keys == [draw_key(f"note-{index:02d}") for index in range(200)]
    assert all(0 <= key < DRAW_KEYS for key in keys)
    assert len(set(keys)) == 200
    # Spread over the ring: every eighth of it holds some.
    assert {key * 8 // DRAW_KEYS for key in keys} == set(range(8))


def test_recommendation_start_differs_per_note_and_per_seed():
    """Another note or another generation starts the draw elsewhere on the ring."""
    assert recommendation_start(5, "this-note") == recommendation_start(5, "this-note")
    assert len({recommendation_start(5, f"note-{i}") for i in range(10)}) == 10
    assert len({recommendation_start(seed, "this-note") for seed in range(10)}) == 10
    assert all(0 <= recommendation_start(seed, "x") < DRAW_KEYS for seed in range(50))


@pytest.mark.parametrize(("count", "size"), [(3, 3), (5, 5), (0, 3), (-2, 3), (50, 50)])
def test_recommendation_count(count, size):
    """recommendationCount items; 0 or invalid falls back to 3."""
    assert recommendation_count(count) == size


def test_seeded_index_is_stable_and_in_range():
    """The draw is in range(modulo) and the same for the same text."""
    for modulo in (1, 2, 3, 7, 100):
        for text in ("a", "1-2-0", "seed-pos-3-1"):
            value = seeded_index(text, modulo)
            assert 0 <= value < modulo
            assert seeded_index(text, modulo) == value
    assert len({seeded_index(f"7-{page}-0", 1000) for page in range(50)}) > 40
