"""The files of a Hugo site folder, and never a file outside it.

A site folder comes from someone else: a link in it (`static/leak.txt` → a file holding the
server's secrets, `content/notes/x` → `/etc`) would have the importer copy what it points to
into the public site. Every file is read only if its real path, links followed, lies under the
real path of the site's root; a file or folder whose real path escapes is skipped and named in
the import report. Links that stay inside the folder are followed as Hugo follows them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

OUTSIDE = "skipped: a link to outside the site folder (its real path is not under the site)"


def real_root(root: Path) -> Path:
    return Path(os.path.realpath(root))


def within(path: Path, root: Path) -> bool:
    """Whether `path`, every link followed, lies under `root` (itself a real path). A broken
    link is judged by where it points: one inside fails later as unreadable, and says so."""
    try:
        Path(os.path.realpath(path)).relative_to(root)
    except ValueError:
        return False
    return True


@dataclass
class Listing:
    files: list[Path] = field(default_factory=list)  # as found under the folder, sorted
    outside: list[Path] = field(default_factory=list)  # links out of the site, not followed


def site_files(root: Path, folder: Path) -> Listing:
    """Every file under `folder` (inside the site `root`) whose real path stays in the site;
    what escapes is listed apart. A folder reached twice through links is walked once."""
    listing = Listing()
    boundary = real_root(root)
    if not folder.is_dir():
        return listing
    if not within(folder, boundary):
        listing.outside.append(folder)
        return listing
    seen: set[str] = set()
    for current, folders, names in os.walk(folder, followlinks=True):
        real = os.path.realpath(current)
        if real in seen:
            folders[:] = []
            continue
        seen.add(real)
        kept = []
        for name in sorted(folders):
            path = Path(current, name)
            if within(path, boundary):
                kept.append(name)
            else:
                listing.outside.append(path)
        folders[:] = kept
        for name in names:
            path = Path(current, name)
            (listing.files if within(path, boundary) else listing.outside).append(path)
    listing.files.sort()
    listing.outside.sort()
    return listing


def site_file(root: Path, path: Path) -> bool:
    """Whether the single file `path` of the site may be read (a config file, say)."""
    return within(path, real_root(root))
