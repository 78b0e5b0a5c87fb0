"""Read a Hugo site that uses the SciDraft theme: config, notes, standalone pages, .bib files.

Model-free, like scidraft.markup: it turns files into plain data with SciDraft's field names
(docs/theme.md#front-matter) and reports what it cannot read, file by file, without stopping. The
services (hugosite.loading.hugo_site_load) write that data to the database; `seed_demo` and
`import_hugo` both go through here. The parts it reads with live beside it: front_matter
(splitting and parsing, bounded), content (notes and pages as fields), site_config (hugo.toml)
and problems (what could not be read).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scidraft.bounds import input_path

from .content import NoteSource, PageSource, note_from_front_matter, page_from_front_matter
from .front_matter import FrontMatterError, split_front_matter
from .problems import Problem
from .site_config import SiteConfig, read_config
from .tree import OUTSIDE, site_files


@dataclass
class BibSource:
    name: str  # as notes name it: bib/refs.bib
    path: str
    text: str


@dataclass
class HugoSite:
    root: Path
    config: SiteConfig
    notes: NoteFiles | list[NoteSource]
    pages: list[PageSource]
    bib_files: list[BibSource]
    problems: list[Problem]


# --- Whole site --------------------------------------------------------------------------------


class NoteFiles:
    """A site's notes, read from their files each time they are iterated: a site of thousands
    of notes is never held in memory whole, only the note being loaded (hugosite.loading
    writes them in batches). `located` holds each readable note's path and slug; a note that
    cannot be read is a problem, added to `problems`."""

    def __init__(self, root: Path, located: list[tuple[str, str]], problems: list[Problem]):
        self.root = root
        self.located = located
        self.problems = problems

    def __len__(self) -> int:
        return len(self.located)

    @property
    def slugs(self) -> list[str]:
        return [slug for _, slug in self.located]

    def __iter__(self):
        for relative, slug in self.located:
            text = _read_text(self.root / relative, self.root, self.problems)
            if text is None:
                continue
            try:
                yield note_from_front_matter(relative, slug, split_front_matter(text))
            except FrontMatterError as error:
                self.problems.append(Problem(relative, error.message, error.line))


def _read_text(path: Path, root: Path, problems: list[Problem]) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        problems.append(Problem(str(path.relative_to(root)), f"not UTF-8 text: {error}"))
    except OSError as error:
        problems.append(Problem(str(path.relative_to(root)), f"cannot read: {error}"))
    return None


@input_path("hugo-tree")
def read_site(root: Path | str) -> HugoSite:
    """Everything under a Hugo site folder; unreadable files become problems, not exceptions."""
    root = Path(root)
    config, problems = read_config(root)
    content = root / "content"

    def files(folder: Path) -> list[Path]:
        listing = site_files(root, folder)
        problems.extend(
            Problem(path.relative_to(root).as_posix(), OUTSIDE) for path in listing.outside
        )
        return listing.files

    in_content = files(content)
    notes_folder = content / "notes"
    located: list[tuple[str, str]] = []
    for path in in_content:
        if path.suffix != ".md" or notes_folder not in path.parents or path.name == "_index.md":
            continue
        # A page bundle (notes/x/index.md) takes its folder's name, as in Hugo.
        slug = path.parent.name if path.name == "index.md" else path.stem
        located.append((str(path.relative_to(root)), slug))
    notes = NoteFiles(root, located, problems)
    # Read once here for the problems (a note that cannot be read is skipped from the start);
    # the sources themselves are read again, one at a time, as the import goes.
    notes.located = [(source.path, source.slug) for source in notes]

    pages: list[PageSource] = []
    top = [path for path in in_content if path.suffix == ".md" and path.parent == content]
    bundles = [
        path for path in in_content if path.name == "index.md" and path.parent.parent == content
    ]
    for path in top + bundles:
        if path.name == "_index.md" or path.parent.name == "notes":
            continue
        relative = str(path.relative_to(root))
        text = _read_text(path, root, problems)
        if text is None:
            continue
        slug = path.parent.name if path.name == "index.md" else path.stem
        try:
            pages.append(page_from_front_matter(relative, slug, split_front_matter(text)))
        except FrontMatterError as error:
            problems.append(Problem(relative, error.message, error.line))

    bib_files: list[BibSource] = []
    assets = root / "assets"
    for path in (path for path in files(assets) if path.suffix == ".bib"):
        text = _read_text(path, root, problems)
        if text is not None:
            name = str(path.relative_to(assets)).replace("\\", "/")
            bib_files.append(BibSource(name=name, path=str(path.relative_to(root)), text=text))

    return HugoSite(root, config, notes, pages, bib_files, problems)
