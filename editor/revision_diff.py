"""The diff of two revisions as a person reads one: changed hunks with a few lines of context,
and within a changed line the words that changed, in bounded time.

Lines are matched by difflib's SequenceMatcher (about half a second for two 10,000-line
revisions, the most a page should spend, hence MAX_LINES). Within a rewritten passage the
removed and added lines are paired in order, as GitHub and Gerrit pair them, and each pair is
compared word by word. Comparing two lines costs up to the product of their word counts, so
the pairs compared word by word share a budget (MAX_WORD_PAIRS); past it, or for a pair that is
mostly different anyway, the lines are shown whole as removed and added, and the message says
so. difflib's HtmlDiff, used before, paired lines by similarity (quadratic in a passage's
length: 46 s for two 2,000-line revisions) and marked characters, not words.
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass

# Lines in one revision: matching the lines of two revisions this long takes about half a
# second, the most a page should spend on it.
MAX_LINES = 10_000
CONTEXT_LINES = 3
# Word comparisons (the product of the two lines' word counts, summed over the pairs compared):
# a few million keep the word-level marks under about a second; an ordinary edit uses hundreds.
MAX_WORD_PAIRS = 3_000_000
# A pair whose words are less alike than this is a rewrite: marking its words would mark most
# of both lines, which reads worse than the two lines whole.
MIN_SIMILARITY = 0.4

# Words, runs of spaces, and each other character alone (punctuation, a TeX backslash or brace),
# so that `\alpha` → `\beta` marks the command's name, and `x,` → `y,` keeps the comma.
_TOKENS = re.compile(r"\w+|\s+|[^\w\s]")


@dataclass
class RevisionDiff:
    html: str  # trusted: our own markup, every piece of the revisions' text escaped
    message: str = ""  # why part of the diff is shown more plainly, or not at all
    added: int = 0  # lines
    removed: int = 0


@dataclass
class _Budget:
    word_pairs: int = MAX_WORD_PAIRS
    spent: bool = False

    def allows(self, cost: int) -> bool:
        if cost > self.word_pairs:
            self.spent = True
            return False
        self.word_pairs -= cost
        return True


def revision_diff(old: str, new: str, old_label: str, new_label: str) -> RevisionDiff:
    """The changed hunks of `old` → `new`, with CONTEXT_LINES of context and word-level marks."""
    a, b = old.splitlines(), new.splitlines()
    if len(a) > MAX_LINES or len(b) > MAX_LINES:
        return RevisionDiff(
            "",
            f"{old_label} has {len(a):,} lines and {new_label} {len(b):,}: revisions over "
            f"{MAX_LINES:,} lines are too long to compare here.",
        )
    matcher = difflib.SequenceMatcher(None, a, b)
    budget = _Budget()
    rows: list[str] = []
    added = removed = 0
    for group in matcher.get_grouped_opcodes(CONTEXT_LINES):
        rows.append(_hunk_header(group, old_label, new_label))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += (
                    _row("context", i1 + k, j1 + k, html.escape(a[i1 + k])) for k in range(i2 - i1)
                )
                continue
            removed += i2 - i1
            added += j2 - j1
            old_cells, new_cells = _marked(a[i1:i2], b[j1:j2], budget)
            rows += (_row("removed", i1 + k, None, cell) for k, cell in enumerate(old_cells))
            rows += (_row("added", None, j1 + k, cell) for k, cell in enumerate(new_cells))
    if not rows:
        return RevisionDiff("", f"{old_label} and {new_label} have the same text.")
    table = (
        f'<table class="diff revision-diff"><caption>{html.escape(old_label)} → '
        f"{html.escape(new_label)}: "
        f'<span class="diff-count-removed">−{removed:,}</span> '
        f'<span class="diff-count-added">+{added:,}</span> lines</caption>'
        '<colgroup><col class="diff-num-col"><col class="diff-num-col"><col></colgroup>'
        f'<thead><tr>{_head(old_label)}{_head(new_label)}<th scope="col">Text</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    message = ""
    if budget.spent:
        message = (
            "Some changed lines are too long, or too many, to compare word by word here: "
            "they are shown whole as removed and added."
        )
    return RevisionDiff(table, message, added=added, removed=removed)


def _head(label: str) -> str:
    label = html.escape(label)
    return f'<th scope="col" title="{label}">{label}</th>'


def _hunk_header(group, old_label: str, new_label: str) -> str:
    """`Lines 12–19 of Revision 3, 12–21 of Revision 4`, as a row spanning the table."""
    first, last = group[0], group[-1]
    old_span = _span(first[1], last[2])
    new_span = _span(first[3], last[4])
    text = f"Lines {old_span} of {old_label}, {new_span} of {new_label}"
    return f'<tr class="diff-hunk"><th colspan="3" scope="rowgroup">{html.escape(text)}</th></tr>'


def _span(start: int, end: int) -> str:
    if end <= start:
        return f"none (after line {start})" if start else "none"
    return f"{start + 1}" if end == start + 1 else f"{start + 1}–{end}"


def _row(kind: str, old: int | None, new: int | None, cell: str) -> str:
    mark = {"context": " ", "removed": "−", "added": "+"}[kind]
    numbers = "".join(
        f'<td class="diff-num">{"" if line is None else line + 1}</td>' for line in (old, new)
    )
    label = {"context": "", "removed": '<span class="visually-hidden">removed: </span>',
             "added": '<span class="visually-hidden">added: </span>'}[kind]  # fmt: skip
    return (
        f'<tr class="diff-{kind}">{numbers}<td class="diff-text">'
        f'<span class="diff-mark" aria-hidden="true">{mark}</span>{label}'
        f"<code>{cell}</code></td></tr>"
    )


def _marked(old: list[str], new: list[str], budget: _Budget) -> tuple[list[str], list[str]]:
    """Escaped removed and added lines of one rewritten passage; lines paired in order have
    their changed words in <del> and <ins>."""
    old_cells = [html.escape(line) for line in old]
    new_cells = [html.escape(line) for line in new]
    for k in range(min(len(old), len(new))):
        pair = _word_marks(old[k], new[k], budget)
        if pair is not None:
            old_cells[k], new_cells[k] = pair
    return old_cells, new_cells


def _word_marks(old: str, new: str, budget: _Budget) -> tuple[str, str] | None:
    """The two lines with their differing words marked, or None when they are not alike enough
    (or the budget is spent)."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    if not budget.allows(max(len(a), 1) * max(len(b), 1)):
        return None
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.ratio() < MIN_SIMILARITY:
        return None
    old_parts: list[str] = []
    new_parts: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        old_text, new_text = html.escape("".join(a[i1:i2])), html.escape("".join(b[j1:j2]))
        if tag == "equal":
            old_parts.append(old_text)
            new_parts.append(new_text)
            continue
        if old_text:
            old_parts.append(f"<del>{old_text}</del>")
        if new_text:
            new_parts.append(f"<ins>{new_text}</ins>")
    return "".join(old_parts), "".join(new_parts)
