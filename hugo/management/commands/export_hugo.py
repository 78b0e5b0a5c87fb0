from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from hugo.exporting import export_site


class Command(BaseCommand):
    help = (
        "Write the site as a Hugo site for the SciDraft theme: hugo.toml, content/notes/*.md "
        "with TOML front matter, standalone pages, assets/<bib files>, data files and imported "
        "images at their original paths. `import_hugo` on the result gives the same site."
    )

    def add_arguments(self, parser):
        parser.add_argument("out_dir", type=Path, help="Folder to write (created if missing).")

    def handle(self, *args, **options):
        out: Path = options["out_dir"]
        if out.exists() and not out.is_dir():
            raise CommandError(f"{out} exists and is not a folder.")
        counts = export_site(out)
        for kind, count in counts.items():
            self.stdout.write(f"{kind}: {count}")
        self.stdout.write(self.style.SUCCESS(f"Wrote {out}"))
