"""Source lines on the editor preview's blocks (scidraft/markup/sourcelines.py): every
top-level block says the line it starts on; the published HTML is unchanged."""

from __future__ import annotations

import re

import pytest

from scidraft.markup import RenderContext, render
from scidraft.markup.sourcelines import LineMap, with_source_line

LINED = RenderContext(source_lines=True)
ATTRIBUTE = re.compile(r' data-source-line="\d+"')

SOURCE = """# Title

Para one
continues.

:::lemma[Shift]{#lem-a}
Inside $x^2$.

$$
a = b \\label{eq:x}
$$
:::

```python
print(1)
```

- a
- b

| a | b |
|---|---|
| 1 | 2 |
{.table-academic}

> quoted

Text $$y$$ and after.

---

::::theorem
:::proof
Nested.
:::
::::

Last paragraph.
"""


def _lines(html: str) -> list[tuple[str, int]]:
    return [
        (tag, int(line)) for tag, line in re.findall(r'<(\w+)[^>]*? data-source-line="(\d+)"', html)
    ]


def _line_of(text: str) -> int:
    return SOURCE.split("\n").index(text) + 1


def test_top_level_blocks_carry_the_line_they_start_on():
    """Headings, paragraphs, environments (and the blocks inside them), code, lists, tables,
    quotes, rules: each starts on the line it says, environments' extra lines mapped back."""
    found = _lines(render(SOURCE, LINED).html)
    expected = [
        ("h1", 1), ("p", 3), ("div", 6), ("p", 7), ("p", 9), ("div", 14), ("ul", 18),
        ("table", 21), ("blockquote", 26), ("p", 28), ("hr", 30),
        ("div", _line_of("::::theorem")), ("div", _line_of(":::proof")),
        ("p", _line_of("Nested.")), ("p", _line_of("Last paragraph.")),
    ]  # fmt: skip
    assert found == expected


def test_the_published_html_is_the_same_without_the_lines():
    """Only the attributes differ: the rendered HTML without source lines is byte for byte
    what a render that did not ask for them gives, and that has none."""
    plain = render(SOURCE).html
    assert "data-source-line" not in plain
    assert ATTRIBUTE.sub("", render(SOURCE, LINED).html) == plain


@pytest.mark.parametrize(
    "raw, kept",
    [
        ('<div data-source-line="7">x</div>', True),
        ('<div data-source-line="7 onclick=x">x</div>', False),
        ('<div data-source-line="javascript:x">x</div>', False),
    ],
)
def test_an_authors_attribute_is_digits_or_nothing(raw, kept):
    """Raw HTML may carry the attribute in the preview only as digits; never when published."""
    lined = render(f"Text.\n\n{raw}\n", LINED).html
    assert ('data-source-line="7"' in lined) is kept
    assert "onclick" not in lined and "javascript" not in lined
    assert "data-source-line" not in render(f"Text.\n\n{raw}\n").html


def test_line_map_maps_groups_and_the_lines_after_them():
    """A fence on line 3 written as three lines: those three say 3, later lines shift back."""
    lines = LineMap()
    lines.replaced(3, 3, 3)
    lines.replaced(8, 3, 6)
    assert [lines(n) for n in range(1, 13)] == [1, 2, 3, 3, 3, 4, 5, 6, 6, 6, 7, 8]


def test_with_source_line_marks_the_first_tag_once():
    assert with_source_line('<div class="x">a</div>', 4) == (
        '<div data-source-line="4" class="x">a</div>'
    )
    assert with_source_line('<pre data-source-line="2">', 4) == '<pre data-source-line="2">'
    assert with_source_line("</div>", 4) == "</div>"
    assert with_source_line("<p>a</p>", 0) == "<p>a</p>"
