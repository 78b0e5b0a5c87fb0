"""One formula typeset: amsmath's environments as KaTeX has them, `\\label` numbered by
`\\tag`, the formula's own macro definitions, its links and `\\ref`s, and KaTeX's HTML or a
visible error.

The math stage (protect_math.py) finds the formulas and stashes what this module makes of each.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from . import jsengine, mathlinks, mathmacros
from .rendered import RenderWarning

# amsmath environments, and what KaTeX renders each as. Numbering follows the theme's MathJax
# (no automatic numbers); a \label gives its row a number, via \tag.
MATH_ENVIRONMENTS = {
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
BEGIN = re.compile(r"\\begin\{(" + "|".join(re.escape(k) for k in MATH_ENVIRONMENTS) + r")\}")
_END = re.compile(r"\\end\{(" + "|".join(re.escape(k) for k in MATH_ENVIRONMENTS) + r")\}")
_LABEL = re.compile(r"\\label\{([^{}]*)\}")
_NONUMBER = re.compile(r"\\(?:nonumber|notag)\b")
_TAG = re.compile(r"\\tag\*?\s*\{([^{}]*)\}")
_REQUIRE = re.compile(r"\\require\s*\{([^{}]*)\}")
# A `%` after an even number of backslashes (none included) starts a comment.
COMMENT = re.compile(r"(?<!\\)((?:\\\\)*)%[^\n]*")


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
    return COMMENT.sub(r"\1", tex) if "%" in tex else tex


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
    environment = BEGIN.match(stripped)
    end = f"\\end{{{environment.group(1)}}}" if environment else ""
    if environment and MATH_ENVIRONMENTS[environment.group(1)] in _ROWED and end in stripped:
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
        target = MATH_ENVIRONMENTS[match.group(1)]
        return "\\begin{array}{rcl}" if target == "array" else f"\\begin{{{target}}}"

    def end(match: re.Match) -> str:
        target = MATH_ENVIRONMENTS[match.group(1)]
        return f"\\end{{{target}}}"

    tex = BEGIN.sub(begin, tex)
    return _END.sub(end, tex)


def math_error_html(tex: str, message: str, *, display: bool = False) -> str:
    """A formula KaTeX refused, as the reader sees it: its TeX as written, the reason on hover."""
    css = "math-error math-error-display" if display else "math-error"
    return (
        f'<span class="{css}" title="{html.escape(message)}"><code>{html.escape(tex)}</code></span>'
    )


def linked_safely(
    definitions: list[mathmacros.Definition], line: int, warnings: list[RenderWarning]
) -> list[mathmacros.Definition]:
    """Links in a macro's body follow the rule of links in formulas (mathlinks)."""
    for definition in definitions:
        definition.tex = mathlinks.unsafe_links(definition.tex, line, warnings)
    return definitions


def _define(
    tex: str, line: int, state: MathState, warnings: list[RenderWarning]
) -> tuple[str, list[mathmacros.Definition]]:
    """Take the formula's definitions out of `tex` into `state.macros`: they apply to it and
    to every later formula, as in MathJax. Returns the TeX left and the definitions added."""
    definitions = linked_safely(mathmacros.find_definitions(tex), line, warnings)
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


def without_requires(tex: str, line: int, warnings: list[RenderWarning], *, where: str = "") -> str:
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
        tex = without_requires(tex, line, warnings)
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
