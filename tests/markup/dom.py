"""A tiny DOM built on html.parser, with a CSS-like `select` for structural assertions."""

from __future__ import annotations

import html as html_lib
import re
from html.parser import HTMLParser

VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}


class Element:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Element | None = None):
        self.tag = tag
        self.attrs = attrs
        self.parent = parent
        self.children: list[Element | str] = []

    @property
    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    @property
    def id(self) -> str | None:
        return self.attrs.get("id")

    def get(self, name: str, default=None):
        return self.attrs.get(name, default)

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    @property
    def elements(self) -> list[Element]:
        return [c for c in self.children if isinstance(c, Element)]

    def iter(self):
        for child in self.elements:
            yield child
            yield from child.iter()

    def ancestors(self):
        node = self.parent
        while node is not None and node.tag != "#root":
            yield node
            node = node.parent

    def select(self, selector: str) -> list[Element]:
        return select(self, selector)

    def select_one(self, selector: str) -> Element | None:
        found = select(self, selector)
        return found[0] if found else None

    def __repr__(self):
        return f"<{self.tag} {self.attrs}>"


class _Builder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {})
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs), self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Element(tag, dict(attrs), self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(markup: str) -> Element:
    builder = _Builder()
    builder.feed(markup)
    builder.close()
    return builder.root


_SIMPLE = re.compile(r"^(?P<tag>[\w*-]+)?(?P<rest>(?:[.#][\w:-]+|\[[^\]]+\])*)$")


def _matches(element: Element, simple: str) -> bool:
    match = _SIMPLE.match(simple)
    assert match, f"bad selector {simple!r}"
    tag = match.group("tag")
    if tag and tag != "*" and element.tag != tag:
        return False
    for part in re.findall(r"[.#][\w:-]+|\[[^\]]+\]", match.group("rest")):
        if part[0] == ".":
            if part[1:] not in element.classes:
                return False
        elif part[0] == "#":
            if element.id != part[1:]:
                return False
        else:
            name, _, value = part[1:-1].partition("=")
            if name not in element.attrs:
                return False
            if value and element.attrs[name] != value.strip("\"'"):
                return False
    return True


def select(root: Element, selector: str) -> list[Element]:
    """Descendant (` `) and child (`>`) combinators over tag.class#id[attr=value] parts."""
    tokens = selector.replace(">", " > ").split()
    current = [root]
    combinator = " "
    for token in tokens:
        if token == ">":
            combinator = ">"
            continue
        found: list[Element] = []
        seen: set[int] = set()
        for node in current:
            candidates = node.elements if combinator == ">" else list(node.iter())
            for candidate in candidates:
                if id(candidate) not in seen and _matches(candidate, token):
                    seen.add(id(candidate))
                    found.append(candidate)
        current = found
        combinator = " "
    return current


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
