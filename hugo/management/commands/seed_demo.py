from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from hugo.loading import hugo_site_load
from hugo.reading import read_site


class Command(BaseCommand):
    help = (
        "Load the demo site (notes, pages, bibliographies, menus, settings) from the demo folder. "
        "Idempotent: a second run changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dir",
            type=Path,
            default=None,
            help="Folder laid out as a Hugo site (default: SCIDRAFT_DEMO_DIR, i.e. demo/).",
        )

    def handle(self, *args, **options):
        root = options["dir"] or settings.SCIDRAFT_DEMO_DIR
        if not (root / "content").is_dir():
            raise CommandError(f"{root} has no content/ folder; is it a Hugo site?")
        report = hugo_site_load(site=read_site(root))
        for line in report.lines():
            style = self.style.WARNING if line.startswith("problem:") else self.style.SUCCESS
            self.stdout.write(style(line))
        if report.problems:
            raise CommandError(f"{len(report.problems)} problem(s) in the demo content.")
