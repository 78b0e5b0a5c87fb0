from pathlib import Path

from django.core.management.base import BaseCommand

from ops.backups import restore


class Command(BaseCommand):
    help = (
        "Restore a backup made by `manage.py backup` into this database, which must be "
        "migrated and hold no notes, pages or bibliographies (unless --force). Copies the "
        "media back and re-renders if the rendering engine changed since the backup."
    )

    def add_arguments(self, parser):
        parser.add_argument("source", metavar="IN", help="A backup folder or .tar.gz file.")
        parser.add_argument(
            "--force",
            action="store_true",
            help="Replace the content this database already holds with the backup's.",
        )

    def handle(self, *args, **options):
        restore(Path(options["source"]), force=options["force"], stdout=self.stdout)
        self.stdout.write(self.style.SUCCESS(f"Restored {options['source']}."))
