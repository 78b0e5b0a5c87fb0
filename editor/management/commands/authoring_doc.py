from django.core.management.base import BaseCommand, CommandError

from editor.guide_doc import DOCUMENT, authoring_markdown


class Command(BaseCommand):
    help = (
        "Write docs/authoring.md from the syntax guide (editor/guide.py), which /help/syntax/ "
        "shows. --check only says whether the committed file is current."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--check", action="store_true", help="Write nothing; exit 1 if the file differs."
        )

    def handle(self, *args, **options):
        text = authoring_markdown()
        current = DOCUMENT.read_text() if DOCUMENT.exists() else None
        if options["check"]:
            if current != text:
                raise CommandError(f"{DOCUMENT.name} differs from the guide: run authoring_doc.")
            self.stdout.write(f"{DOCUMENT.name} is current.")
            return
        DOCUMENT.write_text(text)
        self.stdout.write(self.style.SUCCESS(f"Wrote {DOCUMENT}"))
