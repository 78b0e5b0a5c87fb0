"""notes.presentation: which assets a page loads for the notes (or cards) on it."""

from __future__ import annotations

from types import SimpleNamespace

from notes.presentation import assets_for


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
