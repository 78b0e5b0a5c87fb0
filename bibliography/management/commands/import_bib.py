"""`manage.py import_bib FILE [--name bib/x.bib]`: import a .bib file, print its parse report."""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from bibliography.services import BibParseStopped, bib_size_check, bibfile_import


class Command(BaseCommand):
    help = (
        "Import a BibTeX file as a bibliography (created, or updated in place by key). Prints "
        "the entries kept on stdout and each block that could not be read on stderr as "
        "FILE:LINE: key: reason; the exit code is 1 when any block failed."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="The .bib file to import.")
        parser.add_argument(
            "--name",
            default=None,
            help="The name notes use, e.g. bib/refs.bib (default: bib/<the file's name>).",
        )

    def handle(self, *args, **options):
        path: Path = options["file"]
        name = options["name"] or f"bib/{path.name}"
        try:
            bib_size_check(path.stat().st_size)  # before reading a file that may be huge
            raw = path.read_bytes()
            result = bibfile_import(name=name, raw=raw)
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror or error}") from None
        except BibParseStopped as error:
            self._report(path, error.problems)
            raise CommandError(
                f"{path}: nothing was imported (reading it passed a bound: see the report)."
            ) from None
        except ValidationError as error:
            raise CommandError(f"{path}: {' '.join(error.messages)}") from None

        self.stdout.write(f"{result.entries_kept} entries kept ({result.outcome}) in {name}")
        self._report(path, result.problems)
        if result.problems:
            raise CommandError(
                f"{len(result.problems)} block(s) of {path} could not be read cleanly "
                "(listed above); every other entry was kept."
            )

    def _report(self, path: Path, problems) -> None:
        for problem in problems:
            key = f" {problem.key}:" if problem.key else ""
            self.stderr.write(f"{path}:{problem.line}:{key} {problem.reason}")
