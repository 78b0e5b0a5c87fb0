from django.db import migrations


class Migration(migrations.Migration):
    # The hugosite app takes over DataFile and HugoAsset (hugosite 0002); their tables stay.

    dependencies = [
        ("notes", "0017_note_trash"),
        ("hugosite", "0002_datafile_hugoasset"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="DataFile"),
                migrations.DeleteModel(name="HugoAsset"),
            ],
            database_operations=[],
        ),
    ]
