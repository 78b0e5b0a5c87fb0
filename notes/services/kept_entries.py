"""Keeping the entries a published note's live version cites, as the files have them when it
goes live (notes.live_references reads them)."""

from __future__ import annotations

from functools import lru_cache

from bibliography.exports import macros_used, string_blocks
from bibliography.models import BibEntry, BibFile

from ..live_references import bib_name, cited_pairs
from ..models import LiveBibEntry, LiveBibliography, Note, NoteCitation


@lru_cache(maxsize=32)
def _file_string_blocks(file: int, digest: str, updated) -> list[tuple[str, str]]:
    """A file's @string definitions, read from its raw text once per version of the file: a
    publish would otherwise read and scan the whole file (megabytes for a large .bib)."""
    raw = BibFile.objects.filter(pk=file).values_list("raw", flat=True).first() or ""
    return string_blocks(raw)


def live_bibliography_keep(note: Note) -> LiveBibliography:
    """Keep what the note's stored render cites, from the files as they are now, as its live
    version's entries (replacing any kept before)."""
    LiveBibliography.objects.filter(note=note).delete()
    pairs = cited_pairs(note)
    keys = NoteCitation.objects.filter(note=note).values_list("key", flat=True)
    files = {file for _, file, _ in pairs if file is not None}
    found = {
        (entry.bibfile_id, entry.key): entry
        for entry in BibEntry.objects.filter(
            bibfile_id__in=files, key__in={key for *_, key in pairs}
        )
        .readable()
        .only("bibfile_id", "key", "entry_type", "fields", "persons", "source", "scholar")
    }
    kept = [
        (bib_name(name), found[(file, key)]) for name, file, key in pairs if (file, key) in found
    ]
    sources: dict[int, list[str]] = {}
    for _, entry in kept:
        sources.setdefault(entry.bibfile_id, []).append(entry.source)
    macros = {}
    versions = BibFile.objects.filter(pk__in=sources).values_list(
        "pk", "name", "sha256", "updated_at"
    )
    for file, name, digest, updated in versions:
        used = macros_used(sources[file], _file_string_blocks(file, digest, updated))
        if used:
            macros[name] = used
    live = LiveBibliography.objects.create(note=note, keys=list(dict.fromkeys(keys)), macros=macros)
    LiveBibEntry.objects.bulk_create(
        [
            LiveBibEntry(
                live=live,
                bib_name=name,
                key=entry.key,
                entry_type=entry.entry_type,
                fields=entry.fields,
                persons=entry.persons,
                source=entry.source,
                scholar=entry.scholar,
            )  # fmt: skip
            for name, entry in kept
        ],
        batch_size=500,
    )
    return live
