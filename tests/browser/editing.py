"""Driving the note editor (CodeMirror over the body's textarea) from browser tests."""

from __future__ import annotations

BODY = ".editor-source .cm-content"
_API = "SciDraftBody.of(document.querySelector('textarea[name=body]'))"


def fill_body(page, text: str) -> None:
    """Replace the body's text as typing would (one input, as Playwright's fill does)."""
    page.locator(BODY).fill(text)


def body_text(page) -> str:
    return page.evaluate(f"() => {_API}.text()")


def place_cursor(page, offset: int) -> None:
    """Put the cursor at `offset` in the body and focus it."""
    page.evaluate(
        f"(at) => {{ const b = {_API};"
        " b.view.dispatch({selection: {anchor: at}}); b.focus(); }",
        offset,
    )


def body_has_focus(page) -> bool:
    return page.evaluate(f"() => {_API}.hasFocus()")


def selected_text(page) -> str:
    return page.evaluate(
        f"() => {{ const v = {_API}.view; const s = v.state.selection.main;"
        " return v.state.sliceDoc(s.from, s.to); }"
    )


def count_changes(page) -> None:
    """window.changes counts the body's change events (what preview and autosave listen to)."""
    page.evaluate(f"() => {{ window.changes = 0; {_API}.onChange(() => window.changes++); }}")
