from collections import Counter
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from hugosite.importing import KINDS, import_site
from hugosite.loading import CONFIG_PARTS, LoadPolicy
from hugosite.reading import read_site
from notes import completion
from scidraft.progress import Progress


class Command(BaseCommand):
    help = (
        "Import a Hugo site that uses the SciDraft theme: hugo.toml (settings, menus, entry "
        "sets), assets/**.bib, data files, images, notes and standalone pages. Idempotent: a "
        "second run reports 0 created. Files that cannot be read are reported and skipped. "
        "Settings, menus and entry sets are loaded into a site that has none of its own; on "
        "one that has, they are kept unless --replace-settings, --replace-menus or "
        "--replace-entry-sets says otherwise. Every row changed (or kept) is listed."
    )

    def add_arguments(self, parser):
        parser.add_argument("site_dir", type=Path, help="The Hugo site folder (has content/).")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Report what would change, then roll everything back; no file is written.",
        )
        for part in CONFIG_PARTS:
            flag = part.replace(" ", "-")
            parser.add_argument(
                f"--replace-{flag}",
                action="append_const",
                const=part,
                dest="replace",
                help=f"Replace the site's {part} by the Hugo site's, where they differ "
                f"(without it, a site that has its own {part} keeps them).",
            )

    def handle(self, *args, **options):
        root: Path = options["site_dir"]
        if not (root / "content").is_dir():
            raise CommandError(f"{root} has no content/ folder; is it a Hugo site?")
        dry_run = options["dry_run"]
        policy = LoadPolicy(replace=options["replace"] or ())
        site = read_site(root)
        # Progress on stderr: the report below is the command's output.
        with Progress("notes", len(site.notes), self.stderr, unit="notes") as progress:
            report, warnings, _ = import_site(
                root, dry_run=dry_run, policy=policy, site=site, advance=progress.advance
            )
        if not dry_run and (owed := completion.complete_owed()):
            # Renders cut short by time (a busy machine), completed before the command ends.
            self.stdout.write(f"{owed} render(s) cut short by time were completed.")
        if dry_run:
            self.stdout.write(self.style.WARNING("Dry run: nothing was saved. It WOULD do:"))
        kinds = KINDS + tuple(k for k in report.counts if k not in KINDS)
        # The "kept" column only when something was kept, so the usual table stays as it was.
        kept_column = any(report.counts.get(kind, Counter())["kept"] for kind in kinds)
        outcomes = ("created", "updated", "unchanged") + (("kept",) if kept_column else ())
        widths = {"created": 8, "updated": 8, "unchanged": 10, "kept": 6}
        self.stdout.write(
            f"{'':<20} "
            + " ".join(f"{name:>{widths[name]}}" for name in outcomes)
            + f" {'warnings':>9}"
        )
        warned = Counter(_kind_of(problem.path) for problem in report.problems)
        warned["notes"] += len(warnings)
        total_created = 0
        for kind in kinds:
            counter = report.counts.get(kind)
            if counter is None and not warned[kind]:
                continue
            counter = counter or Counter()
            total_created += counter["created"]
            self.stdout.write(
                f"{kind:<20} "
                + " ".join(f"{counter[name]:>{widths[name]}}" for name in outcomes)
                + f" {warned[kind]:>9}"
            )
        self.stdout.write(
            f"{total_created} created, {len(warnings)} render warning(s), "
            f"{len(report.problems)} problem(s)"
        )
        changed = [change for change in report.changes if not change.kept]
        if changed:
            self.stdout.write("Would change:" if dry_run else "Changed:")
            for change in changed:
                self.stdout.write(f"  {change.describe()}")
        if report.kept:
            self.stdout.write(
                self.style.WARNING("Kept as the site has them (the Hugo site's differ):")
            )
            for change in report.kept:
                self.stdout.write(f"  {change.describe()}")
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
