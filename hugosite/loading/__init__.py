"""Load a Hugo site read by hugosite.reading into the database: its config, bibliographies,
notes and standalone pages, idempotently (a second load changes nothing).

report: what a load changes and may change (LoadPolicy), and its LoadReport; config: settings,
menus and entry sets; notes: the notes, a batch at a time; pages: standalone pages; site: the whole
site in that order. Every public name is here.
"""

from .config import settings_fresh, site_configure
from .notes import NoteImportBatch, note_import, note_import_batched
from .pages import page_import
from .report import CONFIG_PARTS, REPLACE_ALL, LoadPolicy, LoadReport, RowChange, changed_fields
from .site import hugo_site_load

__all__ = [
    "CONFIG_PARTS",
    "REPLACE_ALL",
    "LoadPolicy",
    "LoadReport",
    "NoteImportBatch",
    "RowChange",
    "changed_fields",
    "hugo_site_load",
    "note_import",
    "note_import_batched",
    "page_import",
    "settings_fresh",
    "site_configure",
]
