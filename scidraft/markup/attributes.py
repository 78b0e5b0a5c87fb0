"""Goldmark's attribute syntax, `{#id .class name=value}`, as Hugo reads it.

Hugo takes attributes after a heading on its line (`## Title {#intro}`), on the line after a
block (`{.table-academic}` under a table) and in a code fence's info string
(```` ```go {linenos=true,hl_lines=[2]} ````). This is goldmark's `parser.ParseAttributes`
(parser/attribute.go), ported: the same syntax is accepted and the same is refused, so a line
that is not attributes for Hugo stays text here too.
"""

from __future__ import annotations

import re

# Goldmark's `util.IsPunct`: ASCII punctuation.
ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_ASCII_SPACE = frozenset(" \t\n\x0b\x0c\r")
_NAME_START = re.compile(r"[A-Za-z_:]")
_NAME = re.compile(r"[A-Za-z0-9_:.\-]*")
# A sign, digits (at least one), an optional fraction and exponent (parseAttributeNumber).
_NUMBER = re.compile(r"([+-]?)([0-9]+(?:\.[0-9]*)?)(?:([eE][+-]?)([0-9]*))?")
_STRING_ESCAPES = {'"': '"', "/": "/", "\\": "\\", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
                   "t": "\t"}  # fmt: skip

Value = str | bool | float | list | dict


def _skip_spaces(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _ASCII_SPACE and text[pos] != "\n":
        pos += 1
    return pos


def parse(text: str, pos: int = 0) -> tuple[dict[str, Value], int] | None:
    """Attributes at `text[pos:]` (spaces first are skipped) and the offset after the closing
    brace, or None when there are none there. Classes given twice are joined, as Goldmark does;
    any other name given twice keeps its last value (Goldmark's SetAttribute replaces)."""
    pos = _skip_spaces(text, pos)
    if pos >= len(text) or text[pos] != "{":
        return None
    pos += 1
    attributes: dict[str, Value] = {}
    while True:
        if pos < len(text) and text[pos] == "}":
            return attributes, pos + 1
        parsed = _attribute(text, pos)
        if parsed is None:
            return None
        name, value, pos = parsed
        if name == "class" and "class" in attributes:
            attributes["class"] = f"{attributes['class']} {value}"
        else:
            attributes[name] = value
        pos = _skip_spaces(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_spaces(text, pos + 1)


def _attribute(text: str, pos: int) -> tuple[str, Value, int] | None:
    pos = _skip_spaces(text, pos)
    if pos >= len(text):
        return None
    char = text[pos]
    if char in "#.":
        start = end = pos + 1
        while (
            end < len(text)
            and text[end] not in _ASCII_SPACE
            and (text[end] not in ASCII_PUNCTUATION or text[end] in "_-:.")
        ):
            end += 1
        return ("id" if char == "#" else "class"), text[start:end], end
    if not _NAME_START.match(text, pos):
        return None
    end = _NAME.match(text, pos).end()
    name = text[pos:end]
    pos = _skip_spaces(text, end)
    if pos >= len(text) or text[pos] != "=":
        return None
    parsed = _value(text, _skip_spaces(text, pos + 1))
    if parsed is None:
        return None
    value, pos = parsed
    if name == "class" and not isinstance(value, str):
        return None
    return name, value, pos


def _value(text: str, pos: int) -> tuple[Value, int] | None:
    pos = _skip_spaces(text, pos)
    if pos >= len(text):
        return None
    char = text[pos]
    if char == "{":
        return parse(text, pos)
    if char == "[":
        return _array(text, pos + 1)
    if char == '"':
        return _string(text, pos + 1)
    if char in "+-" or char.isdigit() and char.isascii():
        match = _NUMBER.match(text, pos)
        if match is None:
            return None
        sign, digits, exponent, power = match.groups()
        try:
            number = float(digits + (exponent + power if exponent else ""))
        except ValueError:  # "1e": Go's ParseFloat refuses it too
            return None
        return (-number if sign == "-" else number), match.end()
    if not _NAME_START.match(text, pos):
        return None
    end = _NAME.match(text, pos).end()
    word = text[pos:end]
    return (True if word == "true" else False if word == "false" else word), end


def _array(text: str, pos: int) -> tuple[list, int] | None:
    values: list = []
    while True:
        comma = False
        if values and pos < len(text) and text[pos] == ",":
            pos += 1
            comma = True
        if pos < len(text) and text[pos] == "]":
            return (values, pos + 1) if not comma else None
        parsed = _value(text, _skip_spaces(text, pos))
        if parsed is None:
            return None
        value, pos = parsed
        values.append(value)
        pos = _skip_spaces(text, pos)


def _string(text: str, pos: int) -> tuple[str, int] | None:
    out = []
    while pos < len(text) and text[pos] != "\n":
        char = text[pos]
        if char == "\\" and pos + 1 < len(text):
            escaped = _STRING_ESCAPES.get(text[pos + 1])
            if escaped is not None:
                out.append(escaped)
                pos += 2
                continue
            out.append("\\")
            pos += 1
            continue
        if char == '"':
            return "".join(out), pos + 1
        out.append(char)
        pos += 1
    return None


def as_html_value(value: Value) -> str:
    """An attribute value as Goldmark writes it into HTML (numbers without a needless .0)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(as_html_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={as_html_value(v)}" for k, v in value.items()) + "}"
    return value
