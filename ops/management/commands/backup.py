from pathlib import Path

from django.core.management.base import BaseCommand

from ops.backups import backup


class Command(BaseCommand):
    help = (
        "Back up the whole site: every row as JSON with natural keys (one consistent snapshot), "
        "the media files and the .bib files, with a manifest of versions, row counts and "
        "sha256 sums. OUT is a new folder or a file ending in .tar.gz."
    )

    def add_arguments(self, parser):
        parser.add_argument("out", help="A new (or empty) folder, or a .tar.gz file to create.")

    def handle(self, *args, **options):
        out = Path(options["out"])
        manifest = backup(out)
        rows = sum(manifest["counts"].values())
        files = sum(1 for name in manifest["files"] if name.startswith("media/"))
        self.stdout.write(f"Backed up {rows} rows and {files} media files to {out}.")
