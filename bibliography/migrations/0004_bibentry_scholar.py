from django.db import migrations, models


def fill_scholar(apps, schema_editor):
    """Entries stored before the value was kept get it now, from their stored fields (each
    value bounded by scholar_reference, however long the stored field is)."""
    from bibliography.exports import scholar_reference

    BibEntry = apps.get_model("bibliography", "BibEntry")
    entries = BibEntry.objects.only("pk", "fields", "persons").order_by("pk")
    changed = []
    for entry in entries.iterator(chunk_size=200):
        entry.scholar = scholar_reference(entry)
        changed.append(entry)
        if len(changed) == 200:
            BibEntry.objects.bulk_update(changed, ["scholar"])
            changed = []
    BibEntry.objects.bulk_update(changed, ["scholar"])


class Migration(migrations.Migration):
    dependencies = [("bibliography", "0003_bibfile_is_public")]

    operations = [
        migrations.AddField(
            model_name="bibentry",
            name="scholar",
            field=models.TextField(
                blank=True,
                editable=False,
                help_text="Google Scholar's citation_reference value: decoded and bounded "
                "when the file is read, so note pages only print it.",
            ),
        ),
        migrations.RunPython(fill_scholar, migrations.RunPython.noop),
    ]
