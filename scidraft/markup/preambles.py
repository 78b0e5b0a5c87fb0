"""The site's and a note's math preambles: their definitions, checked by KaTeX, become the
macros every formula of a render starts with."""

from __future__ import annotations

from scidraft.bounds import input_path

from . import jsengine, mathmacros
from .formulas import COMMENT, linked_safely, without_requires
from .rendered import RenderWarning
from .stash import LineIndex


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
        tex = COMMENT.sub(lambda match: match.group(1).ljust(len(match.group(0))), tex)
        if "\\require" in tex:
            tex = without_requires(tex, 1, warnings, where=f"{preamble.where}: ")
        lines = LineIndex(tex)
        definitions = linked_safely(mathmacros.find_definitions(tex), 1, warnings)
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


def preamble_problems(tex: str, where: str = "the math macros") -> list[str]:
    """Why a preamble would not be used as written (a form's validation): [] when it would."""
    warnings: list[RenderWarning] = []
    preamble_macros((mathmacros.Preamble(where, tex),), warnings)
    # An ignored \require is a habit, not a problem: the preamble is used as written.
    return [warning.message for warning in warnings if warning.code != "math-require"]
