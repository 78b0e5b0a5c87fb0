import hashlib

from django.db import migrations, models

import notes.models.notes


def _draw_key(slug: str) -> int:
    # notes.feed.draw_key, as it is: a migration keeps its own copy of what it computes.
    digest = hashlib.blake2b(slug.encode("utf-8"), digest_size=8).hexdigest()
    return int(digest[:8], 16) % 2**31


def backfill(apps, schema_editor):
    Note = apps.get_model("notes", "Note")
    batch = []
    for pk, slug in Note.objects.values_list("pk", "slug").iterator(chunk_size=2_000):
        batch.append(Note(pk=pk, draw_key=_draw_key(slug)))
        if len(batch) == 2_000:
            Note.objects.bulk_update(batch, ["draw_key"])
            batch = []
    Note.objects.bulk_update(batch, ["draw_key"])


class Migration(migrations.Migration):
    dependencies = [
        ("notes", "0018_move_hugo_files_to_hugosite"),
    ]

    operations = [
        migrations.AddField(
            model_name="note",
            name="draw_key",
            field=models.IntegerField(
                default=notes.models.notes._random_draw_key, editable=False
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="note",
            index=models.Index(
                fields=["status", "has_body", "promotion", "draw_key", "slug"],
                name="note_draw_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="note",
            index=models.Index(
                fields=["id"],
                include=["status", "has_body", "date", "deleted_at", "weight", "slug", "promotion"],
                name="note_list_cover_idx",
            ),
        ),
    ]
