"""A whole Hugo site loaded: config, bibliographies, notes and pages, in that order."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable

from django.db import transaction

from bibliography.models import BibFile
from bibliography.services import bib_text_check, bibfile_import
from notes.models import (
    Note,
)
from notes.rendering import (
    batch_context,
)
from notes.services.renders import note_render_store
from scidraft.site.generation import deferred_bumps

from ..problems import Problem
from ..reading import BibSource, HugoSite
from .config import site_configure
from .notes import NoteImportBatch, note_import_batched
from .pages import _page_import
from .report import LoadPolicy, LoadReport, RowChange

# Notes read, imported and written per batch: the import holds this many notes (their
# sources, rows, revisions and citation rows) at a time, however large the site.
NOTES_PER_BATCH = 200


def hugo_site_load(
    *,
    site: HugoSite,
    user=None,
    policy: LoadPolicy | None = None,
    advance: Callable[[int], None] | None = None,
) -> LoadReport:
    """Write a Hugo site's config, bibliographies, notes and pages; idempotent.

    `policy` says which rows may change (LoadPolicy: settings, menus and entry sets of a site
    that has its own are kept unless replaced). A file that cannot be read is reported and
    skipped; the rest loads. `advance(n)` is called as n more notes are loaded.
    """
    # One bump for the whole load instead of one per saved row.
    with deferred_bumps():
        return _hugo_site_load(
            site=site, user=user, policy=policy or LoadPolicy(), advance=advance or _nothing
        )


def _nothing(count: int) -> None:
    pass


def _hugo_site_load(*, site: HugoSite, user, policy: LoadPolicy, advance) -> LoadReport:
    report = LoadReport(problems=list(site.problems))
    report.add(site_configure(config=site.config, policy=policy))
    for bib in site.bib_files:
        try:
            if _bibfile_kept(bib, policy, report):
                continue
            result = bibfile_import(name=bib.name, raw=bib.text, owner=user)
        except Exception as error:  # one bad file is reported; the rest of the site loads
            report.problems.append(Problem(bib.path, str(error)))
            continue
        report.count("bibliography files", result.outcome)
        if result.outcome == "updated":
            report.changes.append(
                RowChange("bibliography files", bib.name, "update", {"raw": (None, None)})
            )
        for problem in result.problems:
            report.problems.append(Problem(bib.path, problem.reason, problem.line))
    base = batch_context()
    # One transaction for the notes (a savepoint inside import_site's) keeps the batch's row
    # locks until its revisions and citations are written. They are read, imported and
    # written NOTES_PER_BATCH at a time, each batch's rows released before the next.
    slugs = []
    with transaction.atomic():
        batch = NoteImportBatch(slugs=[], user=user, base=base, policy=policy)
        sources = iter(site.notes)
        while chunk := list(itertools.islice(sources, NOTES_PER_BATCH)):
            batch.read([source.slug for source in chunk])
            for source in chunk:
                slugs.append(source.slug)
                try:
                    _, outcome = note_import_batched(source=source, batch=batch)
                except Exception as error:  # reported per file, as above
                    report.problems.append(Problem(source.path, _describe(error)))
                    continue
                report.count("notes", outcome)
            batch.flush()
            batch.release()
            advance(len(chunk))
        report.changes.extend(batch.changes)
    # A note may \ref a label of a note loaded after it: render those once more, now that
    # every note's labels are stored.
    # Only their warnings are read for all of them: whole rows (rendered HTML) for those few.
    imported = Note.objects.filter(slug__in=slugs)
    for pk, warnings in imported.values_list("pk", "render_warnings"):
        if any(warning["code"] == "ref-unresolved" for warning in warnings):
            note_render_store(note=Note.objects.get(pk=pk), force=True, base=base)
    for source in site.pages:
        if source.headless:
            continue  # resource bundles (images for promotions) have no page of their own
        try:
            _, outcome, change = _page_import(source, policy)
        except Exception as error:  # reported per file, as above
            report.problems.append(Problem(source.path, _describe(error)))
            continue
        report.count("pages", outcome)
        if change is not None:
            report.changes.append(change)
    return report


def _bibfile_kept(bib: BibSource, policy: LoadPolicy, report: LoadReport) -> bool:
    """Whether the policy keeps the bibliography file `bib.name` as the site has it (counted
    "kept" if it differs, else "unchanged")."""
    bibfile = BibFile.objects.filter(name=bib.name).first()
    asked = RowChange("bibliography files", bib.name, "create" if bibfile is None else "update")
    asked.row = bibfile
    asked.kept = policy.row_kept(asked)
    if not asked.kept:
        return False
    digest = hashlib.sha256(bib_text_check(bib.text).encode("utf-8")).hexdigest()
    if bibfile is not None and bibfile.sha256 == digest:
        report.count("bibliography files", "unchanged")
        return True
    if bibfile is not None:
        asked.fields = {"raw": (None, None)}
    report.count("bibliography files", "kept")
    report.changes.append(asked)
    return True


def _describe(error: Exception) -> str:
    messages = getattr(error, "message_dict", None)
    if messages:
        return "; ".join(f"{name}: {' '.join(texts)}" for name, texts in messages.items())
    return str(error)
