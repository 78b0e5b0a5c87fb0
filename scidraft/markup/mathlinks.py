"""Links in math: `\\href`/`\\url` to safe schemes only, and `\\ref`/`\\eqref` to the note's labels.

KaTeX writes a link only when its trust function agrees (http, https and mailto, in
jsengine); a link to anything else is rewritten here first to its text, with a warning naming
it, so the reader sees the words and the author learns why they are not a link.

A `\\ref` in a formula is numbered like one in prose (fill), but the formula is typeset before
the note's labels are all known (an equation may cite one further down). It is typeset with a
marker in its place, `\\text{SDREF0FERDS}`, and fill replaces the marker with the reference's
link (and its plain text in the MathML, its source in the annotation). The marker's number is
the reference's position in its formula, so the cached formula is the same wherever it is.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

from .jsengine import LINK_SCHEMES
from .mathmacros import group_end
from .rendered import RenderWarning

_LINK = re.compile(r"\\(href|url)(?![A-Za-z])\s*\{")
_REF = re.compile(r"\\(ref|eqref)(?![A-Za-z])\s*\{([^{}\n]*)\}")
MARKER = re.compile(r"SDREF(\d+)FERDS")
_TEXT_ESCAPES = {
    "\\": "\\textbackslash{}",
    "{": "\\{",
    "}": "\\}",
    "#": "\\#",
    "$": "\\$",
    "%": "\\%",
    "&": "\\&",
    "_": "\\_",
    "^": "\\textasciicircum{}",
    "~": "\\textasciitilde{}",
}


def safe_url(url: str) -> bool:
    scheme = urlsplit(url.strip()).scheme.lower() if ":" in url else ""
    return scheme in LINK_SCHEMES


def _as_text(url: str) -> str:
    return "\\text{" + "".join(_TEXT_ESCAPES.get(char, char) for char in url) + "}"


def unsafe_links(tex: str, line: int, warnings: list[RenderWarning]) -> str:
    """`tex` with every `\\href`/`\\url` to another scheme (or none) turned into plain text."""
    if "\\href" not in tex and "\\url" not in tex:
        return tex
    out, cursor = [], 0
    for match in _LINK.finditer(tex):
        if match.start() < cursor:
            continue
        url_end = group_end(tex, match.end() - 1)
        if url_end < 0:
            continue  # KaTeX reports the missing brace
        url = tex[match.end() : url_end - 1]
        if safe_url(url):
            continue
        command = match.group(1)
        warnings.append(
            RenderWarning(
                line,
                "math-link",
                f"\\{command}{{{url}}}: links in math may only be http, https or mailto; "
                "shown as plain text",
            )
        )
        out.append(tex[cursor : match.start()])
        if command == "url":
            out.append(_as_text(url))
            cursor = url_end
            continue
        text_start = re.compile(r"\s*\{").match(tex, url_end)
        text_end = group_end(tex, text_start.end() - 1) if text_start else -1
        if text_end < 0:
            out.append(_as_text(url))
            cursor = url_end
            continue
        out.append("{" + tex[text_start.end() : text_end - 1] + "}")
        cursor = text_end
    out.append(tex[cursor:])
    return "".join(out)


def mark_references(tex: str) -> tuple[str, list[dict]]:
    """`tex` with each `\\ref{…}`/`\\eqref{…}` replaced by a marker, and the references
    ({"command", "keys", "source"}) in marker order."""
    if "ref" not in tex:
        return tex, []
    found: list[dict] = []

    def replace(match: re.Match) -> str:
        keys = [key.strip() for key in match.group(2).split(",") if key.strip()]
        if not keys:
            return match.group(0)
        found.append({"command": match.group(1), "keys": keys, "source": match.group(0)})
        return f"\\text{{SDREF{len(found) - 1}FERDS}}"

    return _REF.sub(replace, tex), found


_MATHML_END = '<span class="katex-html"'


def fill_references(markup: str, links: list[str], texts: list[str], sources: list[str]) -> str:
    """KaTeX's `markup` with the markers replaced: the link HTML where readers see it, the
    plain text in the MathML, the source in the TeX annotation."""
    split = markup.find(_MATHML_END)
    mathml, visible = (markup[:split], markup[split:]) if split >= 0 else ("", markup)

    def pick(values: list[str], escape: bool):
        def replace(match: re.Match) -> str:
            index = int(match.group(1))
            if index >= len(values):
                return match.group(0)
            return html.escape(values[index]) if escape else values[index]

        return replace

    mathml = re.sub(r"\\text\{SDREF(\d+)FERDS\}", pick(sources, True), mathml)
    mathml = MARKER.sub(pick(texts, True), mathml)
    return mathml + MARKER.sub(pick(links, False), visible)
