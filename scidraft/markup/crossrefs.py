"""What a cross-reference prints, as LaTeX does: `\\ref` the number, `\\eqref` the number in
parentheses, `\\cref` and `\\Cref` cleveref's name before it (lower and upper case), and
`\\autoref` hyperref's. A target without a number (an unnumbered environment) prints its
kind's word, which is all there is to print."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .code_spans import mask_code

# cleveref's \crefname and \Crefname where they are not the environment's own word.
CLEVEREF_NAMES = {
    "equation": ("eq.", "Equation"),
    "figure": ("fig.", "Figure"),
    "table": ("tab.", "Table"),
    "section": ("sec.", "Section"),
}
# hyperref's \autoref names: the environment's word, "Equation" for an equation.
AUTOREF_NAMES = {"equation": "Equation", "figure": "Figure", "table": "Table"}


def kind_word(target: dict) -> str:
    """The environment's word ("Lemma") from its label's text ("Lemma 2")."""
    text, number = target.get("text") or "", target.get("number") or ""
    if number and text.endswith(number):
        return text[: -len(number)].strip()
    return text


def reference_text(command: str, target: dict) -> str:
    """The text `\\<command>{label}` prints for a label's `target` (its kind, number, text)."""
    number, kind = target.get("number") or "", target.get("kind") or ""
    if not number:
        return target.get("text") or ""
    if command == "eqref":
        return f"({number})"
    if command == "ref":
        return number
    shown = f"({number})" if kind == "equation" else number
    word = kind_word(target)
    if command == "cref":
        return f"{CLEVEREF_NAMES.get(kind, (word.lower(), word))[0]} {shown}"
    if command == "Cref":
        return f"{CLEVEREF_NAMES.get(kind, (word.lower(), word))[1]} {shown}"
    return f"{AUTOREF_NAMES.get(kind, word)} {number}"  # \autoref: hyperref's, no parentheses


_REF = re.compile(r"\\ref\{([^{}\n]*)\}")


@dataclass(frozen=True)
class KindReference:
    """A `\\ref` that engines before 8 printed with its kind ("Lemma 2") and that now prints
    the number alone, as LaTeX does; `\\Cref` prints what it printed."""

    line: int
    key: str
    was: str
    now: str


# Targets a \ref never printed with their kind: equations, and figures and tables, which
# only engines whose \ref prints the number alone have numbered.
_NUMBER_ALWAYS = frozenset({"equation", "figure", "table"})
_FIGURE_LABEL = re.compile(r"(?:fig|tbl):")


def kind_references(source: str, labels: dict, references: dict) -> list[KindReference]:
    """The `\\ref{…}` of `source` (code left out) whose target is numbered and not an
    equation, figure or table: the note's own `labels`, or another note's as `references`
    resolved them."""
    masked = mask_code(source)
    found = []
    for match in _REF.finditer(masked):
        for key in (key.strip() for key in match.group(1).split(",")):
            target = labels.get(key)
            if target is not None:
                if target.get("kind") in _NUMBER_ALWAYS:
                    continue
                was = target.get("text") or ""
                now = reference_text("ref", target)
            elif (external := references.get(key)) is not None:
                was = external.get("text") or ""
                if _FIGURE_LABEL.match(key.split(":", 1)[-1]) and was.startswith(
                    ("Figure ", "Table ")
                ):
                    continue
                now = was.rsplit(" ", 1)[-1]
            else:
                continue
            if was != now:
                line = masked.count("\n", 0, match.start()) + 1
                found.append(KindReference(line, key, was, now))
    return found
