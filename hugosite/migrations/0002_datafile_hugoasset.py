from django.db import migrations, models


class Migration(migrations.Migration):
    # DataFile and HugoAsset, created by notes 0004, become this app's models on the tables
    # they have (db_table): only the state moves, no row is copied.

    dependencies = [
        ("hugosite", "0001_initial"),
        ("notes", "0017_note_trash"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="DataFile",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("name", models.CharField(max_length=200, unique=True)),
                        (
                            "path",
                            models.CharField(
                                help_text="Path in the Hugo site: data/<file>.", max_length=300
                            ),
                        ),
                        ("raw", models.TextField(blank=True)),
                        ("content", models.JSONField(blank=True, default=dict)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                    ],
                    options={"db_table": "notes_datafile", "ordering": ["name"]},
                ),
                migrations.CreateModel(
                    name="HugoAsset",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("static", "static/ file"),
                                    ("bundle", "page-bundle resource"),
                                ],
                                max_length=10,
                            ),
                        ),
                        (
                            "path",
                            models.CharField(
                                help_text="Relative to static/ or content/.", max_length=500
                            ),
                        ),
                        ("sha256", models.CharField(max_length=64)),
                        ("size", models.PositiveBigIntegerField(default=0)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        "db_table": "notes_hugoasset",
                        "ordering": ["kind", "path"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("kind", "path"), name="hugoasset_unique"
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
