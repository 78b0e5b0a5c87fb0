"""The CommonMark spec's examples (npm `commonmark-spec`) and its HTML normalisation.

The spec's test runner compares HTML after normalising away what does not matter: attribute
order, entity spelling, whitespace between block tags, `<br />` against `<br>`. This module
does the same normalisation, written here, on the same rules.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser

from tests.conftest import ROOT

SPEC = ROOT / "node_modules" / "commonmark-spec" / "spec.txt"
_EXAMPLE = re.compile(r"^`{32} example\n([\s\S]*?)^\.\n([\s\S]*?)^`{32}$|^#{1,6} *(.*)$", re.M)
# Elements the normalisation trims whitespace around (the spec runner's list).
BLOCK_TAGS = frozenset(
    {
        "article", "header", "aside", "hgroup", "blockquote", "hr", "iframe", "body", "li",
        "map", "button", "object", "canvas", "ol", "caption", "output", "col", "p", "colgroup",
        "pre", "dd", "progress", "div", "section", "dl", "table", "td", "dt", "tbody", "embed",
        "textarea", "fieldset", "tfoot", "figcaption", "th", "figure", "thead", "footer", "tr",
        "form", "ul", "h1", "h2", "h3", "h4", "h5", "h6", "video", "script", "style",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Example:
    number: int
    section: str
    markdown: str
    html: str


def examples() -> list[Example]:
    """Every example of the spec, numbered as the spec numbers them; `→` is a tab."""
    text = SPEC.read_text(encoding="utf-8")
    text = re.sub(r"^<!-- END TESTS -->[\s\S]*", "", text, flags=re.M)
    found, section = [], ""
    for match in _EXAMPLE.finditer(text):
        if match.group(3) is not None:
            section = match.group(3)
            continue
        markdown, expected = (part.replace("\u2192", "\t") for part in match.group(1, 2))
        found.append(Example(len(found) + 1, section, markdown, expected))
    return found


class _Normaliser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.last = "start"  # "start", "blocktag" or "other"
        self.in_pre = 0

    def _strip_trailing_space(self):
        while self.out and not self.out[-1].strip():
            self.out.pop()
        if self.out:
            self.out[-1] = self.out[-1].rstrip()

    def handle_data(self, data):
        if not self.in_pre:
            data = re.sub(r"\s+", " ", data)
            if self.last in {"start", "blocktag"}:
                data = data.lstrip()
        self.out.append(html.escape(data, quote=False))
        if data:
            self.last = "other"

    def _tag(self, tag, attrs, close=""):
        parts = [tag]
        for name, value in sorted(attrs, key=lambda pair: pair[0]):
            parts.append(name if value is None else f'{name}="{html.escape(value)}"')
        return "<" + " ".join(parts) + close + ">"

    def handle_starttag(self, tag, attrs):
        if tag in BLOCK_TAGS:
            self._strip_trailing_space()
        if tag == "pre":
            self.in_pre += 1
        self.out.append(self._tag(tag, attrs))
        self.last = "blocktag" if tag in BLOCK_TAGS else "other"

    def handle_startendtag(self, tag, attrs):
        if tag in BLOCK_TAGS:
            self._strip_trailing_space()
        self.out.append(self._tag(tag, attrs))
        self.last = "blocktag" if tag in BLOCK_TAGS else "other"

    def handle_endtag(self, tag):
        if tag in BLOCK_TAGS:
            self._strip_trailing_space()
        if tag == "pre":
            self.in_pre = max(0, self.in_pre - 1)
        self.out.append(f"</{tag}>")
        self.last = "blocktag" if tag in BLOCK_TAGS else "other"

    def handle_comment(self, data):
        self.out.append(f"<!--{data}-->")

    def handle_decl(self, decl):
        self.out.append(f"<!{decl}>")

    def handle_pi(self, data):
        self.out.append(f"<?{data}>")

    def unknown_decl(self, data):
        self.out.append(f"<![{data}]>")


def normalise(markup: str) -> str:
    """HTML in the spec runner's normal form: equal for HTML that is equal to a reader."""
    parser = _Normaliser()
    parser.feed(markup)
    parser.close()
    return "".join(parser.out).strip()
