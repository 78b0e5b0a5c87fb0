"""KaTeX on the server: formulas typeset, refused with KaTeX's own reason, bounded and cached."""

from __future__ import annotations

import pytest

from scidraft.markup import jsengine, v8pool


def test_bad_tex_raises_with_katexs_one_line_message():
    """KaTeX's reason reaches the author without the library's source attached."""
    with pytest.raises(jsengine.JSError) as caught:
        jsengine.render_tex("\\frac{1}{", display=False)
    assert caught.value.message.startswith("KaTeX parse error")
    assert "\n" not in caught.value.message and len(caught.value.message) < 300


def test_macro_bombs_are_stopped():
    """A \\def expansion bomb ends in an error, not a hung thread."""
    bomb = "\\def\\a{\\b\\b}\\def\\b{\\c\\c}\\def\\c{\\d\\d}\\def\\d{xx}" + "\\a" * 400
    with pytest.raises(jsengine.JSError, match="expansions"):
        jsengine.render_tex(bomb, display=False)


def test_formulas_are_cached_by_tex_display_and_version():
    """The same formula twice costs one KaTeX call; display mode is part of the key."""
    jsengine.tex_cache_clear()
    jsengine.render_tex("e^{i\\pi}+1=0", display=False)
    jsengine.render_tex("e^{i\\pi}+1=0", display=False)
    jsengine.render_tex("e^{i\\pi}+1=0", display=True)
    info = jsengine.tex_cache_info()
    assert (info.hits, info.misses) == (1, 2)


def test_a_formula_stopped_at_its_whole_time_limit_is_not_cached(monkeypatch):
    """A formula whose call ran out its whole time limit shows as an error, but the error is
    not kept: a busy machine, not the formula, may have stopped it, and the render's
    completion with more time (or the next render) typesets it."""
    jsengine.tex_cache_clear()
    monkeypatch.setattr(v8pool, "CALL_TIMEOUT_SECONDS", 1e-6)
    with pytest.raises(jsengine.JSTimedOut, match="longer than"):
        jsengine.render_tex("\\sum_{i=1}^{n} i^{42}", display=True)
    monkeypatch.setattr(v8pool, "CALL_TIMEOUT_SECONDS", 5.0)
    assert "katex" in jsengine.render_tex("\\sum_{i=1}^{n} i^{42}", display=True)
