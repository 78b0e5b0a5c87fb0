"""An author's raw HTML and Markdown payloads are neutralised: every payload of the corpus, and
Goldmark-style attribute lists, renders without anything that runs in the body, a preview, a
heading, a table cell, a footnote and a list or quote, and written as code (fenced, inline or
`\\texttt`) it is shown as escaped text only."""

from __future__ import annotations

import pytest

from .xss import BODY_PAYLOADS, assert_safe

# Goldmark's attribute syntax, which Hugo applies to the block before it and to
# headings: its values pass through the allowlist like any other attribute.
ATTRIBUTE_PAYLOADS = [
    ("block-attr-onclick", 'Para\n{onclick="alert(1)" .x}'),
    ("block-attr-style", 'Para\n{style="background:url(javascript:alert(1))"}'),
    ("block-attr-href", '> quote\n{href="javascript:alert(1)" src="javascript:alert(1)"}'),
    ("heading-attr-handler", '## Title {#t onmouseover="alert(1)"}'),
    ("table-attr-handler", '| a |\n|---|\n| b |\n{.table-academic onclick="alert(1)"}'),
]

CONTEXTS = {
    "body": lambda p: p,
    "preview": lambda p: f"Intro.\n\n{{{{< preview >}}}}\n{p}\n{{{{< /preview >}}}}\n\nAfter.",
    "heading": lambda p: "## Title " + p.replace("\n", " "),
    "table-cell": lambda p: "| a | b |\n|---|---|\n| " + p.replace("\n", " ") + " | y |",
    "footnote": lambda p: "Text[^1].\n\n[^1]: " + p.replace("\n", " "),
    "list-quote": lambda p: "- item " + p.replace("\n", " ") + "\n\n> " + p.replace("\n", " "),
}


@pytest.mark.parametrize("context_name", list(CONTEXTS))
@pytest.mark.parametrize(
    "payload",
    [p for _, p in BODY_PAYLOADS + ATTRIBUTE_PAYLOADS],
    ids=[i for i, _ in BODY_PAYLOADS + ATTRIBUTE_PAYLOADS],
)
def test_body_payload_is_neutralised(context_name, payload):
    """An author's HTML/Markdown payload renders without anything that runs, in every context."""
    assert_safe(CONTEXTS[context_name](payload))


CODE_CONTEXTS = {
    "fence-python": lambda p: f"```python\n{p}\n```",
    "fence-plain": lambda p: f"```\n{p}\n```",
    "fence-html-tilde": lambda p: f"~~~html\n{p}\n~~~",
    "fence-unknown-lang": lambda p: f'```x" onmouseover="alert(1)\n{p}\n```',
    "inline-code": lambda p: "Use `" + p.replace("\n", " ") + "` here.",
    "texttt": lambda p: "\\texttt{" + p.replace("\n", " ").replace("{", "").replace("}", "") + "}",
}
_CODE_SAFE = [(i, p) for i, p in BODY_PAYLOADS if "`" not in p]


@pytest.mark.parametrize("context_name", list(CODE_CONTEXTS))
@pytest.mark.parametrize("payload", [p for _, p in _CODE_SAFE], ids=[i for i, _ in _CODE_SAFE])
def test_code_payload_stays_text(context_name, payload):
    """A payload written as code (fenced, inline, \\texttt) is shown as escaped text only."""
    assert_safe(CODE_CONTEXTS[context_name](payload))
