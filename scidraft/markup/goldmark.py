"""What Hugo's Goldmark does that CommonMark leaves open, ported as markdown-it rules.

- the typographer (goldmark extension/typographer.go, Hugo's defaults): `--` → –, `---` → —,
  `...` → …, `<<` → «, `>>` → », and curly quotes and apostrophes by Goldmark's own rules;
- linkify (goldmark extension/linkify.go): bare `http://`, `https://`, `ftp://` and `www.` URLs
  and e-mail addresses, after a space, `*`, `_`, `~`, `(` or at a line's start; `www.` links
  get Hugo's `linkifyProtocol`, https;
- heading ids as Hugo's default `github` anchors, with Hugo's suffixes for duplicates
  (hugo markup/goldmark/autoid.go).

The rules read the source around them (the character before, the rest of the line) exactly as
Goldmark's inline parsers do, so quotes and links come out where Hugo puts them. linkify-it-py
was measured against Hugo and differs (it links bare domains such as example.com and
localhost, keeps a trailing `_` or `&amp;`): Goldmark's rules are ported instead.
"""

from __future__ import annotations

import re
import unicodedata

from .stash import CLOSE, FILL, OPEN

# --- Character classes, as Go's unicode package and goldmark's util define them ---------------

_PLACEHOLDER = frozenset((OPEN, CLOSE, FILL))
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_ASCII_SPACE = frozenset(" \t\n\x0b\x0c\r")
# Go's unicode.IsSpace: the ASCII spaces, U+0085, U+00A0 and the Z categories.
_GO_SPACE_EXTRA = frozenset("\x85\xa0")


def _category(char: str) -> str:
    return unicodedata.category(char)


def is_space(char: str) -> bool:
    """unicode.IsSpace."""
    return char in _ASCII_SPACE or char in _GO_SPACE_EXTRA or _category(char).startswith("Z")


def is_punct(char: str) -> bool:
    """unicode.IsPunct. A placeholder counts as punctuation: it stands for `$…$`, `` `…` ``,
    `\\(…\\)` or a shortcode, all of which Goldmark sees starting and ending in punctuation."""
    return char in _PLACEHOLDER or _category(char).startswith("P")


def is_punct_or_symbol(char: str) -> bool:
    """goldmark's util.IsPunctRune: a punctuation or symbol character (or a placeholder)."""
    return char in _PLACEHOLDER or _category(char)[0] in "PS"


def is_letter(char: str) -> bool:
    return char.isalpha()


def is_digit(char: str) -> bool:
    return char.isdecimal()


# --- Typographer ---------------------------------------------------------------------------

LSQUO, RSQUO, LDQUO, RDQUO = "\u2018", "\u2019", "\u201c", "\u201d"
_DASHES_AND_DOTS = {"---": "\u2014", "--": "\u2013", "...": "\u2026"}
_ANGLE_QUOTES = {"<<": "\u00ab", ">>": "\u00bb"}


# Characters of the line the quote rules look at: they test at most four after the quote, and
# the line's length only against numbers up to four.
_LOOKAHEAD = 8
_RUN = {"'": re.compile("'+"), '"': re.compile('"+')}


def _end_of_line(state, pos: int) -> int:
    """Where the line holding `pos` ends, remembered: str.find from every quote of a
    paragraph written on one line would cross it again each time."""
    cached = getattr(state, "goldmark_line", None)
    if cached is not None and cached[0] <= pos <= cached[1]:
        return cached[1]
    end = state.src.find("\n", pos)
    end = len(state.src) if end < 0 else end
    state.goldmark_line = (pos, end)
    return end


def _line(state, pos: int) -> str:
    """The start of the rest of the source line from `pos`, with its line break: goldmark's
    PeekLine, as far as its rules look. The last line of a paragraph keeps its line break in
    Goldmark, not a table cell's or a heading's (the stage says which in env["line_end"])."""
    src = state.src
    end = _end_of_line(state, pos)
    if end - pos >= _LOOKAHEAD:
        return src[pos : pos + _LOOKAHEAD]
    return src[pos : end + 1] if end < len(src) else src[pos:] + state.env.get("line_end", "")


def _after_run(state, pos: int) -> str:
    """The character after the run of quotes at `pos` (one found once per run)."""
    src = state.src
    cached = getattr(state, "goldmark_run", None)
    if cached is None or not cached[0] <= pos < cached[1]:
        cached = state.goldmark_run = (pos, _RUN[src[pos]].match(src, pos).end())
    end = cached[1]
    return src[end] if end < len(src) else " "


def _flanking(state, pos: int, before: str) -> tuple[bool, bool]:
    """(can open, can close) of the delimiter run at `pos`: goldmark's ScanDelimiter."""
    after = _after_run(state, pos)
    before_punct, before_space = is_punct_or_symbol(before), is_space(before)
    after_punct, after_space = is_punct_or_symbol(after), is_space(after)
    left = not after_space and (not after_punct or before_space or before_punct)
    right = not before_space and (not before_punct or after_space or after_punct)
    return left, right


def _closes(line: str, can_open: bool, can_close: bool) -> bool:
    if can_close and not can_open:
        return True
    return (
        can_close
        and can_open
        and len(line) > 1
        and is_punct(line[1])
        and (len(line) == 2 or line[2] in _ASCII_PUNCTUATION or line[2] in _ASCII_SPACE)
    )


def _quote(state, pos: int, before: str) -> str | None:
    """The curly quote for the `'` or `"` at `pos`, or None to keep it straight."""
    line = _line(state, pos)
    can_open, can_close = _flanking(state, pos, before)
    # Quotes left open, per block (goldmark's unclosedCounter, reset when a block closes):
    # markdown-it parses each block's inline content with a state of its own.
    single, double = getattr(state, "goldmark_quotes", (0, 0))
    replacement = None
    if line[0] == "'":
        if (  # decades: '90s
            can_open
            and not can_close
            and len(line) > 3
            and line[1].isdigit()
            and line[1].isascii()
            and line[2].isdigit()
            and line[2].isascii()
            and line[3] == "s"
            and (len(line) <= 4 or is_space(line[4]) or is_punct_or_symbol(line[4]))
        ):
            return RSQUO
        if len(line) > 1 and (is_punct(before) or is_space(before)) and line[1] in "tenl":
            return RSQUO  # 'twas, 'em, 'net, 'll
        if len(line) > 1 and (is_digit(before) or is_letter(before)) and is_letter(line[1]):
            return RSQUO  # between letters: don't, it's
        if can_open and not can_close:
            replacement = LSQUO
            if line[1:2] in ("s", "m", "t", "d") and (
                len(line) < 3 or line[2] in _ASCII_PUNCTUATION or line[2] in _ASCII_SPACE
            ):
                replacement = RSQUO
            if line[1:3] in ("ve", "ll", "re") and (
                len(line) < 4 or line[3] in _ASCII_PUNCTUATION or line[3] in _ASCII_SPACE
            ):
                replacement = RSQUO
            if replacement == LSQUO:
                single += 1
        elif len(line) > 2 and not is_digit(line[1]):
            # Goldmark's "plural possessive" test, whose first half never holds (line[0] is the
            # quote itself): any closing quote followed by two characters, the first no digit.
            replacement = RSQUO
        elif single > 0 and _closes(line, can_open, can_close):
            single -= 1
            replacement = RSQUO
    else:
        if can_open and not can_close:
            double += 1
            replacement = LDQUO
        elif double > 0 and _closes(line, can_open, can_close):
            if line[1:2] == '"' and is_digit(before):
                return None  # "Monitor 21""
            double -= 1
            replacement = RDQUO
    state.goldmark_quotes = (single, double)
    return replacement


def typographer(state, silent: bool) -> bool:
    """An inline rule for `'`, `"`, `-` and `.`: Goldmark's typographer, and a literal character
    where it changes nothing (no other rule reads these, so the character is taken here rather
    than offered to every rule in turn)."""
    pos, src = state.pos, state.src
    char = src[pos]
    length, replacement = 1, char
    if char == "-" or char == ".":
        for pattern in ("---", "--") if char == "-" else ("...",):
            if src.startswith(pattern, pos, state.posMax):
                length, replacement = len(pattern), _DASHES_AND_DOTS[pattern]
                break
        else:
            if char == "." and linkify_www(state, silent):
                return True
    elif char == "'" or char == '"':
        if not silent:
            before = src[pos - 1] if pos > 0 else "\n"
            replacement = _quote(state, pos, before) or char
    else:
        return False
    if not silent:
        state.append_pending(replacement)
    state.pos += length
    return True


def angle_quotes(state, silent: bool) -> bool:
    """`<<` and `>>`, tried after raw HTML and autolinks, as Goldmark's priorities have it."""
    pair = state.src[state.pos : state.pos + 2]
    if pair not in _ANGLE_QUOTES or state.pos + 2 > state.posMax:
        return False
    if not silent:
        state.append_pending(_ANGLE_QUOTES[pair])
    state.pos += 2
    return True


# --- Linkify -------------------------------------------------------------------------------

# goldmark's regexes (extension/linkify.go).
_URL_TAIL = r"[-a-zA-Z0-9@:%_+.~#!?&/=\(\);,'\">\^{}\[\]`]*"
_WWW = re.compile(r"www\.[-a-zA-Z0-9@:%._\+~#=]{1,256}\.[a-z]+(?:[/#?]" + _URL_TAIL + ")?")
_URL = re.compile(
    r"(?:http|https|ftp)://[-a-zA-Z0-9@:%._\+~#=]{1,256}\.[a-z]+(?::\d+)?(?:[/#?]"
    + _URL_TAIL.replace("#!", "#$!")
    + ")?"
)
_EMAIL_DOMAIN = re.compile(
    r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}"
    r"[a-zA-Z0-9])?)*"
)
# goldmark's emailTable: the characters of an address's local part.
_EMAIL_LOCAL = frozenset(
    "!#$%&'*+-./0123456789=?ABCDEFGHIJKLMNOPQRSTUVWXYZ^_`abcdefghijklmnopqrstuvwxyz{|}~"
)
# The longest local part looked back for (RFC 5321 allows 64): a body of 2 MB of `a@a@…`
# would otherwise look back to its start from every `@`.
_EMAIL_LOCAL_MAX = 256
# Where a link may start: after a space, one of these, or at a line's start.
_TRIGGERS = frozenset(" *_~(") | _ASCII_SPACE
_TRAILING = frozenset("?!.,:*_~")
# Hugo's [markup.goldmark.extensions] linkifyProtocol default.
WWW_PROTOCOL = "https"


def _starts_link(src: str, start: int) -> bool:
    return start == 0 or src[start - 1] in _TRIGGERS


def _trim(text: str) -> str:
    """goldmark's end of a matched URL: a final `.`, unbalanced `)`, a trailing entity
    reference, then trailing `?!.,:*_~`."""
    last = text[-1]
    if last == ".":
        text = text[:-1]
    elif last == ")":
        closing = text.count(")") - text.count("(")
        if closing > 0:
            text = text[:-closing]
    elif last == ";":
        index = len(text) - 2
        while index >= 0 and text[index].isascii() and text[index].isalnum():
            index -= 1
        if index != len(text) - 2 and index >= 0 and text[index] == "&":
            text = text[:index]
    end = len(text)
    while end > 1 and text[end - 1] in _TRAILING:
        end -= 1
    return text[:end]


def _push_link(state, start: int, text: str, href: str) -> None:
    consumed = state.pos - start  # already in pending: the scheme or the address's local part
    if consumed:
        state.pending = state.pending[:-consumed]
    token = state.push("link_open", "a", 1)
    token.attrs = {"href": state.md.normalizeLink(href)}
    token.markup, token.info = "linkify", "auto"
    token = state.push("text", "", 0)
    token.content = text
    token = state.push("link_close", "a", -1)
    token.markup, token.info = "linkify", "auto"
    state.pos = start + len(text)


def _taken(state, start: int) -> bool:
    """Whether src[start:pos] is still plain pending text (not part of an earlier token)."""
    length = state.pos - start
    return length <= len(state.pending) and state.pending.endswith(state.src[start : state.pos])


def linkify_www(state, silent: bool) -> bool:
    """At the `.` of `www.`: a bare www link."""
    src, pos = state.src, state.pos
    start = pos - 3
    if start < 0 or src[start:pos] != "www" or not _starts_link(src, start):
        return False
    if state.linkLevel > 0 or not _taken(state, start):
        return False
    match = _WWW.match(src, start, _end_of_line(state, start))
    if match is None:
        return False
    text = _trim(match.group(0))
    if len(text) <= 4 or start + len(text) > state.posMax:
        return False
    if not silent:
        _push_link(state, start, text, f"{WWW_PROTOCOL}://{text}")
    else:
        state.pos = start + len(text)
    return True


def linkify(state, silent: bool) -> bool:
    """At `:` after http, https or ftp, and at the `@` of an address: a bare link."""
    src, pos = state.src, state.pos
    char = src[pos]
    if state.linkLevel > 0:
        return False
    if char == ":":
        for scheme in ("https", "http", "ftp"):
            start = pos - len(scheme)
            if start >= 0 and src.startswith(scheme, start) and _starts_link(src, start):
                break
        else:
            return False
        if not _taken(state, start):
            return False
        match = _URL.match(src, start, _end_of_line(state, start))
        if match is None:
            return False
        text = _trim(match.group(0))
        href = text
    elif char == "@":
        start, limit = pos, max(0, pos - _EMAIL_LOCAL_MAX)
        while start > limit and src[start - 1] in _EMAIL_LOCAL:
            start -= 1
        if start == pos or not _starts_link(src, start) or src[start] in _ASCII_PUNCTUATION:
            return False
        if not _taken(state, start):
            return False
        domain = _EMAIL_DOMAIN.match(src, pos + 1)
        if domain is None or "." not in src[pos : domain.end() - 1]:
            return False
        end = domain.end()
        if src[end - 1] == ".":
            end -= 1
        if end < len(src) and src[end] in "-_":
            return False
        text = _trim(src[start:end])
        href = f"mailto:{text}"
    else:
        return False
    if start + len(text) <= pos or start + len(text) > state.posMax:
        return False
    if not silent:
        _push_link(state, start, text, href)
    else:
        state.pos = start + len(text)
    return True


# --- Heading ids ---------------------------------------------------------------------------


_NOT_ASCII_ANCHOR = re.compile(r"[^A-Za-z0-9_ -]+")


def anchor_name(text: str) -> str:
    """Hugo's `github` anchor: letters, digits and `_` lower-cased, spaces and `-` as `-`,
    everything else dropped (hugo markup/goldmark/autoid.go, sanitizeAnchorName)."""
    text = text.strip()
    if text.isascii():
        return _NOT_ASCII_ANCHOR.sub("", text).replace(" ", "-").lower()
    out = []
    for char in text:
        if char == " " or char == "-":
            out.append("-")
        elif char == "_" or char.isalpha() or char.isdecimal():
            lower = char.lower()
            out.append(lower[0])  # Go's unicode.ToLower maps one character to one
    return "".join(out)


class AnchorIds:
    """A page's heading ids: Hugo's idFactory (auto ids suffixed -1, -2… when taken)."""

    def __init__(self):
        self.taken: set[str] = set()
        # The last suffix given to each base: ids are only ever added, so the smallest free
        # suffix never goes down, and a page of 4,000 equal headings stays linear.
        self.suffix: dict[str, int] = {}

    def put(self, value: str) -> None:
        self.taken.add(value)

    def generate(self, text: str) -> str:
        base = anchor_name(text) or "heading"
        value, number = base, self.suffix.get(base, 0)
        if number:
            value = f"{base}-{number}"
        while value in self.taken:
            number += 1
            value = f"{base}-{number}"
        self.suffix[base] = number
        self.taken.add(value)
        return value
