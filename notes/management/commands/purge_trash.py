from django.core.management.base import BaseCommand

from notes.services import TRASH_DAYS, trash_purge


class Command(BaseCommand):
    help = (
        f"Remove for good the notes deleted more than {TRASH_DAYS} days ago (and their "
        "revisions). Until then an Editor can restore them from the trash (/write/trash/). "
        "Run it daily, from cron or a timer."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--days", type=int, default=TRASH_DAYS, help="Keep notes trashed this recently."
        )

    def handle(self, *args, **options):
        removed = trash_purge(days=max(options["days"], 0))
        self.stdout.write(f"Removed {removed} note(s) from the trash.")
