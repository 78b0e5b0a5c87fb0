"""LaTeX in field values and names decoded to pybtex rich text, as pybtex does it, for less.

pybtex decodes with `Text.from_latex`: latexcodec turns `{\\"o}` into ö, `--` into an en dash,
`~` into a no-break space, then braces become `Protected` text. latexcodec is slow (about
0.1 ms a name), and most values are plain words or plain words with a few accents in braces,
so `decode_latex` gives plain text directly when latexcodec would leave it unchanged, decodes
only the accent groups (`{\\"u}`, `{\\c c}`, `{\\ss}`) when those are all that latexcodec
would change, and remembers what it decoded (names and journals recur across entries).
"""

from __future__ import annotations

import codecs
import re

import latexcodec  # noqa: F401 - registers the "ulatex" codec
from pybtex.markup import LaTeXParser
from pybtex.richtext import Protected, String, Text

from .memo import remembered

# What latexcodec leaves unchanged: no command, math, comment, parameter or tie
# (`\\ $ % # ~`), no whitespace but single spaces after the first character (it drops leading
# spaces, folds runs, turns newlines into spaces), and none of its ligatures (`--`, `---`, `''`,
# ``` `` ```, `,,`, `!``, `?``). Braces it leaves too: pybtex's parser makes them Protected.
# tests/bibliography/test_decoding.py checks this against latexcodec on generated strings.
_UNCHANGED = re.compile(r"(?!\s)(?:[^\\$%#~\s`'!?,-]|[!?,'-](?![`,'-])| (?! ))*")

# An accent group: braces around one command and its argument, without nested braces,
# spaces but one, or anything that reaches past the closing brace (`%` comments the line
# out); or an en dash (`--`) or a tie (`~`). latexcodec decodes each the same alone as
# within its value, so each is decoded alone (and remembered) and the text around them must
# be text latexcodec leaves alone.
_ACCENT_GROUP = re.compile(r"\{\\[^{}%\s\\$#]+(?: [^{}%\s\\$#]+)?\}|(?<!-)--(?!-)|~")
# Stands for a decoded group while checking the rest: an ordinary letter for latexcodec.
_MARK = "\ue000"


@remembered
def decode_latex(source: str) -> Text:
    """pybtex's `Text.from_latex(source)` (the same Text), remembered per string."""
    if _UNCHANGED.fullmatch(source):
        if "{" in source or "}" in source:
            return parse_braces(source)
        return text_of(source)
    decoded = _decode_accent_groups(source)
    if decoded is not None:
        return parse_braces(decoded)
    return Text.from_latex(source)


def _decode_accent_groups(source: str) -> str | None:
    """latexcodec's decoding of `source` when only its accent groups, en dashes and ties
    change, else None."""
    if _MARK in source or ("{\\" not in source and "--" not in source and "~" not in source):
        return None
    rest = _ACCENT_GROUP.sub(_MARK, source)
    if "\\" in rest or not _UNCHANGED.fullmatch(rest):
        return None
    groups = [_decoded_group(group) for group in _ACCENT_GROUP.findall(source)]
    if None in groups:
        return None
    pieces = rest.split(_MARK)
    out = [pieces[0]]
    for group, piece in zip(groups, pieces[1:], strict=True):
        out += (group, piece)
    return "".join(out)


@remembered
def _decoded_group(group: str) -> str | None:
    """latexcodec's decoding of one accent group, or None when it fails (pybtex then
    decodes the whole value and raises its own error)."""
    try:
        return codecs.decode(group, "ulatex")
    except (UnicodeError, ValueError):
        return None


def text_of(source: str) -> Text:
    """`Text(source)` for a plain string, without pybtex's constructor."""
    text = Text.__new__(Text)
    text.parts = [String(source)] if source else []
    text.length = len(source)
    return text


# Braces one level deep at most, balanced: what names and titles hold (`J{ü}rgen`, `{BERT}`).
_FLAT_BRACES = re.compile(r"[^{}]*(?:\{[^{}]*\}[^{}]*)*")
_BRACED = re.compile(r"\{([^{}]*)\}")


def parse_braces(source: str) -> Text:
    """pybtex's `LaTeXParser(source).parse()`: braced text becomes Protected. Flat braces are
    split by one regular expression into the Text pybtex's parser builds (empty pieces
    dropped, neighbours of one kind merged); nested or unbalanced ones go to pybtex."""
    if not _FLAT_BRACES.fullmatch(source):
        return LaTeXParser(source).parse()
    runs: list[list] = []  # [protected?, text] with neighbours of one kind merged
    for index, piece in enumerate(_BRACED.split(source)):
        protected = index % 2 == 1
        if not piece:
            continue
        if runs and runs[-1][0] == protected:
            runs[-1][1] += piece
        else:
            runs.append([protected, piece])
    text = Text.__new__(Text)
    text.parts = [_protected(piece) if protected else String(piece) for protected, piece in runs]
    text.length = sum(len(piece) for _, piece in runs)
    return text


def _protected(piece: str) -> Protected:
    """`Protected(piece)` for a non-empty string, without pybtex's constructor."""
    protected = Protected.__new__(Protected)
    protected.parts = [String(piece)]
    protected.length = len(piece)
    return protected
