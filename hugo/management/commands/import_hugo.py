from collections import Counter
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from hugo.importing import KINDS, import_site


class Command(BaseCommand):
    help = (
        "Import a Hugo site that uses the SciDraft theme: hugo.toml (settings, menus, entry "
        "sets), assets/**.bib, data files, images, notes and standalone pages. Idempotent: a "
        "second run reports 0 created. Files that cannot be read are reported and skipped."
    )

    def add_arguments(self, parser):
        parser.add_argument("site_dir", type=Path, help="The Hugo site folder (has content/).")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Report what would change, then roll everything back; no file is written.",
        )

    def handle(self, *args, **options):
        root: Path = options["site_dir"]
        if not (root / "content").is_dir():
            raise CommandError(f"{root} has no content/ folder; is it a Hugo site?")
        dry_run = options["dry_run"]
        report, warnings, _ = import_site(root, dry_run=dry_run)
        if dry_run:
            self.stdout.write(self.style.WARNING("Dry run: nothing was saved. It WOULD do:"))
        self.stdout.write(
            f"{'':<20} {'created':>8} {'updated':>8} {'unchanged':>10} {'warnings':>9}"
        )
        warned = Counter(_kind_of(problem.path) for problem in report.problems)
        warned["notes"] += len(warnings)
        total_created = 0
        for kind in KINDS + tuple(k for k in report.counts if k not in KINDS):
            counter = report.counts.get(kind)
            if counter is None and not warned[kind]:
                continue
            counter = counter or Counter()
            total_created += counter["created"]
            self.stdout.write(
                f"{kind:<20} {counter['created']:>8} {counter['updated']:>8} "
                f"{counter['unchanged']:>10} {warned[kind]:>9}"
            )
        self.stdout.write(
            f"{total_created} created, {len(warnings)} render warning(s), "
            f"{len(report.problems)} problem(s)"
        )
        if warnings:
            self.stdout.write(self.style.WARNING("Render warnings (the notes were imported):"))
            for line in warnings:
                self.stdout.write(f"  {line}")
        if report.problems:
            self.stdout.write(
                self.style.ERROR(
                    "Problems (a note or page with broken front matter was skipped; "
                    "the rest of the site was imported):"
                )
            )
            for problem in report.problems:
                self.stdout.write(f"  {problem}")


def _kind_of(path: str) -> str:
    if path.startswith("assets/"):
        return "bibliography files"
    if path.startswith("data/"):
        return "data files"
    if path.startswith("static/"):
        return "images"
    if path.startswith("content/notes/"):
        return "notes"
    if path.startswith("content/"):
        return "pages"
    return "settings"
