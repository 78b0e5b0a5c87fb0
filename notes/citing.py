"""A published note as a citable work, for the "cite this note" exports."""

from __future__ import annotations

import json

from django.utils import timezone
from pybtex.bibtex.utils import split_name_list

from bibliography import exports
from bibliography.entries import EntryData, with_math_source
from bibliography.exports import CitableWork, Person
from bibliography.formatting import csl_items, format_references
from bibliography.models import BibEntry, BibFile
from scidraft.markup.sanitise import clean_fragment
from scidraft.site.models import SiteSettings
from scidraft.site.snapshot import site_settings

from .live_references import KeptEntries, bib_name, cited_pairs, kept_entries
from .models import LiveBibEntry, Note


def note_url(request, note: Note, site: SiteSettings) -> str:
    path = f"/notes/{note.slug}/"
    if site.base_url:
        return site.base_url.rstrip("/") + path
    return request.build_absolute_uri(path)


def citable_work(request, note: Note) -> CitableWork:
    """`note` with its authorships and their authors prefetched (the views' queries)."""
    site = site_settings(request)
    authors = tuple(
        Person(link.author.name or link.author.handle) for link in note.authorships.all()
    ) or (Person(site.author, is_handle=True),)
    return CitableWork(
        key=note.slug,
        title=note.title or note.slug,
        authors=authors,
        date=note.local_date,
        site=site.title,
        url=note_url(request, note, site),
        accessed=timezone.localdate(),
        summary=_abstract(note.summary or note.description),
    )


# The abstract "cite this note" gives, at most (a real one is a paragraph): every note page
# escapes it for its BibTeX block and hands it to the citation formatter.
ABSTRACT_CHARS = 5_000


def _abstract(written: str) -> str:
    if len(written) <= ABSTRACT_CHARS:
        return written
    cut = written[:ABSTRACT_CHARS]
    space = cut.rfind(" ")
    return (cut[:space] if space > ABSTRACT_CHARS // 2 else cut[: ABSTRACT_CHARS - 1]) + "…"


def cited_entries(note: Note, *fields: str) -> list:
    """The entries the note cites, each once, in citation order, as readers see them: the
    BibEntry rows (with `fields` loaded), or the LiveBibEntry rows kept with a live version
    that reads them (notes.live_references)."""
    return _cited(note, kept_entries(note), fields)


def _cited(note: Note, kept: KeptEntries | None, fields) -> list:
    pairs = cited_pairs(note)
    current = [
        (file, key)
        for _, file, key in pairs
        if file is not None and (kept is None or key not in kept.cited)
    ]
    found = {}
    if current:
        found = {
            (entry.bibfile_id, entry.key): entry
            for entry in BibEntry.objects.filter(
                bibfile_id__in={file for file, _ in current}, key__in={key for _, key in current}
            )
            .readable()
            .only("bibfile_id", "key", *fields)
        }
    entries = []
    for name, file, key in pairs:
        if kept is not None and key in kept.cited:
            entry = kept.entries.get((bib_name(name), key))
        else:
            entry = found.get((file, key))
        if entry is not None:
            entries.append(entry)
    return entries


def references_bibtex(note: Note) -> str:
    """references.bib: the cited entries as written in their files, each once, in citation
    order, after the @string definitions they use (kept ones as the files had them)."""
    kept = kept_entries(note)
    entries = _cited(note, kept, ("source",))
    names = dict.fromkeys(
        bib_name(entry.bib_name) for entry in entries if isinstance(entry, LiveBibEntry)
    )
    macros = [macro for name in names for macro in kept.macros.get(name, [])] if names else []
    files = BibFile.objects.filter(
        pk__in={entry.bibfile_id for entry in entries if isinstance(entry, BibEntry)}
    ).values_list("raw", flat=True)
    return exports.bibtex_with_macros([entry.source for entry in entries], list(files), macros)


_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]


def work_entry(work: CitableWork) -> EntryData:
    """The note as the BibTeX entry cite.bib serves, as pybtex would read it: built from the
    same fields, so no title or summary an author wrote can keep it from being formatted."""
    fields, persons = {}, {}
    for name, value in exports.bibtex_fields(work):
        if name == "author":
            persons["author"] = split_name_list(value)  # braces keep "{A and B}" whole
        elif name == "month":
            fields["month"] = f"{_MONTHS.index(value) + 1:02d}"  # as citation-js reads `sep`
        else:
            fields[name] = " ".join(value.split())
    return EntryData(exports.bibtex_key(work), "online", fields, persons)


def work_reference_html(work: CitableWork, site: SiteSettings) -> str:
    """ "Cite this note": the note formatted in the site's citation style (sanitised HTML)."""
    entry = work_entry(work)
    formatted = format_references([entry], site.citation_style, site.language_code)
    markup = formatted.entries.get(entry.key, "")
    return clean_fragment(with_math_source(markup, formatted.math.get(entry.key, ())))


def work_csl_json(work: CitableWork) -> str:
    """cite.json: the note's BibTeX entry through citation-js's BibTeX → CSL-JSON mapping,
    the mapping every reference list uses."""
    return json.dumps(csl_items([work_entry(work)]), ensure_ascii=False, indent=2) + "\n"
