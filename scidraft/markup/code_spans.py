"""Where code is in a body: fenced blocks and inline code spans, found as CommonMark finds them.

The code stage (code.py) stashes what is found here first, so that shortcodes, math and `\\cite`
written inside code examples stay literal; scans that need the author's offsets read the body
with its code blanked out (`mask_code`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it.common.html_re import HTML_TAG_RE
from markdown_it.rules_inline.autolink import AUTOLINK_RE, EMAIL_RE

from . import limits

_FENCE_OPEN = re.compile(r"(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*?)[ \t]*$")
# A container marker a fence may follow on its line: a quote's `>` or a list item's marker.
_CONTAINER = re.compile(r"[ \t]{0,3}(?:(?P<quote>>)[ \t]?|(?P<item>[-*+]|\d{1,9}[.)])[ \t]+)")
# A run of backticks not preceded by a backslash or another backtick, its content, and a run
# of the same length. The lookbehind comes after the first backtick (and looks back two
# characters) so that the regex starts with a literal, which the regex engine searches for
# quickly instead of trying the lookbehind at every position of the body.
INLINE_CODE = re.compile(r"(`(?<![\\`]`)`*)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


@dataclass
class Fence:
    indent: str
    info: str
    code: str
    line: int  # of the opening fence
    original: str  # the whole fence, as written
    closed: bool
    # What precedes the fence on its first line (indentation, a quote's `>`, a list marker),
    # and what keeps each further line in the same container (`>`, the item's indentation).
    prefix: str = ""
    continuation: str = ""


def _containers(line: str) -> tuple[int, list[tuple[str, int]]]:
    """Where the container markers at the start of `line` end, and each one: ("quote", 0)
    or ("item", the columns its content is indented by)."""
    position, found = 0, []
    while match := _CONTAINER.match(line, position):
        if match.group("quote"):
            found.append(("quote", 0))
        else:
            found.append(("item", len(line[position : match.end()].expandtabs(4))))
        position = match.end()
    return position, found


_QUOTE_MARK = re.compile(r"[ \t]{0,3}>[ \t]?")


def _inside(line: str, containers: list[tuple[str, int]]) -> str | None:
    """`line` without the markers and indentation of `containers`, or None when the line is
    outside them (a quote without its `>`, a list item's line indented less)."""
    position = 0
    for kind, width in containers:
        if kind == "quote":
            match = _QUOTE_MARK.match(line, position)
            if match is None:
                return None
            position = match.end()
        elif line[position:].strip():
            spaces = len(line) - len(line[position:].lstrip(" "))
            if spaces - position < width:
                return None
            position += width
    return line[position:]


def _could_open(line: str) -> bool:
    # Only a line with a fence after its indentation, or after container markers, can open
    # one: the common case is decided without a regex.
    stripped = line.lstrip(" \t")
    if stripped.startswith(("```", "~~~")):
        return True
    return bool(stripped) and stripped[0] in ">-*+0123456789" and ("```" in line or "~~~" in line)


def find_fences(text: str) -> list[tuple[int, int, Fence]]:
    """Fenced code blocks as (start offset, end offset, fence), CommonMark-style: at any
    indentation, and inside block quotes and after a list item's marker, where the fence ends
    with its container if it is not closed before."""
    found = []
    lines = text.splitlines(keepends=True)
    offset, index = 0, 0
    offsets = []
    for line in lines:
        offsets.append(offset)
        offset += len(line)
    offsets.append(offset)
    while index < len(lines):
        if len(found) % 1000 == 999 and limits.expired():
            break  # the rest stays as written: Markdown's fallback shows it escaped
        if not _could_open(lines[index]):
            index += 1  # the common case, without the regex
            continue
        first = lines[index].rstrip("\n")
        start, containers = _containers(first)
        match = _FENCE_OPEN.match(first, start)
        if not match and containers:
            start, containers = 0, []
            match = _FENCE_OPEN.match(first)
        if not match or (match.group("fence")[0] == "`" and "`" in match.group("info")):
            index += 1
            continue
        indent, fence = match.group("indent"), match.group("fence")
        # A closing fence is indented at most three columns more than the opening one.
        close = re.compile(
            rf"^[ \t]{{0,{len(indent.expandtabs(4)) + 3}}}{re.escape(fence[0])}{{{len(fence)},}}"
            r"[ \t]*$"
        )
        end = index + 1
        body_lines = []
        ended_with_container = False
        while end < len(lines):
            inner = _inside(lines[end].rstrip("\n"), containers) if containers else None
            if containers and inner is None:
                ended_with_container = True
                break
            content = lines[end] if not containers else inner + "\n"
            if close.match(content.rstrip("\n")):
                break
            body_lines.append(content)
            end += 1
        closed = end < len(lines) and not ended_with_container
        # Content lines lose the opening fence's indentation (a fence inside a list item).
        code = "".join(
            line[len(indent) :] if line.startswith(indent) else line.lstrip(" \t")
            for line in body_lines
        )
        stop = end + 1 if closed else end
        start_offset, end_offset = offsets[index], offsets[stop]
        original = text[start_offset:end_offset]
        if original.endswith("\n"):
            end_offset -= 1
            original = original[:-1]
        prefix = first[: match.start("fence")]
        continuation = "".join(
            "> " if kind == "quote" else " " * width for kind, width in containers
        )
        found.append(
            (
                start_offset,
                end_offset,
                Fence(
                    indent,
                    match.group("info"),
                    code.rstrip("\n"),
                    index + 1,
                    original,
                    closed or ended_with_container,
                    prefix,
                    continuation + indent,
                ),
            )
        )
        index = stop
    return found


# A line that ends a paragraph (CommonMark 4.8: a heading, quote, list item, fence, rule or
# setext underline can interrupt one): a code span cannot run across it.
_ENDS_PARAGRAPH = re.compile(
    r"[ ]{0,3}(?:#{1,6}(?:[ \t]|$)|>|[-*+][ \t]+\S|1[.)][ \t]+\S|`{3,}|~{3,}"
    r"|(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|=+[ \t]*|-+[ \t]*|(?:-[ \t]*){3,})$)"
)


_TAG_REACH = 2_000


def plain_code_span(text: str, match: re.Match) -> bool:
    """Whether a backtick pair found in `text` is a code span for CommonMark too: not one
    whose lines cross the end of a paragraph (block structure comes first, 6.1), nor one that
    opens inside a raw HTML tag or an autolink, which come first by starting first."""
    content = match.group(0)
    if "\n" in content:
        for line in content.split("\n")[1:]:
            if _ENDS_PARAGRAPH.match(line):
                return False
    start = match.start()
    # A tag or an autolink is short: looking further for its `<` and `>` would make a body of
    # 2 MB of code spans on one line quadratic.
    window = max(0, start - _TAG_REACH)
    line_start = text.rfind("\n", window, start) + 1 or window
    opening = text.rfind("<", line_start, start)
    if opening < 0 or text.find(">", opening, start) >= 0:
        return True
    closing = text.find(">", start, start + _TAG_REACH)
    if closing < 0:
        return True
    candidate = text[opening : closing + 1]
    inside = candidate[1:-1]
    tag = HTML_TAG_RE.match(candidate)
    if tag is not None and tag.end() == len(candidate):
        return False
    return not (AUTOLINK_RE.search(inside) or EMAIL_RE.search(inside))


def mask_code(text: str) -> str:
    """`text` with code blanked out, same length and line breaks: for scans that need offsets."""

    def blank(chunk: str) -> str:
        return "\n".join(" " * len(line) for line in chunk.split("\n"))

    pieces, cursor = [], 0
    for start, end, _ in find_fences(text):
        pieces += [text[cursor:start], blank(text[start:end])]
        cursor = end
    pieces.append(text[cursor:])
    return INLINE_CODE.sub(lambda match: blank(match.group(0)), "".join(pieces))
