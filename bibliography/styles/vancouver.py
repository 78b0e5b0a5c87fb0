"""Vancouver, the theme's style (citation-js with CSL "vancouver", en-US).

`Author AB, Author CD, et al. Title. Journal. 2020 Mar 4;12(3):357–362. doi:10.x/y`

Names are family name (with its particle: "van der Walt SJ") and initials without periods; six
authors at most, then "et al.". Titles are printed as written. Page ranges keep both numbers with
an en dash, as citation-js prints them. A URL is "Available from: URL" (left out when it is only
the DOI's link), a DOI is "doi:…", both links. Missing parts are left out with their punctuation.
"""

from __future__ import annotations

import re

from pybtex.richtext import Text
from pybtex.style.formatting import BaseStyle

from .base import (
    LenientMixin,
    TemplateCache,
    dashify,
    doi_link,
    family_name,
    first_names_initials,
    howpublished_text,
    is_others,
    plain_text,
    rich_field,
    url_link,
    when,
)
from .memo import per_person
from .template import (
    FieldIsMissing,
    either,
    first_of,
    join,
    joined_text,
    node,
    optional,
    rich_text,
    sentence,
    toplevel,
    words,
)

MAX_AUTHORS = 6
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]


@per_person
def vancouver_name(person) -> Text:
    parts = [family_name(person)]
    initials = first_names_initials(person, dotted=False)
    if initials:
        parts.append(initials)
    lineage = " ".join(plain_text(name).replace(".", "") for name in person.lineage_names)
    if lineage:
        parts.append(lineage)
    return joined_text(" ", [part for part in parts if part])


@node
def vancouver_names(children, context, role, limit=MAX_AUTHORS):
    """`Family AB, Family C, …`; more than `limit` names (or "and others") end in ", et al."."""
    entry = context["entry"]
    persons = list(entry.persons.get(role, []))
    et_al = bool(persons) and is_others(persons[-1])
    if et_al:
        persons = persons[:-1]
    if not persons:
        raise FieldIsMissing(role, entry)
    if len(persons) > limit:
        persons, et_al = persons[:limit], True
    text = joined_text(", ", [vancouver_name(person) for person in persons])
    return rich_text(text, ", et al.") if et_al else text


@node
def editors_phrase(children, context, role="editor"):
    """`Ku LW, Martins A, editors` (or `editor` for one)."""
    names = vancouver_names(role).format_data(context)
    count = len(context["entry"].persons.get(role, []))
    return rich_text(names, ", editors" if count > 1 else ", editor")


def month_and_day(raw: str) -> tuple[str, str]:
    """("Mar", "4") from "4~" # mar (pybtex gives "4 March"), "March", "3", "mar"."""
    text = plain_text(raw).strip()
    month = ""
    if text.isdigit() and 1 <= int(text) <= 12:
        return _MONTHS[int(text) - 1].capitalize(), ""
    match = re.search(r"[A-Za-z]{3,}", text)
    if match and match.group(0)[:3].lower() in _MONTHS:
        month = match.group(0)[:3].capitalize()
    day = re.search(r"\b(\d{1,2})\b", text)
    return month, (day.group(1) if day and month else "")


@node
def vancouver_date(children, context):
    """`2020 Mar 4` (year, then month and day when given)."""
    entry = context["entry"]
    year = entry.fields.get("year", "").strip()
    if not year:
        raise FieldIsMissing("year", entry)
    month, day = month_and_day(entry.fields.get("month", ""))
    return rich_text(" ".join(part for part in (plain_text(year), month, day) if part))


def ordinal_edition(text: Text) -> Text:
    """`2` → `2nd`; words ("Second") as written."""
    value = str(text).strip()
    if value.isdigit():
        number = int(value)
        suffix = (
            "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
        )
        return Text(f"{number}{suffix}")
    return text


pages = rich_field("pages", apply_func=dashify)
date = optional[vancouver_date]
volume_issue = optional[join[rich_field("volume"), optional["(", rich_field("number"), ")"]]]


def place_publisher_date(*publisher_fields):
    """`Place: Publisher; Year` with whatever parts exist."""
    publisher = first_of[*(optional[rich_field(name)] for name in publisher_fields)]
    return join(sep="; ")[join(sep=": ")[optional[rich_field("address")], publisher], date]


def has_booktitle(entry) -> bool:
    return "booktitle" in entry.fields


class VancouverStyle(LenientMixin, TemplateCache, BaseStyle):
    """Numbered, in citation order; the format of the theme's reference lists."""

    default_sorting_style = "none"

    def authors(self):
        return optional[sentence[vancouver_names("author")]]

    def author_or_editors(self):
        return first_of[
            optional[sentence[vancouver_names("author")]],
            optional[sentence[editors_phrase]],
        ]

    def title(self, suffix=None):
        title = rich_field("title")
        if suffix is not None:
            title = words[title, suffix]
        return optional[sentence[title]]

    def web(self):
        return words[optional[url_link(label_prefix="Available from: ")], optional[doi_link]]

    def get_article_template(self, e):
        return toplevel[
            self.authors(),
            self.title(),
            optional[sentence[rich_field("journal")]],
            sentence[join(sep=":")[join(sep=";")[date, volume_issue], optional[pages]]],
            self.web(),
        ]

    def get_book_template(self, e):
        return toplevel[
            self.author_or_editors(),
            self.title(),
            optional[sentence[words[rich_field("edition", apply_func=ordinal_edition), "ed"]]],
            sentence[place_publisher_date("publisher", "organization")],
            self.web(),
        ]

    get_proceedings_template = get_book_template

    def get_incollection_template(self, e):
        return toplevel[
            self.authors(),
            self.title(),
            optional[
                join[
                    "In: ",
                    join(sep=" ")[
                        optional[sentence[editors_phrase]], sentence[rich_field("booktitle")]
                    ],
                ]
            ],
            sentence[place_publisher_date("publisher", "organization")],
            optional[sentence[join["p. ", pages]]],
            self.web(),
        ]

    get_inproceedings_template = get_incollection_template
    get_conference_template = get_incollection_template

    def get_inbook_template(self, e):
        return either(has_booktitle)[self.get_incollection_template(e), self.get_book_template(e)]

    def get_techreport_template(self, e):
        return toplevel[
            self.authors(),
            self.title(),
            sentence[place_publisher_date("institution", "publisher")],
            optional[sentence[join["Report No.: ", rich_field("number")]]],
            self.web(),
        ]

    get_report_template = get_techreport_template

    def get_phdthesis_template(self, e):
        return toplevel[
            self.authors(),
            self.title("[dissertation]"),
            sentence[place_publisher_date("school")],
            self.web(),
        ]

    def get_mastersthesis_template(self, e):
        return toplevel[
            self.authors(),
            self.title("[master's thesis]"),
            sentence[place_publisher_date("school")],
            self.web(),
        ]

    def get_manual_template(self, e):
        return toplevel[
            self.authors(),
            self.title(),
            optional[sentence[words[rich_field("edition", apply_func=ordinal_edition), "ed"]]],
            sentence[place_publisher_date("organization", "publisher")],
            self.web(),
        ]

    def get_misc_template(self, e):
        publisher = first_of[
            optional[rich_field("publisher")],
            optional[rich_field("organization")],
            optional[howpublished_text],
        ]
        return toplevel[
            self.authors(),
            optional[sentence[words[rich_field("title"), when("url")["[Internet]"]]]],
            sentence[
                words[
                    join(sep="; ")[publisher, date],
                    optional["[cited ", rich_field("urldate"), "]"],
                ]
            ],
            self.web(),
        ]

    get_online_template = get_misc_template
    get_electronic_template = get_misc_template
    get_www_template = get_misc_template
    get_webpage_template = get_misc_template
    get_software_template = get_misc_template
    get_dataset_template = get_misc_template
    get_booklet_template = get_misc_template
    get_unpublished_template = get_misc_template
    get_patent_template = get_misc_template
