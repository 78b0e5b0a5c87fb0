"""LaTeX in field values and names decoded to pybtex rich text, as pybtex does it, for less.

pybtex decodes with `Text.from_latex`: latexcodec turns `{\\"o}` into ö, `--` into an en dash,
`~` into a no-break space, then braces become `Protected` text. latexcodec is slow, and most
values are plain words, so `decode_latex` gives plain text directly when latexcodec would leave
it unchanged, and remembers what it decoded (names and journals recur across entries).
"""

from __future__ import annotations

import re

from pybtex.markup import LaTeXParser
from pybtex.richtext import Text

from .memo import remembered

# What latexcodec leaves unchanged: no command, math, comment, parameter or tie
# (`\\ $ % # ~`), no whitespace but single spaces after the first character (it drops leading
# spaces, folds runs, turns newlines into spaces), and none of its ligatures (`--`, `---`, `''`,
# ``` `` ```, `,,`, `!``, `?``). Braces it leaves too: pybtex's parser makes them Protected.
# tests/bibliography/test_decoding.py checks this against latexcodec on generated strings.
_UNCHANGED = re.compile(r"(?!\s)(?:[^\\$%#~\s`'!?,-]|[!?,'-](?![`,'-])| (?! ))*")


@remembered
def decode_latex(source: str) -> Text:
    """pybtex's `Text.from_latex(source)` (the same Text), remembered per string."""
    if _UNCHANGED.fullmatch(source):
        if "{" in source or "}" in source:
            return LaTeXParser(source).parse()
        return Text(source)
    return Text.from_latex(source)
