"""BibTeX values as plain text for people to read: the admin's titles and author lists.

`{\\'e}`, `\\"{o}`, `{\\c c}`, `{\\ss}`, `--` and `~` become Unicode; protective braces (`{BERT}`)
and formatting commands (`\\emph{…}`) go; URLs and math (`$\\alpha$`) stay as written. Decoding
never raises: a value pybtex cannot read (unbalanced braces, say) is shown as it was written.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pybtex.richtext import Text

# Commands whose argument is shown as it is; the command itself only formats.
_FORMATTING = re.compile(
    r"\\(?:textbf|textit|textsl|textsc|texttt|textrm|textsf|textup|textmd|emph|mbox|text"
    r"|mathrm|mathit|mathbf|mathsf|mathtt|hbox|uppercase|lowercase|MakeUppercase"
    r"|MakeLowercase)\s*(?=\{)"
)
# \url{…} and \href{url}{text}: a URL is not LaTeX (`%`, `_`, `~` are literal in it).
_URL = re.compile(r"\\url\s*\{([^{}]*)\}")
# Math is shown as written: pybtex would drop its braces (`\\frac{a}{b}` → `\\frac ab`).
_MATH = re.compile(r"(?<!\\)\$[^$]*(?<!\\)\$")
_HREF = re.compile(r"\\href\s*\{([^{}]*)\}\s*\{")
# `%` starts a comment in LaTeX, but in a BibTeX value it is text.
_BARE_PERCENT = re.compile(r"(?<!\\)%")
_PLACEHOLDER = "\ue000{}\ue001"
_PLACEHOLDER_RE = re.compile("\ue000(\\d+)\ue001")
_SPACES = re.compile(r"[ \t\r\n\f\v]+")  # not \s: a tie (~) stays a no-break space


# What a list or a tag shows of one value (a title, a name) at most: a longer value is cut before
# it is decoded, so a page of entries costs the same whatever a file holds (a stored field may
# be megabytes long, and decoding costs about 2.5 s a MB).
SHOWN_CHARS = 300


def value_head(value: str, limit: int) -> tuple[str, bool]:
    """The start of `value` worth decoding to show `limit` characters, and whether it is cut:
    twice the limit (commands shrink as they decode), ending at a space where one is near the
    end, so that a command is rarely cut in two."""
    if len(value) <= 2 * limit:
        return value, False
    start = value[: 2 * limit]
    space = start.rfind(" ")
    return (start[:space] if space > limit else start), True


def shortened(text: str, limit: int) -> str:
    """`text`, or its first `limit` - 1 characters and "…"."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def latex_to_text_cut(value: str, limit: int = SHOWN_CHARS) -> str:
    """latex_to_text of the start of `value`, at most `limit` characters ("…" when cut)."""
    if not isinstance(value, str):
        return latex_to_text(value)
    start, cut = value_head(value, limit)
    text = latex_to_text(start)
    return shortened(text + "…" if cut else text, limit)


def latex_to_text(value: str) -> str:
    """`value` (a BibTeX field or name) as plain Unicode text; `value` itself if undecodable."""
    if not isinstance(value, str):
        return "" if value is None else str(value)
    return _decoded(value)


@lru_cache(maxsize=8192)
def _decoded(value: str) -> str:
    if "\\" not in value and "{" not in value and "$" not in value and "-" not in value:
        return _SPACES.sub(" ", value.replace("~", "\u00a0")).strip()
    verbatim: list[str] = []

    def keep_text(kept: str) -> str:
        verbatim.append(kept)
        return _PLACEHOLDER.format(len(verbatim) - 1)

    def keep(match: re.Match) -> str:
        return keep_text(match.group(1))

    prepared = _URL.sub(keep, value)
    prepared = _MATH.sub(lambda match: keep_text(match.group()), prepared)
    prepared = _HREF.sub("{", prepared)
    prepared = _FORMATTING.sub("", prepared)
    prepared = _BARE_PERCENT.sub(r"\\%", prepared)
    try:
        text = Text.from_latex(prepared).render_as("text")
    except Exception:  # noqa: BLE001 - pybtex raises several kinds; show the value instead
        return value
    text = _PLACEHOLDER_RE.sub(lambda match: verbatim[int(match.group(1))], text)
    return _SPACES.sub(" ", text).strip()


def display_cache_clear() -> None:
    """Forget decoded values (benchmarks measure formatting cold)."""
    _decoded.cache_clear()


def display_fields(fields: dict[str, str]) -> dict[str, str]:
    """Every field decoded for display, except those that are addresses or identifiers."""
    verbatim = {"url", "doi", "eprint", "file", "isbn", "issn", "pmid", "arxivid"}
    return {
        name: value if name.lower() in verbatim else latex_to_text(value)
        for name, value in fields.items()
    }


def display_persons(persons: dict[str, list[str]]) -> dict[str, list[str]]:
    """Every name decoded for display ("M{\\"u}ller, J." → "Müller, J.")."""
    return {role: [latex_to_text(name) for name in names] for role, names in persons.items()}


def authors_text(persons: dict[str, list[str]], limit: int = 3) -> str:
    """The first `limit` authors (or editors) decoded, "; "-separated, "et al." for the rest:
    a line for lists and the cite picker, where a 5,000-name list must not be printed."""
    names = persons.get("author") or persons.get("editor") or []
    shown = "; ".join(latex_to_text_cut(name) for name in names[:limit])
    return f"{shown}; et al." if len(names) > limit else shown
