"""HTML as the tests read it: lxml's parser and cssselect's selectors behind a small API.

`parse(markup)` gives a root (tag `#root`) holding the markup's top-level nodes, fragment or
whole page alike. `select(css)` is a browser's querySelectorAll: it finds the element's
descendants that the selector matches in the whole tree, so `menu.select("ul#menu > li")`
finds the menu's own items, and never the element itself.
"""

from __future__ import annotations

import html as html_lib
import re
from functools import lru_cache

import lxml.html
from cssselect import HTMLTranslator
from lxml import etree

ROOT = "#root"
_DOCUMENT = re.compile(r"\s*(<!--.*?-->\s*)*<(!doctype|html[\s>])", re.I | re.S)


@lru_cache(maxsize=512)
def _xpath(selector: str) -> etree.XPath:
    return etree.XPath(HTMLTranslator().css_to_xpath(selector, prefix="descendant-or-self::"))


class Element:
    """One element of the tree: the same node is always the same Element (`is` holds)."""

    def __init__(self, node: lxml.html.HtmlElement, root: lxml.html.HtmlElement, known: dict):
        self.node = node
        self._root = root
        self._known = known

    def _wrap(self, node) -> Element:
        if node not in self._known:
            self._known[node] = Element(node, self._root, self._known)
        return self._known[node]

    @property
    def tag(self) -> str:
        return ROOT if self.node is self._root else self.node.tag

    @property
    def attrs(self) -> dict[str, str]:
        return dict(self.node.attrib)

    @property
    def classes(self) -> list[str]:
        return (self.node.get("class") or "").split()

    @property
    def id(self) -> str | None:
        return self.node.get("id")

    def get(self, name: str, default=None):
        return self.node.get(name, default)

    @property
    def parent(self) -> Element | None:
        parent = self.node.getparent()
        return None if parent is None or self.node is self._root else self._wrap(parent)

    @property
    def children(self) -> list[Element | str]:
        """Text and elements in document order (comments left out, their tail text kept)."""
        found: list[Element | str] = [self.node.text] if self.node.text else []
        for child in self.node:
            if isinstance(child.tag, str):
                found.append(self._wrap(child))
            if child.tail:
                found.append(child.tail)
        return found

    @property
    def elements(self) -> list[Element]:
        return [self._wrap(child) for child in self.node if isinstance(child.tag, str)]

    @property
    def text(self) -> str:
        """All text inside, as written (comments left out)."""
        return "".join(self.node.xpath("descendant::text()"))

    raw_text = text

    @property
    def flat_text(self) -> str:
        """The text with every run of whitespace made one space, trimmed."""
        return normalise_space(self.text)

    def iter(self):
        for node in self.node.iterdescendants():
            if isinstance(node.tag, str):
                yield self._wrap(node)

    def ancestors(self):
        node = self.parent
        while node is not None and node.tag != ROOT:
            yield node
            node = node.parent

    def select(self, selector: str) -> list[Element]:
        matches = _xpath(selector)(self._root)
        if self.node is not self._root:
            inside = set(self.node.iterdescendants())
            matches = [node for node in matches if node in inside]
        return [self._wrap(node) for node in matches if node is not self._root]

    def select_one(self, selector: str) -> Element | None:
        found = self.select(selector)
        return found[0] if found else None

    def one(self, selector: str) -> Element:
        found = self.select(selector)
        assert len(found) == 1, f"{selector!r}: {len(found)} matches"
        return found[0]

    def has(self, selector: str) -> bool:
        return bool(self.select(selector))

    def __repr__(self):
        return f"<{self.tag} {self.attrs}>"


def parse(markup: str) -> Element:
    """A whole page (doctype or <html> first) keeps its <html>; anything else is a fragment."""
    root = lxml.html.Element("div")
    if _DOCUMENT.match(markup):
        root.append(lxml.html.document_fromstring(markup))
    elif markup.strip():
        parent = lxml.html.fragment_fromstring(markup, create_parent="div")
        root.text = parent.text
        root.extend(list(parent))
    known: dict = {}
    known[root] = Element(root, root, known)
    return known[root]


def tex_annotations(markup: str) -> list[str]:
    """The TeX KaTeX records in `<annotation encoding="application/x-tex">`, unescaped."""
    return [
        html_lib.unescape(value)
        for value in re.findall(
            r'<annotation encoding="application/x-tex">(.*?)</annotation>', markup, re.S
        )
    ]


def normalise_space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def visible_text(element: Element) -> str:
    """Text a reader sees: KaTeX's MathML copy (with its TeX annotation) left out."""
    parts = []
    for child in element.children:
        if isinstance(child, str):
            parts.append(child)
        elif "katex-mathml" not in child.classes and child.tag != "annotation":
            parts.append(visible_text(child))
    return "".join(parts)
