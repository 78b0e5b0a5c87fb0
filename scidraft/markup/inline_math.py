"""Front-matter text with math in it: the strings the theme prints as they are and MathJax then
typesets on the page (an entry index's titles, aliases and summaries). Here KaTeX typesets them
on the server, with the theme's delimiters: `$…$` and `\\(…\\)` inline, `$$…$$` and `\\[…\\]`
displayed; `\\$` is a dollar sign (MathJax's processEscapes). Everything else is escaped text.

In two steps, as the engine needs them: `marked` escapes the text and marks each formula, so
that the HTML around it can be sanitised; `typeset_marked` then puts each formula's KaTeX in
place of its mark (nh3 would strip KaTeX's MathML and inline styles).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from . import jsengine
from .formulas import math_error_html
from .mathmacros import NONE as NO_MACROS
from .mathmacros import Macros
from .stash import strip_placeholder_characters

# Private-use characters (the stash's and the bibliography's are others), which neither nh3
# nor Markdown alters; an author cannot type them (`marked` removes them from the text).
MARK_OPEN, MARK_CLOSE = "\ue014", "\ue015"
_MARK = re.compile(f"{MARK_OPEN}([di])([^{MARK_CLOSE}]*){MARK_CLOSE}")

# Display delimiters first: `$$x$$` is one displayed formula, not two empty inline ones.
_MATH = re.compile(
    r"(?<!\\)\$\$(?P<display>.+?)(?<!\\)\$\$"
    r"|\\\[(?P<bracket>.+?)\\\]"
    r"|(?<!\\)\$(?P<inline>(?:[^$\\]|\\.)+)(?<!\\)\$"
    r"|\\\((?P<paren>.+?)\\\)",
    re.DOTALL,
)


def _text(text: str) -> str:
    return html.escape(text.replace("\\$", "$"), quote=False)


def marked(text: str) -> str:
    """`text` as escaped HTML, each formula a mark holding its TeX (escaped too)."""
    text = strip_placeholder_characters(text).replace(MARK_OPEN, "").replace(MARK_CLOSE, "")
    parts, last = [], 0
    for match in _MATH.finditer(text):
        parts.append(_text(text[last : match.start()]))
        display = match.group("display") or match.group("bracket")
        tex = display if display is not None else match.group("inline") or match.group("paren")
        kind = "d" if display is not None else "i"
        parts.append(f"{MARK_OPEN}{kind}{html.escape(tex.strip(), quote=False)}{MARK_CLOSE}")
        last = match.end()
    parts.append(_text(text[last:]))
    return "".join(parts)


def typeset(tex: str, display: bool, macros: Macros = NO_MACROS) -> tuple[str, str]:
    """KaTeX's HTML for `tex` (after `macros`) and "", or, when KaTeX refuses it, the TeX as
    written (the reason on hover) and the reason."""
    try:
        return jsengine.render_tex(tex, display=display, macros=macros), ""
    except jsengine.JSError as error:
        return math_error_html(tex, error.message), error.message


def typeset_marked(markup: str, formula: Callable[[str, bool], str]) -> str:
    """Each mark of `marked` replaced by `formula(tex, display)`."""
    return _MARK.sub(
        lambda match: formula(html.unescape(match.group(2)), match.group(1) == "d"), markup
    )
