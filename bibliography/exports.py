"""Describe a note as a citable work: BibTeX and RIS ("cite this note"; its CSL-JSON and its
formatted reference go through citation-js, notes.citing).

Pure functions over a `CitableWork`, so the formats are tested without a database.
"""

from __future__ import annotations

import codecs
import datetime as dt
import functools
import re
from dataclasses import dataclass

import latexcodec  # noqa: F401 - registers the ulatex codec

from .display import shortened, value_head

# Characters BibTeX gives a meaning to; escaped so titles and names survive as written.
_BIBTEX_SPECIAL = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "%": r"\%", "&": r"\&",
                   "#": r"\#", "$": r"\$", "_": r"\_", "~": r"\textasciitilde{}",
                   "^": r"\textasciicircum{}"}  # fmt: skip


@dataclass(frozen=True)
class Person:
    name: str  # display name, "Ada Novak", or a handle when that is all there is
    is_handle: bool = False

    @property
    def family_given(self) -> tuple[str, str]:
        parts = self.name.split()
        if self.is_handle or len(parts) < 2:
            return self.name, ""
        return parts[-1], " ".join(parts[:-1])


@dataclass(frozen=True)
class CitableWork:
    key: str
    title: str
    authors: tuple[Person, ...]
    date: dt.datetime
    site: str
    url: str
    accessed: dt.date
    summary: str = ""


def _bibtex_escape(value: str) -> str:
    return "".join(_BIBTEX_SPECIAL.get(char, char) for char in value)


def _bibtex_author(person: Person) -> str:
    if person.is_handle or len(person.name.split()) < 2:
        return "{" + _bibtex_escape(person.name) + "}"  # a corporate or handle name, kept whole
    family, given = person.family_given
    return f"{_bibtex_escape(family)}, {_bibtex_escape(given)}"


def bibtex_key(work: CitableWork) -> str:
    family = work.authors[0].family_given[0] if work.authors else "note"
    stem = re.sub(r"[^A-Za-z0-9]", "", family) or "note"
    return f"{stem}{work.date.year}-{re.sub(r'[^a-z0-9-]', '', work.key.lower())[:40]}"


def bibtex_fields(work: CitableWork) -> list[tuple[str, str]]:
    """The note's BibTeX fields, each value as written between the field's braces (the month
    as its macro, jan … dec)."""
    fields = [
        ("title", "{" + _bibtex_escape(work.title) + "}"),
        ("author", " and ".join(_bibtex_author(person) for person in work.authors)),
        ("year", str(work.date.year)),
        ("month", work.date.strftime("%b").lower()),
        ("date", work.date.date().isoformat()),
        ("organization", _bibtex_escape(work.site)),
        ("url", work.url),
        ("urldate", work.accessed.isoformat()),
    ]
    if work.summary:
        fields.append(("abstract", _bibtex_escape(work.summary)))
    return [(name, value) for name, value in fields if value]


def to_bibtex(work: CitableWork) -> str:
    body = ",\n".join(
        f"  {name} = {value}" if name == "month" else f"  {name} = {{{value}}}"
        for name, value in bibtex_fields(work)
    )
    return f"@online{{{bibtex_key(work)},\n{body}\n}}\n"


def to_ris(work: CitableWork) -> str:
    lines = ["TY  - ELEC", f"TI  - {work.title}"]
    for person in work.authors:
        family, given = person.family_given
        lines.append(f"AU  - {family}, {given}" if given else f"AU  - {family}")
    lines += [
        f"PY  - {work.date.year}",
        f"DA  - {work.date.strftime('%Y/%m/%d')}",
        f"T2  - {work.site}",
        f"PB  - {work.site}",
        f"UR  - {work.url}",
        f"Y2  - {work.accessed.strftime('%Y/%m/%d')}",
    ]
    if work.summary:
        lines.append(f"AB  - {' '.join(work.summary.split())}")
    lines.append("ER  - ")
    # RIS is line-based: a value with a line break would start a bogus tag.
    return "\r\n".join(" ".join(line.splitlines()) for line in lines) + "\r\n"


_STRING_BLOCK = re.compile(r"^[ \t]*@string[ \t]*\{(?:[^{}]|\{[^{}]*\})*\}", re.I | re.M)
_STRING_NAME = re.compile(r"@string[ \t]*\{[ \t]*([\w-]+)", re.I)
_WORD = re.compile(r"[\w-]+")


def string_blocks(raw: str) -> list[tuple[str, str]]:
    """The @string definitions of a file's raw text, as (name, definition) pairs."""
    blocks = []
    for block in _STRING_BLOCK.finditer(raw):
        text = block.group(0).strip()
        name = _STRING_NAME.match(text)
        if name is not None:
            blocks.append((name.group(1), text))
    return blocks


def macros_used(entries: list[str], blocks: list[tuple[str, str]]) -> list[str]:
    """The definitions among `blocks` (string_blocks) that `entries` (BibTeX sources) use."""
    body = "\n\n".join(entries)
    # Only a name written somewhere in the entries can be used: the search for its use, a
    # pass over them all, is made for those names alone.
    words = {word.lower() for word in _WORD.findall(body)}
    macros = []
    for name, text in blocks:
        if name.lower() not in words:
            continue
        if re.search(rf"=\s*(?:[^,}}]*#\s*)?{re.escape(name)}\b", body, re.I):
            macros.append(text)
    return list(dict.fromkeys(macros))


def string_macros(entries: list[str], files: list[str]) -> list[str]:
    """The @string definitions of `files` (raw texts) that `entries` (BibTeX sources) use."""
    return macros_used(entries, [block for raw in files for block in string_blocks(raw)])


def bibtex_with_macros(entries: list[str], files: list[str], macros: list[str] = ()) -> str:
    """Entries as written, preceded by the @string macros they use, so the file parses alone:
    those `files` define, after `macros` given as they are (definitions kept elsewhere)."""
    used = string_macros(entries, files)
    return "\n\n".join([*dict.fromkeys([*macros, *used]), *entries]) + "\n"


# What one value of a Scholar reference shows, in characters: a title or a name is far
# shorter; a longer value is cut (with "…") before LaTeX is decoded, so the work on one entry
# is bounded whatever the file holds. At most SCHOLAR_AUTHORS names are listed.
SCHOLAR_VALUE_CHARS = 500
SCHOLAR_AUTHORS = 20
# A value without these (commands, math, ties, comments and latexcodec's ligatures: dashes,
# quotes, inverted marks) decodes to itself less its braces: no need for pybtex and
# latexcodec, which cost about 0.1 ms a value, for every value of an upload.
_LATEX_SPECIAL = re.compile(r"[\\$~%]|--|''|``|[?!]`")


# Accented letters, most of what names and titles hold in LaTeX (`\"o`, `\'{e}`, `\c c`,
# `\ss`): each spelling is decoded by latexcodec once, and a value left with no other command
# takes the quick way. A letter command swallows the space after it, as TeX reads it.
_ACCENTS = re.compile(
    r"""\\[\"'`^~=.]\s*(?:\{(?:[A-Za-z]|\\[ij])\}|[A-Za-z]|\\[ij](?![A-Za-z]))"""
    r"|\\[cvuHkrdb](?:\s+[A-Za-z]|\s*\{[A-Za-z]\})"
    r"|\\(?:ss|ae|AE|oe|OE|aa|AA|o|O|l|L|i|j)(?![A-Za-z])\s?"
)


@functools.lru_cache(maxsize=256)
def _accent_text(spelling: str) -> str:
    decoded = codecs.decode(spelling.strip(), "ulatex")
    return decoded if "\\" not in decoded else spelling


def _accent(match: re.Match) -> str:
    return _accent_text(match.group())


def scholar_reference(entry) -> str:
    """One entry as Google Scholar's citation_reference value (key=value; pairs), each value as
    plain text of at most SCHOLAR_VALUE_CHARS characters. Computed when a file is read and
    stored with the entry (BibEntry.scholar): pages only print it."""
    parts = []
    fields = entry.fields
    if fields.get("title"):
        parts.append(f"citation_title={_plain(fields['title'])}")
    for name in entry.persons.get("author", [])[:SCHOLAR_AUTHORS]:
        parts.append(f"citation_author={_plain(name)}")
    if fields.get("year"):
        parts.append(f"citation_publication_date={_cut(fields['year'])}")
    venue = fields.get("journal") or fields.get("booktitle")
    if venue:
        parts.append(f"citation_journal_title={_plain(venue)}")
    for name in ("volume", "number", "doi"):
        if fields.get(name):
            parts.append(f"citation_{'issue' if name == 'number' else name}={_cut(fields[name])}")
    if fields.get("pages"):
        first, _, last = _cut(fields["pages"]).replace("--", "-").partition("-")
        parts.append(f"citation_firstpage={first.strip()}")
        if last:
            parts.append(f"citation_lastpage={last.strip()}")
    return "; ".join(parts)


def _cut(value: str) -> str:
    return shortened(value, SCHOLAR_VALUE_CHARS)


def _plain(value: str) -> str:
    """BibTeX text as readers see it, accents decoded and braces gone, at most
    SCHOLAR_VALUE_CHARS characters: only the start of a longer value is decoded."""
    start, cut = value_head(value, SCHOLAR_VALUE_CHARS)
    text = _decoded(start)
    return _cut(text + "…" if cut else text)


@functools.lru_cache(maxsize=4096)
def _decoded(value: str) -> str:
    # Remembered: names recur across a file, and a file's entries are read together.
    accented = _ACCENTS.sub(_accent, value) if "\\" in value else value
    if not _LATEX_SPECIAL.search(accented):
        return " ".join(accented.replace("{", "").replace("}", "").split())
    try:
        from pybtex.richtext import Text

        return str(Text.from_latex(value))
    except Exception:  # noqa: BLE001 - a value pybtex cannot read is shown as written
        return value.replace("{", "").replace("}", "")
