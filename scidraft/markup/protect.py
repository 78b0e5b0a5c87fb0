"""Stage 2, protect: code and math are put in the stash before Markdown can corrupt them.

Code goes first (fences, inline spans), so that shortcodes, math and `\\cite` written inside
code examples stay literal. Math follows in all four delimiters and the amsmath display
environments; Markdown never sees `\\\\`, `\\|`, `_`, `*`, `&` or `<` inside a formula.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from markdown_it.common.html_re import HTML_TAG_RE
from markdown_it.rules_inline.autolink import AUTOLINK_RE, EMAIL_RE

from scidraft.bounds import input_path

from . import jsengine, limits, mathlinks, mathmacros
from .rendered import RenderWarning
from .stash import OPEN, LineIndex, Stash

# --- Code --------------------------------------------------------------------------------------

_FENCE_OPEN = re.compile(r"(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*?)[ \t]*$")
# A container marker a fence may follow on its line: a quote's `>` or a list item's marker.
_CONTAINER = re.compile(r"[ \t]{0,3}(?:(?P<quote>>)[ \t]?|(?P<item>[-*+]|\d{1,9}[.)])[ \t]+)")
# A run of backticks not preceded by a backslash or another backtick, its content, and a run
# of the same length. The lookbehind comes after the first backtick (and looks back two
# characters) so that the regex starts with a literal, which the regex engine searches for
# quickly instead of trying the lookbehind at every position of the body.
_INLINE_CODE = re.compile(r"(`(?<![\\`]`)`*)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


@dataclass
class Fence:
    indent: str
    info: str
    code: str
    line: int  # of the opening fence
    original: str  # the whole fence, as written
    closed: bool
    # What precedes the fence on its first line (indentation, a quote's `>`, a list marker),
    # and what keeps each further line in the same container (`>`, the item's indentation).
    prefix: str = ""
    continuation: str = ""


@dataclass
class CodeState:
    fences: list[Fence] = field(default_factory=list)


def _containers(line: str) -> tuple[int, list[tuple[str, int]]]:
    """Where the container markers at the start of `line` end, and each one: ("quote", 0)
    or ("item", the columns its content is indented by)."""
    position, found = 0, []
    while match := _CONTAINER.match(line, position):
        if match.group("quote"):
            found.append(("quote", 0))
        else:
            found.append(("item", len(line[position : match.end()].expandtabs(4))))
        position = match.end()
    return position, found


_QUOTE_MARK = re.compile(r"[ \t]{0,3}>[ \t]?")


def _inside(line: str, containers: list[tuple[str, int]]) -> str | None:
    """`line` without the markers and indentation of `containers`, or None when the line is
    outside them (a quote without its `>`, a list item's line indented less)."""
    position = 0
    for kind, width in containers:
        if kind == "quote":
            match = _QUOTE_MARK.match(line, position)
            if match is None:
                return None
            position = match.end()
        elif line[position:].strip():
            spaces = len(line) - len(line[position:].lstrip(" "))
            if spaces - position < width:
                return None
            position += width
    return line[position:]


def _could_open(line: str) -> bool:
    # Only a line with a fence after its indentation, or after container markers, can open
    # one: the common case is decided without a regex.
    stripped = line.lstrip(" \t")
    if stripped.startswith(("```", "~~~")):
        return True
    return bool(stripped) and stripped[0] in ">-*+0123456789" and ("```" in line or "~~~" in line)


def find_fences(text: str) -> list[tuple[int, int, Fence]]:
    """Fenced code blocks as (start offset, end offset, fence), CommonMark-style: at any
    indentation, and inside block quotes and after a list item's marker, where the fence ends
    with its container if it is not closed before."""
    found = []
    lines = text.splitlines(keepends=True)
    offset, index = 0, 0
    offsets = []
    for line in lines:
        offsets.append(offset)
        offset += len(line)
    offsets.append(offset)
    while index < len(lines):
        if len(found) % 1000 == 999 and limits.expired():
            break  # the rest stays as written: Markdown's fallback shows it escaped
        if not _could_open(lines[index]):
            index += 1  # the common case, without the regex
            continue
        first = lines[index].rstrip("\n")
        start, containers = _containers(first)
        match = _FENCE_OPEN.match(first, start)
        if not match and containers:
            start, containers = 0, []
            match = _FENCE_OPEN.match(first)
        if not match or (match.group("fence")[0] == "`" and "`" in match.group("info")):
            index += 1
            continue
        indent, fence = match.group("indent"), match.group("fence")
        # A closing fence is indented at most three columns more than the opening one.
        close = re.compile(
            rf"^[ \t]{{0,{len(indent.expandtabs(4)) + 3}}}{re.escape(fence[0])}{{{len(fence)},}}"
            r"[ \t]*$"
        )
        end = index + 1
        body_lines = []
        ended_with_container = False
        while end < len(lines):
            inner = _inside(lines[end].rstrip("\n"), containers) if containers else None
            if containers and inner is None:
                ended_with_container = True
                break
            content = lines[end] if not containers else inner + "\n"
            if close.match(content.rstrip("\n")):
                break
            body_lines.append(content)
            end += 1
        closed = end < len(lines) and not ended_with_container
        # Content lines lose the opening fence's indentation (a fence inside a list item).
        code = "".join(
            line[len(indent) :] if line.startswith(indent) else line.lstrip(" \t")
            for line in body_lines
        )
        stop = end + 1 if closed else end
        start_offset, end_offset = offsets[index], offsets[stop]
        original = text[start_offset:end_offset]
        if original.endswith("\n"):
            end_offset -= 1
            original = original[:-1]
        prefix = first[: match.start("fence")]
        continuation = "".join(
            "> " if kind == "quote" else " " * width for kind, width in containers
        )
        found.append(
            (
                start_offset,
                end_offset,
                Fence(
                    indent,
                    match.group("info"),
                    code.rstrip("\n"),
                    index + 1,
                    original,
                    closed or ended_with_container,
                    prefix,
                    continuation + indent,
                ),
            )
        )
        index = stop
    return found


# A line that ends a paragraph (CommonMark 4.8: a heading, quote, list item, fence, rule or
# setext underline can interrupt one): a code span cannot run across it.
_ENDS_PARAGRAPH = re.compile(
    r"[ ]{0,3}(?:#{1,6}(?:[ \t]|$)|>|[-*+][ \t]+\S|1[.)][ \t]+\S|`{3,}|~{3,}"
    r"|(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|=+[ \t]*|-+[ \t]*|(?:-[ \t]*){3,})$)"
)


_TAG_REACH = 2_000


def plain_code_span(text: str, match: re.Match) -> bool:
    """Whether a backtick pair found in `text` is a code span for CommonMark too: not one
    whose lines cross the end of a paragraph (block structure comes first, 6.1), nor one that
    opens inside a raw HTML tag or an autolink, which come first by starting first."""
    content = match.group(0)
    if "\n" in content:
        for line in content.split("\n")[1:]:
            if _ENDS_PARAGRAPH.match(line):
                return False
    start = match.start()
    # A tag or an autolink is short: looking further for its `<` and `>` would make a body of
    # 2 MB of code spans on one line quadratic.
    window = max(0, start - _TAG_REACH)
    line_start = text.rfind("\n", window, start) + 1 or window
    opening = text.rfind("<", line_start, start)
    if opening < 0 or text.find(">", opening, start) >= 0:
        return True
    closing = text.find(">", start, start + _TAG_REACH)
    if closing < 0:
        return True
    candidate = text[opening : closing + 1]
    inside = candidate[1:-1]
    tag = HTML_TAG_RE.match(candidate)
    if tag is not None and tag.end() == len(candidate):
        return False
    return not (AUTOLINK_RE.search(inside) or EMAIL_RE.search(inside))


def mask_code(text: str) -> str:
    """`text` with code blanked out, same length and line breaks: for scans that need offsets."""

    def blank(chunk: str) -> str:
        return "\n".join(" " * len(line) for line in chunk.split("\n"))

    pieces, cursor = [], 0
    for start, end, _ in find_fences(text):
        pieces += [text[cursor:start], blank(text[start:end])]
        cursor = end
    pieces.append(text[cursor:])
    return _INLINE_CODE.sub(lambda match: blank(match.group(0)), "".join(pieces))


# --- Math --------------------------------------------------------------------------------------

# amsmath environments, and what KaTeX renders each as. Numbering follows the theme's MathJax
# (no automatic numbers); a \label gives its row a number, via \tag.
_MATH_ENVIRONMENTS = {
    "equation": "equation*",
    "equation*": "equation*",
    "align": "align*",
    "align*": "align*",
    "gather": "gather*",
    "gather*": "gather*",
    "alignat": "alignat*",
    "alignat*": "alignat*",
    "flalign": "align*",
    "flalign*": "align*",
    "multline": "gather*",  # KaTeX has no multline; gather* keeps every line
    "multline*": "gather*",
    "eqnarray": "array",
    "eqnarray*": "array",
    "CD": "CD",  # amscd's commutative diagrams, which KaTeX draws in display mode
}
_ROWED = {"align*", "gather*", "alignat*"}
_BEGIN = re.compile(r"\\begin\{(" + "|".join(re.escape(k) for k in _MATH_ENVIRONMENTS) + r")\}")
_END = re.compile(r"\\end\{(" + "|".join(re.escape(k) for k in _MATH_ENVIRONMENTS) + r")\}")
_LABEL = re.compile(r"\\label\{([^{}]*)\}")
_NONUMBER = re.compile(r"\\(?:nonumber|notag)\b")
_TAG = re.compile(r"\\tag\*?\s*\{([^{}]*)\}")
_REQUIRE = re.compile(r"\\require\s*\{([^{}]*)\}")
# A `%` after an even number of backslashes (none included) starts a comment.
_COMMENT = re.compile(r"(?<!\\)((?:\\\\)*)%[^\n]*")


@dataclass
class MathState:
    equation_count: int = 0
    labels: dict[str, dict] = field(default_factory=dict)
    count: int = 0
    stopped: bool = False  # the time budget ran out: the rest stays source
    # The math macros in force: the preambles' (site, note), then each formula's definitions.
    macros: mathmacros.Macros = mathmacros.NONE


def equation_anchor(label: str) -> str:
    return re.sub(r"[^\w-]+", "-", label).strip("-") or "eq"


def _split_rows(body: str) -> list[str]:
    """Split at top-level `\\\\` (not inside braces)."""
    rows, depth, start, index = [], 0, 0, 0
    while index < len(body):
        char = body[index]
        if char == "\\" and body.startswith("\\\\", index) and depth == 0:
            rows.append(body[start:index])
            index += 2
            start = index
            continue
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        index += 1
    rows.append(body[start:])
    return rows


def _without_comments(tex: str) -> str:
    """TeX with its `%` comments taken out (an escaped `\\%` stays): a `\\label` in a comment
    labels nothing, and a tag added after a row must not land inside one."""
    return _COMMENT.sub(r"\1", tex) if "%" in tex else tex


def _number_labels(tex: str, state: MathState, line: int, warnings: list) -> tuple[str, list[str]]:
    """Replace `\\label{x}` with `\\tag{N}`, row by row; returns the TeX and the anchors. A
    row the author tagged (`\\tag{A}`) keeps its tag, which its label then prints, and takes
    no number, as in amsmath."""
    anchors: list[str] = []
    if "\\label" in tex:
        tex = _without_comments(tex)

    def assign(label: str, tagged: str | None = None) -> str:
        if tagged is None:
            state.equation_count += 1
        number = str(state.equation_count) if tagged is None else tagged
        if label in state.labels:
            warnings.append(
                RenderWarning(line, "duplicate-label", f"the label {label} is defined twice")
            )
        else:
            anchor = equation_anchor(label)
            state.labels[label] = {
                "kind": "equation",
                "number": number,
                "text": f"({number})",
                "anchor": anchor,
            }
            anchors.append(anchor)
        return number

    stripped = tex.strip()
    environment = _BEGIN.match(stripped)
    end = f"\\end{{{environment.group(1)}}}" if environment else ""
    if environment and _MATH_ENVIRONMENTS[environment.group(1)] in _ROWED and end in stripped:
        # Rows are the body between \begin and \end: a tag must stay inside its row.
        body_end = stripped.rindex(end)
        rows = []
        for row in _split_rows(stripped[environment.end() : body_end]):
            labels = _LABEL.findall(row)
            row = _LABEL.sub("", row)
            tagged = _TAG.search(row)
            if labels and tagged:
                assign(labels[0], tagged.group(1).strip())
            elif labels and not _NONUMBER.search(row):
                number = assign(labels[0])
                row = row.rstrip() + f" \\tag{{{number}}}"
            rows.append(row)
        body = "\\\\".join(rows)
        return stripped[: environment.end()] + body + stripped[body_end:], anchors
    labels = _LABEL.findall(tex)
    tex = _LABEL.sub("", tex)
    tagged = _TAG.search(tex)
    if labels and tagged:
        assign(labels[0], tagged.group(1).strip())
    elif labels:
        tex = tex.rstrip() + f" \\tag{{{assign(labels[0])}}}"
    return tex, anchors


def _translate_environments(tex: str) -> str:
    def begin(match: re.Match) -> str:
        target = _MATH_ENVIRONMENTS[match.group(1)]
        return "\\begin{array}{rcl}" if target == "array" else f"\\begin{{{target}}}"

    def end(match: re.Match) -> str:
        target = _MATH_ENVIRONMENTS[match.group(1)]
        return f"\\end{{{target}}}"

    tex = _BEGIN.sub(begin, tex)
    return _END.sub(end, tex)


def math_error_html(tex: str, message: str, *, display: bool = False) -> str:
    """A formula KaTeX refused, as the reader sees it: its TeX as written, the reason on hover."""
    css = "math-error math-error-display" if display else "math-error"
    return (
        f'<span class="{css}" title="{html.escape(message)}"><code>{html.escape(tex)}</code></span>'
    )


@input_path("math-macros")
def preamble_macros(
    preambles: tuple[mathmacros.Preamble, ...], warnings: list[RenderWarning]
) -> mathmacros.Macros:
    """The macros of the site's and the note's preambles, in that order (the note's win). What
    is not a definition, or that KaTeX refuses, is left out with a warning on line 1 naming the
    preamble and its line."""
    macros = mathmacros.NONE
    for preamble in preambles:
        tex = preamble.tex
        if not tex.strip():
            continue
        if len(tex) > mathmacros.MAX_PREAMBLE_CHARS:
            warnings.append(
                RenderWarning(
                    1,
                    "math-macro",
                    f"{preamble.where} are {len(tex):,} characters, over the limit of "
                    f"{mathmacros.MAX_PREAMBLE_CHARS:,}: not used",
                )
            )
            continue
        tex = _COMMENT.sub(lambda match: match.group(1).ljust(len(match.group(0))), tex)
        if "\\require" in tex:
            tex = _without_requires(tex, 1, warnings, where=f"{preamble.where}: ")
        lines = LineIndex(tex)
        definitions = _linked_safely(mathmacros.find_definitions(tex), 1, warnings)
        rest = mathmacros.leftover(tex, definitions)
        if rest:
            where = tex.find(rest.split()[0])
            warnings.append(
                RenderWarning(
                    1,
                    "math-macro",
                    f"{preamble.where}, line {lines.line(max(where, 0))}: only definitions "
                    f"(\\newcommand, \\DeclareMathOperator, \\def) belong there; "
                    f"ignored: {rest[:60]}",
                )
            )
        admitted = mathmacros.admit(macros, definitions, 1, warnings)
        candidate = macros.plus(admitted)
        if not jsengine.check_macros(candidate):
            macros = candidate
            continue
        for definition in definitions:  # one by one, to name the one KaTeX refuses
            if (definition.name, definition.tex) not in admitted:
                continue
            candidate = macros.plus([(definition.name, definition.tex)])
            problem = jsengine.check_macros(candidate)
            if problem:
                warnings.append(
                    RenderWarning(
                        1,
                        "math-macro",
                        f"{preamble.where}, line {lines.line(definition.start)}: "
                        f"{definition.label}: {problem}",
                    )
                )
            else:
                macros = candidate
    return macros


def _linked_safely(
    definitions: list[mathmacros.Definition], line: int, warnings: list[RenderWarning]
) -> list[mathmacros.Definition]:
    """Links in a macro's body follow the rule of links in formulas (mathlinks)."""
    for definition in definitions:
        definition.tex = mathlinks.unsafe_links(definition.tex, line, warnings)
    return definitions


def preamble_problems(tex: str, where: str = "the math macros") -> list[str]:
    """Why a preamble would not be used as written (a form's validation): [] when it would."""
    warnings: list[RenderWarning] = []
    preamble_macros((mathmacros.Preamble(where, tex),), warnings)
    # An ignored \require is a habit, not a problem: the preamble is used as written.
    return [warning.message for warning in warnings if warning.code != "math-require"]


def _define(
    tex: str, line: int, state: MathState, warnings: list[RenderWarning]
) -> tuple[str, list[mathmacros.Definition]]:
    """Take the formula's definitions out of `tex` into `state.macros`: they apply to it and
    to every later formula, as in MathJax. Returns the TeX left and the definitions added."""
    definitions = _linked_safely(mathmacros.find_definitions(tex), line, warnings)
    if not definitions:
        return tex, []
    state.macros = state.macros.plus(mathmacros.admit(state.macros, definitions, line, warnings))
    return mathmacros.without(tex, definitions), definitions


def _katex(
    tex: str,
    display: bool,
    state: MathState,
    before: mathmacros.Macros,
    defined: list[mathmacros.Definition],
    line: int,
    warnings: list[RenderWarning],
) -> str:
    """KaTeX's HTML for `tex` after the macros in force. Definitions this formula made that
    KaTeX refuses are reported, and undone: the formula and the later ones go without them."""
    try:
        return jsengine.render_tex(tex, display=display, macros=state.macros)
    except jsengine.MacrosRefused as error:
        names = ", ".join(item.label for item in defined)
        warnings.append(RenderWarning(line, "math-macro", f"{names}: {error.message}"))
        state.macros = before
        return jsengine.render_tex(tex, display=display, macros=before)


def _expand_referring(tex: str, macros: mathmacros.Macros) -> str:
    """mathlinks.expand_referring_macros, its bound reported as KaTeX's errors are."""
    try:
        return mathlinks.expand_referring_macros(tex, macros)
    except mathlinks.ReferringTooDeep as error:
        raise jsengine.JSError(
            f"{error.name} uses \\ref and expands too often (more than "
            f"{mathlinks.MAX_REFERRING_EXPANSIONS} times, or by more than "
            f"{mathlinks.MAX_EXPANDED_CHARS // 1000} KB): is it recursive?"
        ) from None


def _without_requires(
    tex: str, line: int, warnings: list[RenderWarning], *, where: str = ""
) -> str:
    """MathJax's `\\require{package}`, which authors bring with their macros, taken out with
    a warning: KaTeX has no package loader (it refuses the command), and what it supports of
    those packages is always on."""

    def dropped(match: re.Match) -> str:
        warnings.append(
            RenderWarning(
                line,
                "math-require",
                f"{where}\\require{{{match.group(1)}}} was ignored: the math is typeset by "
                "KaTeX, "
                "which loads no packages; what it supports is always available",
            )
        )
        return " " * len(match.group(0))  # keeps the offsets of what follows (line numbers)

    return _REQUIRE.sub(dropped, tex)


def typeset(
    tex: str, *, display: bool, line: int, state: MathState, warnings: list[RenderWarning]
) -> tuple[str, str, list[dict]]:
    """KaTeX HTML for a formula (or a visible error box), its plain-text stand-in, and the
    `\\ref`s in it (their markers are filled in by fill)."""
    state.count += 1
    anchors: list[str] = []
    source = tex
    if display:
        tex, anchors = _number_labels(tex, state, line, warnings)
    else:
        tex = _LABEL.sub("", tex)
    if "\\require" in tex:
        tex = _without_requires(tex, line, warnings)
    before = state.macros
    tex, defined = _define(tex, line, state, warnings)
    tex = mathlinks.unsafe_links(tex, line, warnings)
    references: list[dict] = []
    try:
        tex = _expand_referring(tex, state.macros)
        tex, references = mathlinks.mark_references(tex)
        tex = _translate_environments(tex)
        rendered = _katex(tex.strip(), display, state, before, defined, line, warnings)
    except jsengine.JSError as error:
        message = f"math: {error.message}"
        if "Too many expansions" in error.message:
            limit = jsengine.KATEX_OPTIONS["maxExpand"]
            message = (
                f"math: too many macro expansions (more than {limit}): is a \\newcommand "
                "or \\def recursive?"
            )
        warnings.append(RenderWarning(line, "math-error", message))
        rendered = math_error_html(source.strip(), error.message, display=display)
    targets = "".join(f'<span class="eq-anchor" id="{anchor}"></span>' for anchor in anchors)
    if display:
        rendered = f'<span class="math-display">{targets}{rendered}</span>'
    return rendered, source.strip(), references


_CANDIDATE = re.compile(r"[\\$]")
_INDENT = re.compile(r"[ \t]*")


@dataclass
class _Span:
    start: int
    end: int
    tex: str
    display: bool


def _find_close(text: str, start: int, closer: str, *, allow_blank_line: bool) -> int:
    index = text.find(closer, start)
    if index < 0:
        return -1
    if not allow_blank_line and re.search(r"\n[ \t]*\n", text[start:index]):
        return -1
    return index


def _inline_dollar_end(text: str, start: int) -> int:
    """End of `$…$` opened at `start`, or -1. Spaces inside the dollars are allowed, as
    Hugo's passthrough and MathJax allow them (`$ x^2 $` is math); a closing dollar followed
    by a digit is not one (pandoc's rule), so `$5 and $10` stays text where Hugo would typeset
    "5 and ". A formula of spaces alone is no formula."""
    if start + 1 >= len(text) or text[start + 1] in "\n$":
        return -1
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "\n" and re.match(r"\n[ \t]*\n", text[index:]):
            return -1
        if char == "$":
            if index + 1 < len(text) and text[index + 1].isdigit():
                return -1
            if not text[start + 1 : index].strip():
                return -1
            return index
        index += 1
    return -1


def find_math(text: str, warnings: list[RenderWarning], lines: LineIndex) -> list[_Span]:
    """Math spans in document order; unclosed delimiters become warnings and stay text."""
    spans: list[_Span] = []
    index, length = 0, len(text)
    while index < length:
        if len(spans) % 1000 == 999 and limits.expired():
            break  # protect_math leaves the rest as written
        # Only a backslash or a dollar can start math: skip straight to the next one.
        candidate = _CANDIDATE.search(text, index)
        if candidate is None:
            break
        index = candidate.start()
        char = text[index]
        if char == "\\":
            if text.startswith("\\\\(", index) or text.startswith("\\\\[", index):
                # Markdown-escaped delimiters: \\( k \\) reads as \( k \) after Markdown.
                display = text[index + 2] == "["
                closer = "\\\\]" if display else "\\\\)"
                end = _find_close(text, index + 3, closer, allow_blank_line=display)
                if end >= 0:
                    spans.append(_Span(index, end + 3, text[index + 3 : end], display))
                    index = end + 3
                    continue
                index += 2
                continue
            if text.startswith("\\(", index) or text.startswith("\\[", index):
                display = text[index + 1] == "["
                closer = "\\]" if display else "\\)"
                end = _find_close(text, index + 2, closer, allow_blank_line=display)
                if end < 0:
                    kind = "display" if display else "inline"
                    warnings.append(
                        RenderWarning(
                            lines.line(index),
                            "math-unclosed",
                            f"unclosed {kind} math: {text[index : index + 2]} has no matching "
                            f"{closer}",
                        )
                    )
                    index += 2
                    continue
                spans.append(_Span(index, end + 2, text[index + 2 : end], display))
                index = end + 2
                continue
            begin = _BEGIN.match(text, index)
            if begin:
                name = begin.group(1)
                closer = f"\\end{{{name}}}"
                end = text.find(closer, begin.end())
                if end < 0:
                    warnings.append(
                        RenderWarning(
                            lines.line(index), "math-unclosed", f"\\begin{{{name}}} is never ended"
                        )
                    )
                    index = begin.end()
                    continue
                spans.append(_Span(index, end + len(closer), text[index : end + len(closer)], True))
                index = end + len(closer)
                continue
            index += 2
            continue
        if char == "$":
            if text.startswith("$$", index):
                end = text.find("$$", index + 2)
                if end < 0:
                    warnings.append(
                        RenderWarning(
                            lines.line(index),
                            "math-unclosed",
                            "unclosed display math: $$ has no matching $$",
                        )
                    )
                    index += 2
                    continue
                spans.append(_Span(index, end + 2, text[index + 2 : end], True))
                index = end + 2
                continue
            end = _inline_dollar_end(text, index)
            if end > 0:
                spans.append(_Span(index, end + 1, text[index + 1 : end], False))
                index = end + 1
                continue
        index += 1
    return spans


def _stop(line: int, state: MathState, warnings: list[RenderWarning]) -> None:
    if not state.stopped:
        state.stopped = True
        warnings.append(
            RenderWarning(
                line,
                "render-limit",
                "this note took too long to typeset: formulas from here on are shown as source",
            )
        )


def protect_math(text: str, stash: Stash, state: MathState, warnings: list[RenderWarning]) -> str:
    lines = LineIndex(text)
    spans = find_math(text, warnings, lines)
    if not spans:
        return text
    out, cursor = [], 0
    for span in spans:
        if OPEN in span.tex:
            # Delimiters around a code span (`$ `x` $`): code was stashed first and wins, as
            # in the theme, where MathJax skips <code>; the dollars stay as written.
            continue
        line = lines.line(span.start)
        if limits.expired():
            # The rest of the note stays as written; Markdown's fallback shows it escaped.
            _stop(line, state, warnings)
            break
        out.append(text[cursor : span.start])
        original = text[span.start : span.end]
        rendered, plain, references = typeset(
            span.tex, display=span.display, line=line, state=state, warnings=warnings
        )
        indent = _INDENT.match(text, lines.starts[line - 1]).group(0)
        # A \ref in the formula is resolved in fill like one in prose: an item of its own,
        # never placed in the text (the formula's HTML holds its marker).
        refs = []
        for data in references:
            stash.add(None, text=data["source"], kind="ref", line=line, data=data)
            refs.append(len(stash.items) - 1)
        out.append(
            stash.add(
                rendered,
                text=plain,
                kind="math",
                line=line,
                original=original,
                indent=indent,
                data={"refs": refs} if refs else None,
            )
        )
        cursor = span.end
    out.append(text[cursor:])
    return "".join(out)
