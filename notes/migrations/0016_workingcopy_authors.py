from django.db import migrations, models


def authors_from_fields(apps, schema_editor):
    """Existing working copies get the author rows their fields name."""
    WorkingCopy = apps.get_model("notes", "WorkingCopy")
    Author = apps.get_model("notes", "Author")
    for copy in WorkingCopy.objects.iterator():
        handles = (copy.fields or {}).get("authors") or []
        copy.authors.set(Author.objects.filter(handle__in=handles))


class Migration(migrations.Migration):
    dependencies = [
        ("notes", "0015_livebibentry_scholar"),
    ]

    operations = [
        migrations.AddField(
            model_name="workingcopy",
            name="authors",
            field=models.ManyToManyField(
                blank=True,
                help_text="The authors being edited, as in fields: they may edit the note.",
                related_name="working_copies",
                to="notes.author",
            ),
        ),
        migrations.RunPython(authors_from_fields, migrations.RunPython.noop),
    ]
