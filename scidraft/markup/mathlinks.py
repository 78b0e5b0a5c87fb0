"""Links in math: `\\href`/`\\url` to safe schemes only, and `\\ref`/`\\eqref` to the note's labels.

KaTeX writes a link only when its trust function agrees (http, https and mailto, in
jsengine); a link to anything else is rewritten here first to its text, with a warning naming
it, so the reader sees the words and the author learns why they are not a link.

A `\\ref` in a formula is numbered like one in prose (fill), but the formula is typeset before
the note's labels are all known (an equation may cite one further down). It is typeset with a
marker in its place, `\\text{SDREF0FERDS}`, and fill replaces the marker with the reference's
link (and its plain text in the MathML, its source in the annotation). The marker's number is
the reference's position in its formula, so the cached formula is the same wherever it is.

A macro whose body holds a `\\ref` (`\\newcommand{\\thm}[1]{\\text{Theorem }\\ref{#1}}`) is expanded
here, where the formula uses it, before the references are marked: KaTeX has no `\\ref` of its
own, and the label is only known once the macro's arguments are in place.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

from .jsengine import LINK_SCHEMES
from .mathmacros import CONTROL_SEQUENCE, Macros, Signature, group_end, signature
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


_REF_COMMAND = re.compile(r"\\(?:ref|eqref)(?![A-Za-z])")
_CONTROL_WORD_END = re.compile(r"\\[A-Za-z@]+$")
_PARAMETER = re.compile(r"#(#|[1-9])")
_OPTIONAL_ARGUMENT = re.compile(r"\s*\[([^\]]*)\]")
# Expansions of referring macros in one formula, and how much they may grow it: a macro
# that uses itself (\gdef\a{\ref{x}\a}) stops here, and the formula shows why (formulas).
MAX_REFERRING_EXPANSIONS = 200
MAX_EXPANDED_CHARS = 20_000


class ReferringTooDeep(ValueError):
    """A formula's macros that use \\ref expand past the bounds: `name` is the last one."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def _referring(macros: Macros) -> dict[str, Signature]:
    """The macros whose bodies use \\ref or \\eqref, directly or through other such macros:
    a walk back from the first along who uses whom, once per set of macros (linear in their
    size, so a long chain costs no more than many short ones)."""
    cached = macros.__dict__.get("_referring")
    if cached is not None:
        return cached
    found: dict[str, Signature] = {}
    if _REF_COMMAND.search(macros.text):
        simple = {}
        users: dict[str, list[str]] = {}
        for name, canonical in macros.definitions:
            parsed = signature(name, canonical)
            if parsed is None:
                continue
            simple[name] = parsed
            for used in parsed.uses:
                users.setdefault(used, []).append(name)
        waiting = [name for name, item in simple.items() if {"\\ref", "\\eqref"} & item.uses]
        while waiting:
            name = waiting.pop()
            if name in found:
                continue
            found[name] = simple[name]
            waiting.extend(users.get(name, ()))
    object.__setattr__(macros, "_referring", found)
    return found


def _take_argument(tex: str, position: int) -> tuple[str, int] | None:
    """An undelimited argument at `position`, as TeX reads one: a brace group without its
    braces, a control sequence or one character (spaces before it skipped)."""
    while position < len(tex) and tex[position] in " \t\n":
        position += 1
    if position >= len(tex) or tex[position] == "}":
        return None
    if tex[position] == "{":
        end = group_end(tex, position)
        return (tex[position + 1 : end - 1], end) if end > 0 else None
    control = CONTROL_SEQUENCE.match(tex, position)
    if control:
        return control.group(0), control.end()
    return tex[position], position + 1


def _joined(left: str, right: str) -> str:
    """`left` then `right`, with a space where a control word would otherwise run on into
    letters (TeX read them as separate tokens in the definition)."""
    if right[:1].isalpha() and _CONTROL_WORD_END.search(left):
        return left + " " + right
    return left + right


def _substitute(body: str, arguments: list[str]) -> str:
    out = ""
    cursor = 0
    for match in _PARAMETER.finditer(body):
        out = _joined(out, body[cursor : match.start()])
        if match.group(1) == "#":
            out = _joined(out, "#")
        elif int(match.group(1)) <= len(arguments):  # a higher one: KaTeX refused the definition
            out = _joined(out, arguments[int(match.group(1)) - 1])
        cursor = match.end()
    return _joined(out, body[cursor:])


def expand_referring_macros(tex: str, macros: Macros) -> str:
    """`tex` with each use of a macro whose body holds \\ref/\\eqref replaced by its body, the
    arguments in place, so that mark_references finds the references; other macros are left
    to KaTeX. Raises ReferringTooDeep past MAX_REFERRING_EXPANSIONS or MAX_EXPANDED_CHARS (a
    macro that uses itself)."""
    referring = _referring(macros) if macros.definitions else {}
    if not referring:
        return tex
    expansions, position, longest = 0, 0, len(tex) + MAX_EXPANDED_CHARS
    while True:
        match = CONTROL_SEQUENCE.search(tex, position)
        if match is None:
            return tex
        item = referring.get(match.group(0))
        if item is None:
            position = match.end()
            continue
        if expansions >= MAX_REFERRING_EXPANSIONS or len(tex) > longest:
            raise ReferringTooDeep(match.group(0))
        arguments, cursor = [], match.end()
        if item.default is not None:
            optional = _OPTIONAL_ARGUMENT.match(tex, cursor)
            if optional:
                arguments.append(optional.group(1))
                cursor = optional.end()
            else:
                arguments.append(item.default)
        while len(arguments) < item.count:
            taken = _take_argument(tex, cursor)
            if taken is None:
                break
            arguments.append(taken[0])
            cursor = taken[1]
        if len(arguments) < item.count:
            position = match.end()  # arguments missing: KaTeX says so
            continue
        expanded = _substitute(item.body, arguments)
        head = _joined(tex[: match.start()], expanded)
        tex = _joined(head, tex[cursor:])
        position = match.start()  # the expansion may use another referring macro
        expansions += 1


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
