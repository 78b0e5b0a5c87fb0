"""The diff of two revisions (editor/revision_diff.py): changed hunks with context and the words
that changed within a line, in bounded time however long and however
rewritten the revisions are."""

from __future__ import annotations

import random
import re
import time

import pytest

from editor.revision_diff import CONTEXT_LINES, MAX_LINES, MAX_WORD_PAIRS, revision_diff
from notes import services

WORDS = [
    "the", "of", "a", "lemma", "proof", "we", "let", "then", "bound", "holds", "for", "all",
    "converges", "norm", "space",
]  # fmt: skip


def _lines(count: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return [" ".join(rnd.choice(WORDS) for _ in range(12)) for _ in range(count)]


def _timed(old: str, new: str):
    start = time.process_time()
    diff = revision_diff(old, new, "Revision 1", "Revision 2")
    cpu = time.process_time() - start
    assert cpu < 5.0, f"took {cpu:.1f} s of CPU time"
    return diff


def _rows(diff, kind: str) -> list[str]:
    """The text cells of the rows of one kind (context, removed, added), markup kept."""
    return re.findall(rf'<tr class="diff-{kind}">.*?<code>(.*?)</code>', diff.html)


def test_a_changed_word_is_marked_within_its_line():
    """Only the word that changed is in <del>/<ins>; the rest of the line reads as it is."""
    diff = _timed("We let the norm converge.\n", "We let the seminorm converge.\n")
    assert _rows(diff, "removed") == ["We let the <del>norm</del> converge."]
    assert _rows(diff, "added") == ["We let the <ins>seminorm</ins> converge."]
    assert (diff.removed, diff.added, diff.message) == (1, 1, "")


def test_tex_commands_are_compared_by_their_name():
    """`\\alpha` → `\\beta` marks the name, not the backslash or the braces around it."""
    diff = _timed("$\\alpha + {x}$\n", "$\\beta + {x}$\n")
    assert _rows(diff, "added") == ["$\\<ins>beta</ins> + {x}$"]


def test_only_changed_hunks_are_shown_with_their_context():
    """Two edits far apart are two hunks, each with CONTEXT_LINES lines either side; the
    unchanged lines between them are left out."""
    old = [f"line {n}" for n in range(100)]
    new = list(old)
    new[10], new[80] = "line ten", "line eighty"
    diff = _timed("\n".join(old), "\n".join(new))
    assert diff.html.count('class="diff-hunk"') == 2
    assert len(_rows(diff, "context")) == 4 * CONTEXT_LINES
    assert "Lines 8–14 of Revision 1, 8–14 of Revision 2" in diff.html
    assert "line 40" not in diff.html


def test_lines_are_numbered_in_both_revisions():
    """An inserted line shifts the numbers of the new revision only."""
    diff = _timed("a\nb\nc\n", "a\nnew\nb\nc\n")
    assert '<td class="diff-num"></td><td class="diff-num">2</td>' in diff.html  # added
    assert '<td class="diff-num">2</td><td class="diff-num">3</td>' in diff.html  # b, context


def test_a_rewritten_line_is_shown_whole_not_word_by_word():
    """Lines with little in common are shown as removed and added without word marks."""
    diff = _timed("The proof is short.\n", "Completely different wording here!\n")
    assert _rows(diff, "removed") == ["The proof is short."]
    assert _rows(diff, "added") == ["Completely different wording here!"]


def test_every_piece_of_text_is_escaped():
    """Markup in a revision (and in the labels) is shown as text, marked words included."""
    diff = revision_diff(
        '<img src=x onerror="alert(1)">\n', '<img src=y onerror="alert(2)">\n', "<b>A</b>", "B"
    )
    assert "<img" not in diff.html and "<b>A" not in diff.html
    assert "&lt;img src=<del>x</del>" in diff.html and "&quot;alert(<ins>2</ins>)" in diff.html


def test_same_text_says_so():
    """Two equal revisions: no table, a message."""
    diff = _timed("same\n", "same\n")
    assert diff.html == "" and "same text" in diff.message


@pytest.mark.parametrize(
    "edit",
    [
        # Two 2,000-line revisions would take 46 s with difflib's table.
        pytest.param(lambda lines: _lines(2_000, 2), id="every line rewritten"),
        # A thousand lines each edited a little: difflib's table failed (RecursionError).
        pytest.param(lambda lines: [line + " edited" for line in lines], id="every line edited"),
    ],
)
def test_two_long_rewritten_revisions_are_compared_quickly(edit):
    """Every removed and added line is shown, in well under the time bound."""
    old = _lines(2_000, 1)
    new = edit(old)
    diff = _timed("\n".join(old), "\n".join(new))
    assert (diff.removed, diff.added) == (2_000, 2_000)
    assert len(_rows(diff, "removed")) == 2_000 and len(_rows(diff, "added")) == 2_000


def test_each_edited_line_of_a_long_revision_marks_its_new_word():
    """The word appended to each of 2,000 lines is what is marked on each."""
    old = _lines(2_000, 1)
    diff = _timed("\n".join(old), "\n".join(line + " edited" for line in old))
    assert sum("<ins> edited</ins>" in row for row in _rows(diff, "added")) == 2_000


def test_word_marks_stop_at_the_budget_with_a_message():
    """Long lines rewritten everywhere: past MAX_WORD_PAIRS word comparisons the remaining
    lines are shown whole, and the message says so; the time stays bounded."""
    words = int((MAX_WORD_PAIRS / 20) ** 0.5) + 50  # each pair costs over a twentieth
    old = [" ".join(_lines(1, n)[0] for _ in range(words // 12)) for n in range(40)]
    new = [line + " more" for line in old]
    diff = _timed("\n".join(old), "\n".join(new))
    assert "word by word" in diff.message
    marked = sum("<ins>" in row for row in _rows(diff, "added"))
    assert 0 < marked < 40


def test_revisions_over_the_line_limit_are_not_compared():
    """Past MAX_LINES: no diff, a message with both sizes."""
    diff = _timed("x\n" * (MAX_LINES + 1), "y\n")
    assert diff.html == ""
    assert f"{MAX_LINES + 1:,} lines" in diff.message and "too long to compare" in diff.message


@pytest.mark.django_db
def test_the_revisions_page_shows_a_long_diff_in_time(client, author, note):
    """/write/<id>/revisions/?a=&b= on two 2,000-line revisions answers quickly with every
    changed line."""
    first = services.note_save(
        note_id=note.pk, user=author, base_version=note.version,
        fields={"body": "\n".join(_lines(2_000, 8))},
    )  # fmt: skip
    services.note_save(
        note_id=note.pk, user=author, base_version=first.note.version,
        fields={"body": "\n".join(_lines(2_000, 9))},
    )  # fmt: skip
    client.force_login(author)
    start = time.process_time()
    response = client.get(f"/write/{note.pk}/revisions/?a=2&b=3")
    assert time.process_time() - start < 5.0
    text = response.content.decode()
    assert response.status_code == 200
    assert text.count('<tr class="diff-added">') == 2_000
