"""notes.presentation: which assets a page loads for the notes (or cards) on it, and reading
time as the theme computes it."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from notes.presentation import WORDS_PER_MINUTE, assets_for, reading_minutes
from tests.conftest import ROOT


def _note(**flags):
    return SimpleNamespace(render_flags=flags)


def test_cards_count_their_own_flags():
    """For cards, a note's card flags decide: its diagram behind the preview loads nothing."""
    note = _note(has_mermaid=True, card_has_mermaid=False, has_math=True, card_has_math=True)
    assert assets_for([note], cards=True) == {
        "math": True,
        "code": False,
        "algorithm": False,
        "mermaid": False,
    }
    assert assets_for([note])["mermaid"]


def test_a_render_without_card_flags_counts_the_whole_note():
    """A render stored before the engine recorded card flags falls back to the note's flags:
    one asset too many rather than a diagram left undrawn."""
    old = _note(has_mermaid=True, has_code=True)
    assets = assets_for([old], cards=True)
    assert assets["mermaid"] and assets["code"]
    assert not assets["math"]


def test_any_card_needing_an_asset_loads_it():
    """One card with a diagram among plain ones is enough; no note, no asset."""
    plain = _note(has_mermaid=False, card_has_mermaid=False)
    drawn = _note(has_mermaid=True, card_has_mermaid=True)
    assert assets_for([plain, drawn, plain], cards=True)["mermaid"]
    assert not any(assets_for([], cards=True).values())
    assert not any(assets_for([_note()]).values())


@pytest.mark.parametrize(
    ("words", "minutes"), [(0, 0), (1, 1), (213, 1), (214, 2), (300, 2), (426, 2), (427, 3)]
)
def test_reading_time_is_hugos(words, minutes):
    """Hugo's .ReadingTime: words at 213 a minute, rounded up (300 words read in 2 min)."""
    assert reading_minutes(words) == minutes


def test_the_editor_counts_reading_time_at_the_same_rate():
    """The editor's live reading time (static/js/editor-stats.js) uses the same rate."""
    script = (ROOT / "static/js/editor-stats.js").read_text()
    assert re.search(r"WORDS_PER_MINUTE = (\d+);", script).group(1) == str(WORDS_PER_MINUTE)
