"""One bibliography entry between the database and citation-js: its data (EntryData), the
BibTeX object citation-js's own parser would make of it (bibtex_object, math kept out as
placeholders), and the HTML citeproc-js gives back for it, read as a reader sees it: the
number's margin dropped, LaTeX commands citation-js left decoded (`{\\TeX}book` → TeXbook), the
math's TeX put back (with_math_source, restore_math), or the entry's key and fields when it
cannot be formatted (unformatted_html).
"""

from __future__ import annotations

import codecs
import hashlib
import html
import json
import re
from dataclasses import dataclass

import latexcodec  # noqa: F401 - registers the ulatex codec

from scidraft.markup.plaintext import html_text

# Math placeholders in formatted HTML: private-use characters, as the engine's own stash
# uses (other ones), which neither citation-js, citeproc-js nor nh3 alter.
MATH_OPEN, MATH_CLOSE = "\ue010", "\ue011"
MATH_TOKEN = re.compile(f"{MATH_OPEN}(\\d+){MATH_CLOSE}")
# Inline math in a field: $…$ not preceded by a backslash (\$ is a dollar sign).
_MATH = re.compile(r"(?<!\\)\$((?:[^$\\]|\\.)+)(?<!\\)\$", re.DOTALL)
# Fields that are addresses or identifiers: never math.
_VERBATIM = frozenset({"url", "doi", "eprint", "file", "isbn", "issn", "pmid", "arxivid"})
_ENTRY = re.compile(r'^\s*<div[^>]*class="csl-entry"[^>]*>(.*)</div>\s*$', re.DOTALL)
_LEFT_MARGIN = re.compile(
    r'^\s*<div class="csl-left-margin">.*?</div>\s*<div class="csl-right-inline">(.*)</div>\s*$',
    re.DOTALL,
)
# A LaTeX command citation-js left in the text, and the logos it does not know.
_LEFT_COMMAND = re.compile(r"\\([A-Za-z]+)(?:\{\})?")
_LOGOS = {"TeX": "TeX", "LaTeX": "LaTeX", "LaTeXe": "LaTeX2ε", "BibTeX": "BibTeX",
          "XeTeX": "XeTeX", "LuaTeX": "LuaTeX", "ConTeXt": "ConTeXt", "AmS": "AMS"}  # fmt: skip
# pybtex expands the month macros (jan … dec) to English names, citation-js to "01" … "12":
# `month = "30~" # jun` reads "30~06" there, which citation-js's date parser skips (the theme
# prints the year alone), and "30~June" here, which it would read as a day.
_MONTH_NAMES = re.compile(
    r"\b(January|February|March|April|May|June|July|August|September|October|November|December)\b"
)
_MONTH_NUMBERS = {name: f"{number:02d}" for number, name in enumerate(
    ["January", "February", "March", "April", "May", "June", "July", "August", "September",
     "October", "November", "December"], start=1)}  # fmt: skip


@dataclass(frozen=True)
class EntryData:
    key: str
    entry_type: str
    fields: dict[str, str]
    persons: dict[str, list[str]]


def entry_data(entry) -> EntryData:
    """EntryData of a BibEntry row or a ParsedEntry."""
    return EntryData(entry.key, entry.entry_type, entry.fields, entry.persons)


def bibtex_object(data: EntryData) -> tuple[dict, tuple[str, ...]]:
    """The entry as citation-js's BibTeX parser reads it from a file (fields lower-case, values
    with their braces, names joined by "and"), and the TeX of the math taken out of it."""
    formulas: list[str] = []

    def stash(match: re.Match) -> str:
        formulas.append(match.group(1))
        return f"{MATH_OPEN}{len(formulas) - 1}{MATH_CLOSE}"

    properties = {}
    for name, value in data.fields.items():
        value = value if isinstance(value, str) else str(value)
        if "$" in value and name.lower() not in _VERBATIM:
            value = _MATH.sub(stash, value)
        if name.lower() == "month":
            value = _MONTH_NAMES.sub(lambda match: _MONTH_NUMBERS[match.group(1)], value)
        properties[name.lower()] = value
    for role, names in data.persons.items():
        properties[role.lower()] = " and ".join(str(name) for name in names)
    return {"type": data.entry_type, "label": data.key, "properties": properties}, tuple(formulas)


def fingerprint(data: EntryData) -> str:
    payload = json.dumps(
        [data.key, data.entry_type, data.fields, data.persons], sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def entry_html(raw: str) -> str:
    """The entry's own HTML inside citeproc's csl-entry div, without its number (the list
    prints the theme's [n])."""
    match = _ENTRY.match(raw)
    inner = match.group(1) if match else raw
    margin = _LEFT_MARGIN.match(inner)
    inner = margin.group(1) if margin else inner
    return decode_left_commands(inner.strip())


def _decode_command(match: re.Match) -> str:
    name = match.group(1)
    if name in _LOGOS:
        return _LOGOS[name]
    try:
        decoded = codecs.decode(f"\\{name}", "ulatex").strip()
    except (ValueError, UnicodeDecodeError):
        decoded = "\\"
    if not decoded.startswith("\\"):
        return decoded
    # `{\TeX}book` reaches us as \TeXbook: a logo followed by the rest of the word.
    for logo in sorted(_LOGOS, key=len, reverse=True):
        if name.startswith(logo):
            return _LOGOS[logo] + name[len(logo) :]
    return match.group(0)


def decode_left_commands(markup: str) -> str:
    """Commands citation-js did not decode, decoded in the text (never inside a tag)."""
    if "\\" not in markup:
        return markup
    parts = re.split(r"(<[^>]+>)", markup)
    return "".join(
        part if part.startswith("<") else _LEFT_COMMAND.sub(_decode_command, part) for part in parts
    )


def unformatted_html(data: EntryData) -> str:
    """The entry shown as its key and fields, for an entry citeproc cannot format."""
    parts = [f"{html.escape(role)} = {{{html.escape(' and '.join(map(str, names)))}}}"
             for role, names in data.persons.items()]  # fmt: skip
    parts += [f"{html.escape(name)} = {{{html.escape(str(value))}}}"
              for name, value in data.fields.items()]  # fmt: skip
    return (
        f'<span class="ref-unformatted"><code>{html.escape(data.key)}</code> '
        f"({html.escape(data.entry_type)}): {', '.join(parts)}</span>"
    )


def with_math_source(markup: str, formulas: tuple[str, ...]) -> str:
    """Formatted HTML with each math placeholder back as `$TeX$` (escaped)."""
    if not formulas:
        return markup
    return MATH_TOKEN.sub(
        lambda match: html.escape(f"${formulas[int(match.group(1))]}$", quote=False), markup
    )


def plain_text(markup: str, formulas: tuple[str, ...] = ()) -> str:
    """Formatted HTML as the text a reader sees (read from its elements, entities decoded)."""
    return " ".join(html_text(with_math_source(markup, formulas)).split())


def restore_math(value, formulas: tuple[str, ...]):
    if not formulas:
        return value
    if isinstance(value, str):
        return MATH_TOKEN.sub(lambda match: f"${formulas[int(match.group(1))]}$", value)
    if isinstance(value, list):
        return [restore_math(item, formulas) for item in value]
    if isinstance(value, dict):
        return {key: restore_math(item, formulas) for key, item in value.items()}
    return value
