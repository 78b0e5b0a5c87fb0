import django.contrib.postgres.search
from django.conf import settings
from django.contrib.postgres.search import SearchVector
from django.db import migrations
from django.db.models.functions import Left

# GIN indexes exist only on PostgreSQL, so they are made here rather than in Meta.indexes:
# on SQLite the column stays empty and this migration adds nothing else.
INDEXES = (("notes_note", "note_search_vector_gin"), ("notes_page", "page_search_vector_gin"))
CONFIGS = {
    "en": "english", "de": "german", "fr": "french", "es": "spanish", "it": "italian",
    "nl": "dutch", "pt": "portuguese", "ru": "russian", "sv": "swedish", "da": "danish",
    "fi": "finnish", "no": "norwegian", "nb": "norwegian", "hu": "hungarian",
    "ro": "romanian", "tr": "turkish",
}  # fmt: skip


def vectors_build(apps, schema_editor):
    """The GIN indexes, and the vectors of the rows already there (as notes.search_index
    builds them on save: a migration keeps its own copy of the recipe)."""
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, name in INDEXES:
        schema_editor.execute(f"CREATE INDEX {name} ON {table} USING gin (search_vector)")
    site = apps.get_model("site", "SiteSettings").objects.filter(pk=1).first()
    config = CONFIGS.get((site.language_code if site else "en")[:2].lower(), "simple")
    limit = settings.SEARCH_INDEX_MAX_CHARS

    def bounded(name):
        return Left(name, limit)

    vector = (
        SearchVector(bounded("title"), weight="A", config=config)
        + SearchVector(bounded("summary"), bounded("description"), weight="B", config=config)
        + SearchVector(bounded("rendered_text"), weight="C", config=config)
    )
    for model in ("Note", "Page"):
        apps.get_model("notes", model).objects.update(search_vector=vector)


def indexes_drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for _, name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [
        ("notes", "0013_live_bibliography"),
        ("site", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="note",
            name="search_vector",
            field=django.contrib.postgres.search.SearchVectorField(editable=False, null=True),
        ),
        migrations.AddField(
            model_name="page",
            name="search_vector",
            field=django.contrib.postgres.search.SearchVectorField(editable=False, null=True),
        ),
        migrations.RunPython(vectors_build, indexes_drop),
    ]
