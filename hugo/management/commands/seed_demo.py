from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from hugo.reading import read_site
from hugo.seeding import demo_load


class Command(BaseCommand):
    help = (
        "Load the demo site (notes, pages, bibliographies, menus, settings) from the demo "
        "folder into an empty site. Safe to run again and again (make run does): a row the demo "
        "wrote follows the demo only until someone changes it; rows people changed, deleted or "
        "made themselves are never written. On a site with content the demo did not write it "
        "loads nothing and says so, unless --force."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dir",
            type=Path,
            default=None,
            help="Folder laid out as a Hugo site (default: SCIDRAFT_DEMO_DIR, i.e. demo/).",
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="On a site with content the demo did not write, add the demo's missing rows "
            "beside it anyway (existing rows are still never changed).",
        )

    def handle(self, *args, **options):
        root = options["dir"] or settings.SCIDRAFT_DEMO_DIR
        if not (root / "content").is_dir():
            raise CommandError(f"{root} has no content/ folder; is it a Hugo site?")
        result = demo_load(site=read_site(root), force=options["force"])
        if result.refused:
            # Not an error: `make run` goes on to serve the site as it is.
            self.stdout.write(self.style.WARNING(result.refused))
            return
        report = result.load
        for line in report.lines():
            style = self.style.WARNING if line.startswith("problem:") else self.style.SUCCESS
            self.stdout.write(style(line))
        if report.kept:
            self.stdout.write(self.style.WARNING("Left as they are (the site's differ):"))
            for change in report.kept:
                self.stdout.write(f"  {change.describe()}")
        if report.problems:
            raise CommandError(f"{len(report.problems)} problem(s) in the demo content.")
