import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from bibliography.formatting import ParsedBibliography
from bibliography.parsing import parse_bibtex
from hugosite.front_matter import FrontMatterError, split_front_matter
from scidraft.markup import DEFAULT_ENVIRONMENTS, RenderContext, render


class Command(BaseCommand):
    help = (
        "Render a note body (Markdown with math and shortcodes) to HTML on stdout; warnings go "
        "to stderr as FILE:LINE: code: message. Front matter, if any, is skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="Markdown file, e.g. content/notes/x.md")
        parser.add_argument("--json", action="store_true", help="Print the whole result as JSON.")
        parser.add_argument(
            "--bib",
            type=Path,
            action="append",
            default=[],
            help="A .bib file; lists naming bib/<its file name> use it. Repeatable.",
        )
        parser.add_argument("--style", default=None, help="Citation style (default: the site's).")

    def handle(self, *args, **options):
        path: Path = options["file"]
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"cannot read {path}: {error}") from None
        try:
            matter = split_front_matter(text)
        except FrontMatterError as error:
            raise CommandError(f"{path}:{error.line or 1}: {error.message}") from None

        bibliographies = {}
        for bib_path in options["bib"]:
            try:
                parsed = parse_bibtex(bib_path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as error:
                raise CommandError(f"cannot read {bib_path}: {error}") from None
            for problem in parsed.problems:
                self.stderr.write(f"{bib_path}:{problem.line}: bib-parse: {problem.reason}")
            bibliographies[bib_path.name] = ParsedBibliography(
                f"bib/{bib_path.name}", parsed.entries
            )

        def resolve_bibliography(name: str):
            return bibliographies.get(name.strip().rsplit("/", 1)[-1])

        context = RenderContext(
            environments=self._environments(),
            resolve_bibliography=resolve_bibliography,
            citation_style=options["style"],
        )
        rendered = render(matter.body, context)
        offset = matter.body_line - 1
        for warning in rendered.warnings:
            self.stderr.write(f"{path}:{warning.line + offset}: {warning.code}: {warning.message}")
        if options["json"]:
            data = rendered.as_dict()
            for warning in data["warnings"]:
                warning["line"] += offset
            sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        else:
            sys.stdout.write(rendered.html + "\n")

    def _environments(self):
        # The site's kinds when there is a database; the built-in kinds otherwise.
        try:
            from notes.rendering import environment_kinds

            kinds = environment_kinds()
        except DatabaseError:
            return DEFAULT_ENVIRONMENTS
        return kinds or DEFAULT_ENVIRONMENTS
