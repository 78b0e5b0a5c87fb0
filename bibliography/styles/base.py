"""What every project style shares: LaTeX-aware fields, links, names, a lenient `format_entry`.

Decisions, documented once:

* Field text goes through pybtex's LaTeX decoding (`Sch{\\"o}lkopf` → Schölkopf); protected
  braces disappear but keep their content's case (`{BERT}` → BERT, even in BibTeX's sentence-case
  titles).
* Math: `$…$` is protected from case changes. pybtex decodes what is a plain symbol
  (`$\\alpha$` → α); anything else stays as TeX with its dollars (`$O(n^2)$`), for the math pass.
* `\\url{…}`, `\\href{…}{…}`, `\\emph`/`\\textit`, `\\textbf` and `\\texttt` at the top level of a
  field become a link, <em>, <strong> and <code>; `\\$`, `\\%`, `\\&`, `\\_`, `\\#` are unescaped.
* URLs and DOIs are links; the HTML backend escapes them and links only http(s)/ftp/mailto URLs.
"""

from __future__ import annotations

import re
from html import escape

from pybtex.backends.html import Backend as PybtexHtmlBackend
from pybtex.exceptions import PybtexError
from pybtex.richtext import HRef, String, Tag, Text
from pybtex.style import FormattedEntry
from pybtex.style.template import FieldIsMissing, node

from ..display import latex_to_text
from .decoding import decode_latex, text_of
from .memo import per_person, remembered
from .template import join, joined_text, rich_text

_TEXT_COMMANDS = {"emph": "em", "textit": "em", "textbf": "strong", "texttt": "code"}
_COMMAND = re.compile(r"\\(url|href|emph|textit|textbf|texttt)\s*\{")
_ESCAPED = {"$": "$", "%": "%", "&": "&", "_": "_", "#": "#"}
_LOGOS = re.compile(r"\\(BibTeX|LaTeXe|LaTeX|TeX|XeTeX|LuaTeX)\b\s?(?:\{\})?")
_SAFE_SCHEMES = ("http://", "https://", "ftp://", "mailto:")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)


class HtmlBackend(PybtexHtmlBackend):
    """pybtex's HTML backend, with URLs escaped and unsafe schemes (javascript:…) not linked."""

    def format_href(self, url, text, external=False):
        if not text:
            return ""
        if not url.lower().startswith(_SAFE_SCHEMES):
            return text
        target = ' target="_blank"' if external else ""
        return f'<a href="{escape(url, quote=True)}"{target}>{text}</a>'


def clean_url(raw: str) -> str:
    """A URL as written in BibTeX, without `\\url{…}` and TeX escapes."""
    url = raw.strip()
    match = re.fullmatch(r"\\url\s*\{(.*)\}", url, re.DOTALL)
    if match:
        url = match.group(1).strip()
    return re.sub(r"\\([%&_#$~])", r"\1", url).replace("{", "").replace("}", "")


def _only_url(raw: str) -> bool:
    return bool(re.fullmatch(r"\s*\\url\s*\{[^{}]*\}\s*", raw))


def entry_url(entry) -> str:
    """The `url` field, else a `howpublished` that is nothing but `\\url{…}` (common in misc)."""
    if entry.fields.get("url", "").strip():
        return clean_url(entry.fields["url"])
    howpublished = entry.fields.get("howpublished", "")
    return clean_url(howpublished) if _only_url(howpublished) else ""


@node
def howpublished_text(children, context):
    """`howpublished` unless it is only a URL (which `url_link` then shows)."""
    entry = context["entry"]
    value = entry.fields.get("howpublished", "")
    if not value.strip() or _only_url(value):
        raise FieldIsMissing("howpublished", entry)
    return latex_text(value)


@node
def when(children, context, name):
    """The children when the entry has field `name`, else nothing (without failing)."""
    if name == "url":
        present = bool(entry_url(context["entry"]))
    else:
        present = bool(context["entry"].fields.get(name, "").strip())
    return join.f(children, context) if present else rich_text()


def clean_doi(raw: str) -> str:
    return _DOI_PREFIX.sub("", clean_url(raw))


def _closing_brace(text: str, open_at: int) -> int | None:
    depth = 0
    for position in range(open_at, len(text)):
        char = text[position]
        if char == "\\":
            continue
        if char == "{" and (position == 0 or text[position - 1] != "\\"):
            depth += 1
        elif char == "}" and text[position - 1] != "\\":
            depth -= 1
            if depth == 0:
                return position
    return None


def _closing_dollar(text: str, start: int) -> int | None:
    position = start
    while True:
        position = text.find("$", position)
        if position < 0:
            return None
        if text[position - 1] != "\\":
            return position
        position += 1


_LATEX_SPECIALS = re.compile(r"[\\{}$~%&^_#-]")


@remembered
def latex_text(raw: str) -> Text:
    """Rich text of a LaTeX field value (see the module docstring for what is handled)."""
    if not _LATEX_SPECIALS.search(raw):
        # Most values are plain words: no need to run them through the LaTeX decoder.
        return text_of(raw)
    parts: list = []
    plain: list[str] = []

    def flush():
        if plain:
            parts.append(_from_latex("".join(plain)))
            plain.clear()

    depth = 0
    position = 0
    while position < len(raw):
        char = raw[position]
        if depth == 0 and char == "\\":
            nxt = raw[position + 1 : position + 2]
            if nxt in _ESCAPED:
                flush()
                parts.append(String(_ESCAPED[nxt]))
                position += 2
                continue
            match = _COMMAND.match(raw, position)
            if match:
                first_close = _closing_brace(raw, match.end() - 1)
                if first_close is not None:
                    command = match.group(1)
                    argument = raw[match.end() : first_close]
                    if command == "url":
                        flush()
                        url = clean_url(argument)
                        parts.append(HRef(url, url))
                        position = first_close + 1
                        continue
                    if command == "href":
                        rest = raw[first_close + 1 :].lstrip()
                        skipped = len(raw[first_close + 1 :]) - len(rest)
                        if rest.startswith("{"):
                            second_open = first_close + 1 + skipped
                            second_close = _closing_brace(raw, second_open)
                            if second_close is not None:
                                flush()
                                label = latex_text(raw[second_open + 1 : second_close])
                                parts.append(HRef(clean_url(argument), label))
                                position = second_close + 1
                                continue
                    else:
                        flush()
                        parts.append(Tag(_TEXT_COMMANDS[command], latex_text(argument)))
                        position = first_close + 1
                        continue
        if depth == 0 and char == "$":
            close = _closing_dollar(raw, position + 1)
            if close is not None:
                flush()
                # Braces protect the math from case changes; pybtex decodes simple symbols.
                parts.append(decode_latex("{" + raw[position : close + 1] + "}"))
                position = close + 1
                continue
        if char == "{" and (position == 0 or raw[position - 1] != "\\"):
            depth += 1
        elif char == "}" and position and raw[position - 1] != "\\":
            depth = max(depth - 1, 0)
        plain.append(char)
        position += 1
    flush()
    return rich_text(*parts)


def _from_latex(source: str) -> Text:
    """pybtex's decoding, keeping the spaces at the ends (it drops a leading one)."""
    if not source.strip():
        return Text(" ") if source else Text()
    source = _LOGOS.sub(lambda match: match.group(1), source)
    try:
        decoded = decode_latex(source)
    except (PybtexError, UnicodeError, ValueError):
        # latexcodec gives up on some accent forms (G\"{o}del, Garc{\'\i}a): the decoder
        # that never raises turns them into text instead of losing the entry.
        decoded = Text(latex_to_text(source))
    lead = " " if source[:1].isspace() else ""
    trail = " " if source[-1:].isspace() and not str(decoded)[-1:].isspace() else ""
    if lead and str(decoded)[:1].isspace():
        lead = ""
    return rich_text(lead, decoded, trail)


@remembered
def plain_text(raw: str) -> str:
    """A field value as plain text (for initials, labels and comparisons)."""
    return latex_text(raw).render_as("text").replace("\xa0", " ")


@node
def rich_field(children, context, name, apply_func=None):
    """Like pybtex's `field`, decoded with `latex_text`."""
    if children:
        raise ValueError(children)
    entry = context["entry"]
    try:
        value = entry._find_field(name, bib_data=context.get("bib_data"))
    except KeyError:
        raise FieldIsMissing(name, entry) from None
    text = latex_text(value)
    return apply_func(text) if apply_func else text


@node
def url_link(children, context, label_prefix="", dedupe=True):
    """The entry's URL as a link; with `dedupe`, missing when it is just the DOI's link."""
    entry = context["entry"]
    url = entry_url(entry)
    if not url:
        raise FieldIsMissing("url", entry)
    if dedupe and "doi" in entry.fields and clean_doi(url) == clean_doi(entry.fields["doi"]) != url:
        raise FieldIsMissing("url", entry)  # the DOI link says it already
    return rich_text(label_prefix, HRef(url, url))


@node
def doi_link(children, context, label="doi:"):
    """`doi:10.x/y` linking to https://doi.org/10.x/y (label="" shows the URL itself)."""
    entry = context["entry"]
    if "doi" not in entry.fields:
        raise FieldIsMissing("doi", entry)
    doi = clean_doi(entry.fields["doi"])
    url = f"https://doi.org/{doi}"
    return rich_text(HRef(url, f"{label}{doi}" if label else url))


_DASHES = re.compile(r"\s*-+\s*")


def dashify(text: Text) -> Text:
    """`357--362` → `357–362` (en dash), as citation-js prints page ranges."""
    return joined_text("–", text.split(_DASHES))


@per_person
def first_names_initials(person, *, dotted: bool) -> str:
    """Initials of the given names: "Charles R." → CR / C. R., "Jean-Pierre" → JP / J.-P."""
    initials = []
    for name in person.first_names + person.middle_names:
        pieces = []
        for piece in plain_text(name).split("-"):
            letter = next((c for c in piece if c.isalpha()), "")
            if letter:
                pieces.append(letter.upper() + ("." if dotted else ""))
        if pieces:
            initials.append(("-" if dotted else "").join(pieces))
    return (" " if dotted else "").join(initials)


@per_person
def family_name(person) -> Text:
    """Particle and family name, decoded ("van der Walt", "del Río")."""
    words = [latex_text(part) for part in person.prelast_names + person.last_names]
    return joined_text(" ", words)


def is_others(person) -> bool:
    return str(person).strip().lower() == "others"


class _AnyEntry:
    """What a template is built with: templates are built once per entry type and style, so
    a template that looked at its entry would give every entry of the type that entry's
    layout. Anything that depends on the entry is decided in a node, at format time."""

    def __getattr__(self, name):
        raise TypeError(f"a template read entry.{name}; decide on the entry in a node instead")


_ANY_ENTRY = _AnyEntry()


class TemplateCache:
    """pybtex's `format_entry`, with each entry type's template built once: pybtex builds the
    template again for every entry, which costs as much as many nodes' formatting."""

    def format_entry(self, label, entry, bib_data=None):
        templates = self.__dict__.setdefault("_templates", {})
        template = templates.get(entry.type)
        if template is None:
            # An unknown type raises AttributeError here, as in pybtex.
            get_template = getattr(self, f"get_{entry.type}_template")
            template = templates[entry.type] = get_template(_ANY_ENTRY)
        text = template.format_data({"entry": entry, "style": self, "bib_data": bib_data})
        return FormattedEntry(entry.key, text, label)


class LenientMixin:
    """Never raise for an incomplete or unknown entry: fall back to the misc template."""

    def format_entry(self, label, entry, bib_data=None):
        try:
            return super().format_entry(label, entry, bib_data=bib_data)
        except (FieldIsMissing, AttributeError):
            return super().format_entry(label, _as_misc(entry), bib_data=bib_data)


def _as_misc(entry):
    copy = entry.__class__(
        "misc", fields=dict(entry.fields), persons={k: list(v) for k, v in entry.persons.items()}
    )
    copy.key = entry.key
    return copy


__all__ = [
    "HtmlBackend",
    "LenientMixin",
    "TemplateCache",
    "clean_doi",
    "clean_url",
    "dashify",
    "doi_link",
    "family_name",
    "entry_url",
    "first_names_initials",
    "howpublished_text",
    "is_others",
    "join",
    "latex_text",
    "plain_text",
    "rich_field",
    "url_link",
    "when",
]
