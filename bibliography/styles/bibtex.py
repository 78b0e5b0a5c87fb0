"""BibTeX's plain, unsrt and alpha, as pybtex implements them, with three adjustments.

Titles keep protected braces and math through BibTeX's sentence case (`{BERT}`, `$O(n^2)$`);
`\\url{…}` in `howpublished` and the `url`/`doi` fields become links (pybtex already links the
last two; here they are also cleaned of `\\url{}`, TeX escapes and `https://doi.org/` prefixes);
an incomplete or unknown entry falls back to the misc layout instead of raising.

The templates are pybtex's unsrt templates (pybtex.style.formatting.unsrt, MIT licence,
© Andrey Golovizin), written out here with the project's template nodes (`.template`: the same
nodes, cheaper) so that each entry type's template is built once; the two places where pybtex
looks at the entry while building a template ("editor" or "editors", proceedings with or
without editors) decide at format time instead. Names are pybtex's plain name style, built
directly (`plain_name`). The output is pybtex's, byte for byte: tests/bibliography/test_styles.py
and test_golden.py check it.
"""

from __future__ import annotations

from pybtex.richtext import String, Symbol, Text, nbsp
from pybtex.style.formatting import BaseStyle
from pybtex.style.formatting.unsrt import dashify
from pybtex.style.names.plain import NameStyle as PybtexPlainNames
from pybtex.style.template import FieldIsMissing, node

from .base import LenientMixin, TemplateCache, doi_link, rich_field, url_link
from .decoding import decode_latex
from .memo import person_key, remembered
from .template import (
    either,
    field,
    first_of,
    href,
    join,
    names,
    optional,
    optional_field,
    rich_text,
    sentence,
    tag,
    text_capitalize,
    together,
    toplevel,
    words,
)

_SPACE = String(" ")


def _together(parts: list[Text]) -> tuple[list, int]:
    """pybtex's `together(last_tie=True)` as a flat list of pieces and its length: words
    joined by spaces, a tie before the last word and after a short first one."""
    lengths = [_length(part) for part in parts]
    parts = [part for part, length in zip(parts, lengths, strict=True) if length]
    total = sum(lengths)
    if len(parts) <= 2:
        pieces = parts[:1] + [nbsp] + parts[1:] if len(parts) == 2 else parts
    else:
        first_length = next(length for length in lengths if length)
        pieces = [parts[0], nbsp if first_length < 3 else _SPACE]  # pybtex's tie_or_space
        for part in parts[1:-1]:
            pieces += [part, _SPACE]
        pieces[-1] = nbsp
        pieces.append(parts[-1])
    # Each tie or space between the parts is one character.
    return pieces, total + len(pieces) - len(parts)


def _length(text) -> int:
    """len(text), read directly from a Text (decoded names are Texts)."""
    return text.length if type(text) is Text else len(text)


@remembered
def plain_name(key: tuple, abbr: bool) -> Text:
    """BibTeX's `{ff~}{vv~}{ll}{, jj}`, exactly as pybtex's plain name style builds it (a test
    compares the two), without its template engine: one Text instead of dozens of template
    nodes and Text objects, and a name met before costs nothing."""
    first, middle, prelast, last, lineage = key
    given = [decode_latex(name) for name in first + middle]
    if abbr:
        given = [name.abbreviate() for name in given]
    pieces = []
    for names_, before, tie in (
        (given, "", True),
        ([decode_latex(name) for name in prelast], "", True),
        ([decode_latex(name) for name in last], "", False),
        ([decode_latex(name) for name in lineage], ", ", False),
    ):
        together_, length = _together(names_)
        if length:
            pieces.append(before)
            pieces += together_
            if tie:
                pieces.append(nbsp if length < 3 else " ")  # pybtex's tie_or_space
    return rich_text(*pieces)


class PlainNames(PybtexPlainNames):
    """pybtex's plain name style, built directly and remembered per name (see `plain_name`)."""

    def format(self, person, abbr=False):
        # pybtex's `names` formats what this returns; a Text is already formatted.
        return plain_name(person_key(person), bool(abbr))


pages = field("pages", apply_func=dashify)
date = words[optional_field("month"), field("year")]
_EDITOR_NAMES = names("editor", sep=", ", sep2=" and ", last_sep=", and ")


@node
def editors(children, context, as_sentence=True):
    """pybtex unsrt's `format_editor`: `A and B, editors` (`editor` for one)."""
    entry = context["entry"]
    if "editor" not in entry.persons:
        raise FieldIsMissing("editor", entry)
    word = "editors" if len(entry.persons["editor"]) > 1 else "editor"
    result = join(sep=", ")[_EDITOR_NAMES, word]
    return (sentence[result] if as_sentence else result).format_data(context)


def has_editors(entry) -> bool:
    return "editor" in entry.persons


class BibtexStyle(TemplateCache, BaseStyle):
    """pybtex's unsrt, template for template."""

    default_name_style = PlainNames

    def format_names(self, role, as_sentence=True):
        formatted_names = names(role, sep=", ", sep2=" and ", last_sep=", and ")
        if as_sentence:
            return sentence[formatted_names]
        return formatted_names

    def get_article_template(self, e):
        volume_and_pages = first_of[
            # volume and pages, with optional issue number
            optional[join[field("volume"), optional["(", field("number"), ")"], ":", pages],],
            # pages only
            words["pages", pages],
        ]
        return toplevel[
            self.format_names("author"),
            self.format_title(e, "title"),
            sentence[tag("em")[field("journal")], optional[volume_and_pages], date],
            sentence[optional_field("note")],
            self.format_web_refs(e),
        ]

    def format_author_or_editor(self, e):
        return first_of[
            optional[self.format_names("author")],
            self.format_editor(e),
        ]

    def format_editor(self, e, as_sentence=True):
        return editors(as_sentence=as_sentence)

    def format_volume_and_series(self, e, as_sentence=True):
        volume_and_series = optional[
            words[
                together["Volume" if as_sentence else "volume", field("volume")],
                optional[words["of", field("series")]],
            ]
        ]
        number_and_series = optional[
            words[
                join(sep=Symbol("nbsp"))["Number" if as_sentence else "number", field("number")],
                optional[words["in", field("series")]],
            ]
        ]
        series = optional_field("series")
        result = first_of[
            volume_and_series,
            number_and_series,
            series,
        ]
        if as_sentence:
            return sentence(capfirst=True)[result]
        return result

    def format_chapter_and_pages(self, e):
        return join(sep=", ")[
            optional[together["chapter", field("chapter")]],
            optional[together["pages", pages]],
        ]

    def format_edition(self, e):
        return optional[
            words[
                field("edition", apply_func=lambda x: x.lower()),
                "edition",
            ]
        ]

    def format_title(self, e, which_field, as_sentence=True):
        # Adjusted: decoded with rich_field, so protected braces and math keep their case.
        title = rich_field(which_field, apply_func=text_capitalize)
        return sentence[title] if as_sentence else title

    def format_btitle(self, e, which_field, as_sentence=True):
        title = tag("em")[rich_field(which_field)]
        return sentence[title] if as_sentence else title

    def format_address_organization_publisher_date(self, e, include_organization=True):
        """Format address, organization, publisher, and date.
        Everything is optional, except the date.
        """
        # small difference from unsrt.bst here: unsrt.bst
        # starts a new sentence only if the address is missing;
        # for simplicity here we always start a new sentence
        organization = optional_field("organization") if include_organization else None
        return first_of[
            # this will be rendered if there is an address
            optional[
                join(sep=" ")[
                    sentence[
                        field("address"),
                        date,
                    ],
                    sentence[
                        organization,
                        optional_field("publisher"),
                    ],
                ],
            ],
            # if there is no address then we have this
            sentence[
                organization,
                optional_field("publisher"),
                date,
            ],
        ]

    def get_book_template(self, e):
        return toplevel[
            self.format_author_or_editor(e),
            self.format_btitle(e, "title"),
            self.format_volume_and_series(e),
            sentence[
                field("publisher"),
                optional_field("address"),
                self.format_edition(e),
                date,
            ],
            optional[sentence[self.format_isbn(e)]],
            sentence[optional_field("note")],
            self.format_web_refs(e),
        ]

    def get_booklet_template(self, e):
        return toplevel[
            self.format_names("author"),
            self.format_title(e, "title"),
            sentence[
                optional_field("howpublished"),
                optional_field("address"),
                date,
                optional_field("note"),
            ],
            self.format_web_refs(e),
        ]

    def get_dataset_template(self, e):
        return self.get_misc_template(e)

    def get_inbook_template(self, e):
        return toplevel[
            self.format_author_or_editor(e),
            sentence[
                self.format_btitle(e, "title", as_sentence=False),
                self.format_chapter_and_pages(e),
            ],
            self.format_volume_and_series(e),
            sentence[
                field("publisher"),
                optional_field("address"),
                optional[words[field("edition"), "edition"]],
                date,
                optional_field("note"),
            ],
            self.format_web_refs(e),
        ]

    def get_incollection_template(self, e):
        return toplevel[
            sentence[self.format_names("author")],
            self.format_title(e, "title"),
            words[
                "In",
                sentence[
                    optional[self.format_editor(e, as_sentence=False)],
                    self.format_btitle(e, "booktitle", as_sentence=False),
                    self.format_volume_and_series(e, as_sentence=False),
                    self.format_chapter_and_pages(e),
                ],
            ],
            sentence[
                optional_field("publisher"),
                optional_field("address"),
                self.format_edition(e),
                date,
            ],
            self.format_web_refs(e),
        ]

    def get_inproceedings_template(self, e):
        return toplevel[
            sentence[self.format_names("author")],
            self.format_title(e, "title"),
            words[
                "In",
                sentence[
                    optional[self.format_editor(e, as_sentence=False)],
                    self.format_btitle(e, "booktitle", as_sentence=False),
                    self.format_volume_and_series(e, as_sentence=False),
                    optional[pages],
                ],
                self.format_address_organization_publisher_date(e),
            ],
            sentence[optional_field("note")],
            self.format_web_refs(e),
        ]

    def get_manual_template(self, e):
        # TODO this only corresponds to the bst style if author is non-empty
        # for empty author we should put the organization first
        return toplevel[
            optional[sentence[self.format_names("author")]],
            self.format_btitle(e, "title"),
            sentence[
                optional_field("organization"),
                optional_field("address"),
                self.format_edition(e),
                optional[date],
            ],
            sentence[optional_field("note")],
            self.format_web_refs(e),
        ]

    def get_mastersthesis_template(self, e):
        return toplevel[
            sentence[self.format_names("author")],
            self.format_title(e, "title"),
            sentence[
                "Master's thesis",
                field("school"),
                optional_field("address"),
                date,
            ],
            sentence[optional_field("note")],
            self.format_web_refs(e),
        ]

    def get_misc_template(self, e):
        # Adjusted: howpublished and note decoded with rich_field (`\\url{…}` becomes a link).
        return toplevel[
            optional[sentence[self.format_names("author")]],
            optional[self.format_title(e, "title")],
            sentence[optional[rich_field("howpublished")], optional[date]],
            sentence[optional[rich_field("note")]],
            self.format_web_refs(e),
        ]

    def get_online_template(self, e):
        return self.get_misc_template(e)

    def get_patent_template(self, e):
        return self.get_misc_template(e)

    def get_phdthesis_template(self, e):
        return toplevel[
            sentence[self.format_names("author")],
            self.format_btitle(e, "title"),
            sentence[
                first_of[
                    optional_field("type"),
                    "PhD thesis",
                ],
                field("school"),
                optional_field("address"),
                date,
            ],
            sentence[optional_field("note")],
            self.format_web_refs(e),
        ]

    def get_proceedings_template(self, e):
        # pybtex chooses between these two layouts by looking at the entry; `either`
        # chooses when formatting, so the template serves every proceedings entry.
        return toplevel[
            either(has_editors)[
                self.format_editor(e),
                optional[sentence[field("organization")]],
            ],
            either(has_editors)[
                sentence[
                    self.format_btitle(e, "title", as_sentence=False),
                    self.format_volume_and_series(e, as_sentence=False),
                    self.format_address_organization_publisher_date(e),
                ],
                sentence[
                    self.format_btitle(e, "title", as_sentence=False),
                    self.format_volume_and_series(e, as_sentence=False),
                    self.format_address_organization_publisher_date(e, include_organization=False),
                ],
            ],
            sentence[optional_field("note")],
            self.format_web_refs(e),
        ]

    def get_software_template(self, e):
        return self.get_misc_template(e)

    def get_techreport_template(self, e):
        return toplevel[
            sentence[self.format_names("author")],
            self.format_title(e, "title"),
            sentence[
                words[
                    first_of[
                        optional_field("type"),
                        "Technical Report",
                    ],
                    optional_field("number"),
                ],
                field("institution"),
                optional_field("address"),
                date,
            ],
            sentence[optional_field("note")],
            self.format_web_refs(e),
        ]

    def get_unpublished_template(self, e):
        return toplevel[
            sentence[self.format_names("author")],
            self.format_title(e, "title"),
            sentence[field("note"), optional[date]],
            self.format_web_refs(e),
        ]

    def format_web_refs(self, e):
        # based on urlbst output.web.refs
        return sentence[
            optional[self.format_url(e), optional[" (visited on ", field("urldate"), ")"]],
            optional[self.format_eprint(e)],
            optional[self.format_pubmed(e)],
            optional[self.format_doi(e)],
        ]

    def format_url(self, e):
        # Adjusted: the URL cleaned of \\url{} and TeX escapes, linked only when safe.
        return words["URL:", url_link(dedupe=False)]

    def format_pubmed(self, e):
        # based on urlbst format.pubmed
        url = join["https://www.ncbi.nlm.nih.gov/pubmed/", field("pubmed", raw=True)]
        return href(url)[join["PMID:", field("pubmed", raw=True)]]

    def format_doi(self, e):
        # Adjusted: the DOI cleaned of `https://doi.org/` and `doi:` prefixes.
        return doi_link()

    def format_eprint(self, e):
        # based on urlbst format.eprint
        url = join["https://arxiv.org/abs/", field("eprint", raw=True)]
        return href(url)[join["arXiv:", field("eprint", raw=True)]]

    def format_isbn(self, e):
        return join(sep=" ")["ISBN", field("isbn")]


class UnsrtStyle(LenientMixin, BibtexStyle):
    """BibTeX unsrt: numbered, in citation order."""


class PlainStyle(LenientMixin, BibtexStyle):
    """BibTeX plain: numbered, sorted by author, year and title."""

    default_sorting_style = "author_year_title"


class AlphaStyle(LenientMixin, BibtexStyle):
    """BibTeX alpha: labels such as Knu84, sorted by author, year and title."""

    default_sorting_style = "author_year_title"
    default_label_style = "alpha"
