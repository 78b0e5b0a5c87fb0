"""The diff of two revisions on the revisions page, in bounded time (issue 16, item 5).

difflib's side-by-side table compares every line of a rewritten passage with every line of
its replacement, character by character, to pair up similar lines: time grows with the product
of the passages' lengths (two rewritten 400-line passages: 8 s; two 2,000-line revisions: 46 s),
and its recursion fails on a thousand lines each edited a little. Revisions whose rewritten
passages stay under MAX_COMPARED_PAIRS get that table, exactly as before; larger ones get the
same line-level diff as a list of removed and added lines, with a message saying why; past
MAX_LINES a revision is not compared at all.
"""

from __future__ import annotations

import difflib
import html
from dataclasses import dataclass

# Lines in one revision: finding the changed lines of two revisions this long takes about half
# a second (difflib.SequenceMatcher), the most a page should spend on it.
MAX_LINES = 10_000
# Pairs of lines the side-by-side table may compare within rewritten passages: about 50 µs a
# pair when nothing matches, so at most about a second; an ordinary edit compares a few dozen.
MAX_COMPARED_PAIRS = 20_000
CONTEXT_LINES = 3


@dataclass
class RevisionDiff:
    html: str  # trusted: difflib's table or our own, every line of the revisions escaped
    message: str = ""  # why this diff is shown in a plainer form, or not at all


def revision_diff(old: str, new: str, old_label: str, new_label: str) -> RevisionDiff:
    """The diff of two bodies: difflib's side-by-side table while it is cheap, else a list."""
    a, b = old.splitlines(), new.splitlines()
    if len(a) > MAX_LINES or len(b) > MAX_LINES:
        return RevisionDiff(
            "",
            f"{old_label} has {len(a):,} lines and {new_label} {len(b):,}: revisions over "
            f"{MAX_LINES:,} lines are too long to compare here.",
        )
    matcher = difflib.SequenceMatcher(None, a, b)
    pairs = sum(
        (i2 - i1) * (j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag == "replace"
    )
    if pairs <= MAX_COMPARED_PAIRS:
        return RevisionDiff(difflib.HtmlDiff(wrapcolumn=80).make_table(a, b, old_label, new_label))
    return RevisionDiff(
        _listed(matcher, a, b, old_label, new_label),
        f"{old_label} and {new_label} differ in long rewritten passages: the lines removed and "
        "added are listed, without the side-by-side comparison of similar lines, which would "
        "take minutes for passages this long.",
    )


def _listed(matcher, a: list[str], b: list[str], old_label: str, new_label: str) -> str:
    """Removed and added lines with CONTEXT_LINES of context, numbered in both revisions,
    in the side-by-side table's colours (diff_sub, diff_add)."""
    rows = [
        '<table class="diff diff-listed"><thead><tr>'
        f'<th class="diff_header">{html.escape(old_label)}</th>'
        f'<th class="diff_header">{html.escape(new_label)}</th><th></th></tr></thead><tbody>'
    ]
    for index, group in enumerate(matcher.get_grouped_opcodes(CONTEXT_LINES)):
        if index:
            rows.append('<tr class="diff-gap"><td>…</td><td>…</td><td></td></tr>')
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += (_row(i1 + k, j1 + k, " ", a[i1 + k], "") for k in range(i2 - i1))
                continue
            rows += (_row(i, None, "-", a[i], "diff_sub") for i in range(i1, i2))
            rows += (_row(None, j, "+", b[j], "diff_add") for j in range(j1, j2))
    rows.append("</tbody></table>")
    return "".join(rows)


def _row(old: int | None, new: int | None, mark: str, text: str, css: str) -> str:
    numbers = "".join(
        f'<td class="diff_header">{"" if line is None else line + 1}</td>' for line in (old, new)
    )
    cell = f' class="{css}"' if css else ""
    return f"<tr>{numbers}<td{cell}><code>{mark} {html.escape(text)}</code></td></tr>"
