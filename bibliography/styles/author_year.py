"""Author–year (APA-like): `Family, G. A., & Family, G. (2020). Title. Journal, 12(3), 1–9. DOI`.

Journal, volume and book titles in italics; up to 20 authors, then the first 19, "…" and the
last (APA 7). Without authors the title takes their place. A DOI is shown as its
https://doi.org/ link, else the URL. Markers use `labels`: "Family 2020", "Family & Other 2020",
"Family et al. 2020", with a/b suffixes on the year when two entries would share a label.
"""

from __future__ import annotations

from collections import Counter

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
    tag,
    toplevel,
    words,
)
from .vancouver import ordinal_edition

MAX_AUTHORS = 20


@per_person
def apa_name(person, *, inverted: bool = True) -> Text:
    initials = first_names_initials(person, dotted=True)
    family = family_name(person)
    lineage = ", ".join(plain_text(name) for name in person.lineage_names)
    if not inverted:
        return joined_text(" ", [part for part in (rich_text(initials), family) if part])
    parts = [family] + [rich_text(part) for part in (initials, lineage) if part]
    return joined_text(", ", parts)


@node
def apa_names(children, context, role, inverted=True):
    """`A, B. C., D, E., & F, G.` (two names: `A, B., & C, D.`)."""
    entry = context["entry"]
    persons = list(entry.persons.get(role, []))
    et_al = bool(persons) and is_others(persons[-1])
    if et_al:
        persons = persons[:-1]
    if not persons:
        raise FieldIsMissing(role, entry)
    names = [apa_name(person, inverted=inverted) for person in persons]
    if len(names) > MAX_AUTHORS:
        return rich_text(joined_text(", ", names[: MAX_AUTHORS - 1]), ", … ", names[-1])
    if et_al:
        return rich_text(joined_text(", ", names), ", et al.")
    if len(names) == 1:
        return names[0]
    if not inverted:
        return rich_text(
            joined_text(", ", names[:-1]), ", & " if len(names) > 2 else " & ", names[-1]
        )
    return rich_text(joined_text(", ", names[:-1]), ", & ", names[-1])


@node
def year_in_parentheses(children, context):
    year = context["entry"].fields.get("year", "").strip()
    return rich_text("(", plain_text(year) if year else "n.d.", ").")


pages = rich_field("pages", apply_func=dashify)


def family_names(entry) -> list[str]:
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    return [plain_text(str(family_name(person))) for person in persons]


def author_year_label(entry) -> str:
    """ "Family 2020", "Family & Other 2020", "Family et al. 2020"."""
    families = family_names(entry)
    others = bool(families) and families[-1].lower() == "others"
    if others:
        families = families[:-1]
    if not families:
        who = plain_text(
            entry.fields.get("organization")
            or entry.fields.get("institution")
            or " ".join(entry.fields.get("title", entry.key or "").split()[:4])
        )
    elif len(families) == 1 and not others:
        who = families[0]
    elif len(families) == 2 and not others:
        who = f"{families[0]} & {families[1]}"
    else:
        who = f"{families[0]} et al."
    year = plain_text(entry.fields.get("year", "")).strip() or "n.d."
    return f"{who} {year}"


def has_authors(entry) -> bool:
    return bool(entry.persons.get("author"))


def led_by_editors(entry) -> bool:
    """A book or proceedings without authors is listed under its editors."""
    return bool(entry.persons.get("editor")) and entry.type in ("book", "proceedings")


@node
def by_count(children, context, role, one, many):
    """`one` for at most one person of `role`, else `many` ("(Ed.)", "(Eds.)")."""
    return Text(many if len(context["entry"].persons.get(role, [])) > 1 else one)


class AuthorYearStyle(LenientMixin, TemplateCache, BaseStyle):
    """APA-like author–year references, sorted by author, year and title."""

    default_sorting_style = "author_year_title"

    def labels(self, entries) -> dict[str, str]:
        """Marker labels by key, with year suffixes (2020a, 2020b) when labels collide."""
        entries = list(entries)
        labels = [author_year_label(entry) for entry in entries]
        totals = Counter(labels)
        seen: Counter = Counter()
        result = {}
        for entry, label in zip(entries, labels, strict=True):
            if totals[label] > 1:
                suffix = chr(ord("a") + seen[label] % 26)
                seen[label] += 1
                label += suffix
            result[entry.key] = label
        return result

    def head(self, e, title):
        """Authors (or editors, or the title itself) and the year: `Family, G. (2020). Title`,
        `Family, G. (Ed.). (2020). Title`, or `Title. (2020).`"""
        editors = sentence[words[apa_names("editor"), by_count("editor", "(Ed.)", "(Eds.)")]]
        return [
            either(has_authors)[
                sentence[apa_names("author")], either(led_by_editors)[editors, title]
            ],
            year_in_parentheses,
            either(has_authors)[title, either(led_by_editors)[title, Text()]],
        ]

    def link(self):
        return first_of[optional[doi_link(label="")], optional[url_link(dedupe=False)]]

    def title(self):
        return optional[sentence[rich_field("title")]]

    def italic_title(self, *extra):
        return optional[sentence[words[tag("em")[rich_field("title")], *extra]]]

    def get_article_template(self, e):
        return toplevel[
            *self.head(e, self.title()),
            sentence[
                join(sep=", ")[
                    optional[tag("em")[rich_field("journal")]],
                    optional[
                        join[
                            tag("em")[rich_field("volume")],
                            optional["(", rich_field("number"), ")"],
                        ]
                    ],
                    optional[pages],
                ]
            ],
            self.link(),
        ]

    def get_book_template(self, e):
        edition = optional[join["(", rich_field("edition", apply_func=ordinal_edition), " ed.)"]]
        return toplevel[
            *self.head(e, self.italic_title(edition)),
            optional[
                sentence[first_of[optional[rich_field("publisher")], rich_field("organization")]]
            ],
            self.link(),
        ]

    get_proceedings_template = get_book_template
    get_inbook_template = get_book_template

    def get_incollection_template(self, e):
        editors = optional[
            words[apa_names("editor", inverted=False), by_count("editor", "(Ed.),", "(Eds.),")]
        ]
        return toplevel[
            *self.head(e, self.title()),
            optional[
                sentence[
                    words[
                        "In",
                        editors,
                        tag("em")[rich_field("booktitle")],
                        optional["(pp. ", pages, ")"],
                    ]
                ]
            ],
            optional[
                sentence[first_of[optional[rich_field("publisher")], rich_field("organization")]]
            ],
            self.link(),
        ]

    get_inproceedings_template = get_incollection_template
    get_conference_template = get_incollection_template

    def get_techreport_template(self, e):
        number = optional[
            join[
                "(",
                first_of[optional[rich_field("type")], "Report"],
                " No. ",
                rich_field("number"),
                ")",
            ]
        ]
        return toplevel[
            *self.head(e, self.italic_title(number)),
            optional[sentence[rich_field("institution")]],
            self.link(),
        ]

    get_report_template = get_techreport_template

    def thesis(self, e, kind):
        bracket = join["[", kind, optional[", ", rich_field("school")], "]"]
        return toplevel[*self.head(e, self.italic_title(bracket)), self.link()]

    def get_phdthesis_template(self, e):
        return self.thesis(e, "Doctoral dissertation")

    def get_mastersthesis_template(self, e):
        return self.thesis(e, "Master's thesis")

    def get_manual_template(self, e):
        return toplevel[
            *self.head(e, self.italic_title()),
            optional[
                sentence[first_of[optional[rich_field("organization")], rich_field("publisher")]]
            ],
            self.link(),
        ]

    def get_misc_template(self, e):
        publisher = first_of[
            optional[rich_field("publisher")],
            optional[rich_field("organization")],
            optional[howpublished_text],
        ]
        return toplevel[
            *self.head(e, self.italic_title()),
            optional[sentence[publisher]],
            self.link(),
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
