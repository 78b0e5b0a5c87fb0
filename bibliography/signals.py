"""Signals the bibliography app sends; apps that store renders listen (notes re-renders)."""

from django.dispatch import Signal

# Sent inside the import's transaction when a file's entries were created or changed;
# arguments: bibfile (BibFile).
bibfile_changed = Signal()

# Sent inside the same transaction just before a file's text or visibility changes (a new
# file too), while its entries are still the old ones; arguments: name (str).
bibfile_changing = Signal()
