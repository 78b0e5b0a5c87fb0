"""Describe a note as a citable work: BibTeX and RIS ("cite this note"; its CSL-JSON and its
formatted reference go through citation-js, notes.citing).

Pure functions over a `CitableWork`, so the formats are tested without a database.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass

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


def string_macros(entries: list[str], files: list[str]) -> list[str]:
    """The @string definitions of `files` (raw texts) that `entries` (BibTeX sources) use."""
    body = "\n\n".join(entries)
    # Only a name written somewhere in the entries can be used: the search for its use, a
    # pass over them all, is made for those names alone.
    words = {word.lower() for word in _WORD.findall(body)}
    macros = []
    for raw in files:
        for block in _STRING_BLOCK.finditer(raw):
            name = _STRING_NAME.match(block.group(0).strip())
            if name is None or name.group(1).lower() not in words:
                continue
            if re.search(rf"=\s*(?:[^,}}]*#\s*)?{re.escape(name.group(1))}\b", body, re.I):
                macros.append(block.group(0).strip())
    return list(dict.fromkeys(macros))


def bibtex_with_macros(entries: list[str], files: list[str], macros: list[str] = ()) -> str:
    """Entries as written, preceded by the @string macros they use, so the file parses alone:
    those `files` define, after `macros` given as they are (definitions kept elsewhere)."""
    used = string_macros(entries, files)
    return "\n\n".join([*dict.fromkeys([*macros, *used]), *entries]) + "\n"


def scholar_reference(entry) -> str:
    """One cited entry as Google Scholar's citation_reference value (key=value; pairs)."""
    parts = []
    fields = entry.fields
    if fields.get("title"):
        parts.append(f"citation_title={_plain(fields['title'])}")
    for name in entry.persons.get("author", [])[:20]:
        parts.append(f"citation_author={_plain(name)}")
    if fields.get("year"):
        parts.append(f"citation_publication_date={fields['year']}")
    venue = fields.get("journal") or fields.get("booktitle")
    if venue:
        parts.append(f"citation_journal_title={_plain(venue)}")
    for name in ("volume", "number", "doi"):
        if fields.get(name):
            parts.append(f"citation_{'issue' if name == 'number' else name}={fields[name]}")
    if fields.get("pages"):
        first, _, last = fields["pages"].replace("--", "-").partition("-")
        parts.append(f"citation_firstpage={first.strip()}")
        if last:
            parts.append(f"citation_lastpage={last.strip()}")
    return "; ".join(parts)


@functools.lru_cache(maxsize=20_000)
def _plain(value: str) -> str:
    """BibTeX text as readers see it: accents decoded, braces gone. Remembered: latexcodec
    costs about a millisecond a value, and a note page decodes every cited entry's title,
    authors and journal on each render (its Scholar tags)."""
    try:
        from pybtex.richtext import Text

        return str(Text.from_latex(value))
    except Exception:  # noqa: BLE001 - a value pybtex cannot read is shown as written
        return value.replace("{", "").replace("}", "")
