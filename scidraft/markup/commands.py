"""Stage 4, commands: LaTeX commands in prose: citations, cross-references and text styling.

`\\cite{…}`, `\\ref{…}` and `\\eqref{…}` become placeholders resolved in `fill` (their numbers
depend on the whole note). `\\textbf`, `\\textit`, `\\emph` and `\\texttt` become HTML with the
braces matched by counting, as the theme's latex-text.js does (docs/theme.md#latex-text-commands);
an unbalanced argument is left as written. Code and math are already stashed, so none of this
touches them.
"""

from __future__ import annotations

import html
import re

from . import limits
from .stash import LineIndex, Stash

_REFERENCE = re.compile(r"\\(cite|citep|citet|ref|eqref|autoref|cref|Cref)\{([^{}\n]*)\}")
# LaTeX's tie before a reference (`Theorem~\ref{a}`): a non-breaking space. Goldmark reads a
# single `~` as strikethrough, so two ties in a paragraph struck out the text between them; no
# Hugo author writes a one-tilde strikethrough that ends right before \ref or \cite.
_TIE = re.compile(r"(?<![~\\])~(?=\\(?:cite|citep|citet|ref|eqref|autoref|cref|Cref)\{)")
NO_BREAK_SPACE = "\u00a0"
_STYLE = re.compile(r"\\(textbf|textit|emph|texttt)\{")
_TAGS = {"textbf": "strong", "textit": "em", "emph": "em"}


def protect_references(text: str, stash: Stash) -> str:
    lines = LineIndex(text)

    def replace(match: re.Match) -> str:
        command, argument = match.group(1), match.group(2)
        kind = "cite" if command.startswith("cite") else "ref"
        keys = [key.strip() for key in argument.split(",") if key.strip()]
        if not keys or limits.expired():
            return match.group(0)
        return stash.add(
            None,
            kind=kind,
            line=lines.line(match.start()),
            original=match.group(0),
            data={"command": command, "keys": keys, "source": match.group(0)},
        )

    if "~" in text:
        text = _TIE.sub(NO_BREAK_SPACE, text)
    return _REFERENCE.sub(replace, text)


def _argument_end(text: str, open_brace: int) -> int:
    """Index of the brace closing the one at `open_brace`, or -1 (unbalanced, or a blank line)."""
    depth, index = 0, open_brace
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and text[index + 1] in "{}":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
        elif char == "\n" and text.startswith("\n\n", index):
            return -1
        index += 1
    return -1


def text_styles(text: str, stash: Stash, depth: int = 0) -> str:
    """`\\textbf{a {b} c}` → `<strong>a {b} c</strong>`, nested commands included.

    Past MAX_NESTING levels, or once the render's time budget is spent, the rest stays as
    written: each level rescans its argument, and unbalanced commands rescan to the paragraph's
    end."""
    out, cursor = [], 0
    for match in _STYLE.finditer(text):
        if match.start() < cursor:
            continue
        if depth >= limits.MAX_NESTING or limits.expired():
            break
        end = _argument_end(text, match.end() - 1)
        if end < 0:
            continue
        out.append(text[cursor : match.start()])
        inner = text[match.end() : end]
        command = match.group(1)
        if command == "texttt":
            literal = inner.replace("\\{", "{").replace("\\}", "}").replace("\\_", "_")
            out.append(
                stash.add(
                    f"<code>{html.escape(literal)}</code>",
                    text=literal,
                    kind="inline-code",
                    original=text[match.start() : end + 1],
                )
            )
        else:
            tag = _TAGS[command]
            out.append(f"<{tag}>{text_styles(inner, stash, depth + 1)}</{tag}>")
        cursor = end + 1
    out.append(text[cursor:])
    return "".join(out)
