"""The diff of two revisions, in bounded time (issue 16, item 5): difflib's side-by-side table
while it is cheap, exactly as before, and a list of removed and added lines past that."""

from __future__ import annotations

import difflib
import random
import re
import time

import pytest

from editor.revision_diff import MAX_COMPARED_PAIRS, MAX_LINES, revision_diff
from notes import services

_ANCHORS = re.compile(r"\b(difflib_chg_to|from|to)\d+_")
WORDS = [
    "the",
    "of",
    "a",
    "lemma",
    "proof",
    "we",
    "let",
    "then",
    "bound",
    "holds",
    "for",
    "all",
    "converges",
    "norm",
    "space",
]


def _lines(count: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return [" ".join(rnd.choice(WORDS) for _ in range(12)) for _ in range(count)]


def _timed(old: str, new: str):
    start = time.process_time()
    diff = revision_diff(old, new, "Revision 1", "Revision 2")
    cpu = time.process_time() - start
    assert cpu < 5.0, f"took {cpu:.1f} s of CPU time"
    return diff


@pytest.mark.parametrize(
    "edit",
    [
        # Two 2,000-line revisions took 46 s (regression rows for issue 16).
        pytest.param(lambda lines: _lines(2_000, 2), id="every line rewritten"),
        # A thousand lines each edited a little: difflib's recursion failed (RecursionError).
        pytest.param(lambda lines: [line + " edited" for line in lines], id="every line edited"),
    ],
)
def test_two_long_rewritten_revisions_are_listed_quickly_with_a_message(edit):
    """Each removed and added line is in the list, numbered, with a message saying why."""
    old = _lines(2_000, 1)
    new = edit(old)
    diff = _timed("\n".join(old), "\n".join(new))
    assert "long rewritten passages" in diff.message
    assert diff.html.count('class="diff_sub"') == 2_000
    assert diff.html.count('class="diff_add"') == 2_000
    assert f"<code>- {old[0]}</code>" in diff.html and f"<code>+ {new[-1]}</code>" in diff.html


def test_the_listed_diff_escapes_the_text_and_keeps_context():
    """Unchanged lines around a change are shown, and every line is escaped."""
    head = [f"<b>kept {n}</b>" for n in range(5)]
    tail = [f"tail {n}" for n in range(5)]
    diff = _timed("\n".join(head + _lines(200, 3) + tail), "\n".join(head + _lines(200, 4) + tail))
    assert diff.message
    assert "<code>  &lt;b&gt;kept 4&lt;/b&gt;</code>" in diff.html and "<b>kept" not in diff.html
    assert diff.html.count("<code>  tail ") == 3  # CONTEXT_LINES


def test_ordinary_edits_get_difflibs_table_unchanged():
    """A few changed lines (most edits): the side-by-side table difflib always made."""
    old = _lines(300, 5)
    new = [*old[:100], "a new line", *old[101:250], *old[260:]]
    diff = _timed("\n".join(old), "\n".join(new))
    assert diff.message == ""
    expected = difflib.HtmlDiff(wrapcolumn=80).make_table(old, new, "Revision 1", "Revision 2")
    # Each table numbers its ids (from<N>_, difflib_chg_to<N>__) with a counter of its own.
    assert _ANCHORS.sub("", diff.html) == _ANCHORS.sub("", expected)


def test_the_table_is_used_up_to_the_bound():
    """A rewritten passage of just under MAX_COMPARED_PAIRS pairs still gets the table."""
    side = int(MAX_COMPARED_PAIRS**0.5)
    diff = _timed("\n".join(_lines(side, 6)), "\n".join(_lines(side, 7)))
    assert diff.message == "" and 'class="diff"' in diff.html


def test_revisions_over_the_line_limit_are_not_compared():
    """Past MAX_LINES: no diff, a message with both sizes."""
    diff = _timed("x\n" * (MAX_LINES + 1), "y\n")
    assert diff.html == ""
    assert f"{MAX_LINES + 1:,} lines" in diff.message and "too long to compare" in diff.message


@pytest.mark.django_db
def test_the_revisions_page_shows_a_long_diff_in_time(client, author, note):
    """/write/<id>/revisions/?a=&b= on two 2,000-line revisions answers quickly, with the
    message and the listed lines."""
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
    assert 'role="status"' in text and "long rewritten passages" in text
    assert text.count('class="diff_add"') == 2_000
