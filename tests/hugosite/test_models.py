"""The hugosite app's models: the migration that gives it DataFile and HugoAsset."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("notes", "0017_note_trash"), ("hugosite", "0001_initial")]


@pytest.mark.django_db(transaction=True)
def test_data_files_and_assets_stored_by_the_notes_app_are_kept_by_the_move():
    """Rows written while the notes app owned the two models are the hugosite models' rows
    after the migration: same table, same ids, nothing copied or lost."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    data = old.get_model("notes", "DataFile").objects.create(
        name="promotion-visual", path="data/promotion-visual.yaml", raw="rows: 1\n",
        content={"rows": 1},
    )  # fmt: skip
    asset = old.get_model("notes", "HugoAsset").objects.create(
        kind="static", path="img/x.png", sha256="0" * 64, size=3
    )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from hugosite.models import DataFile, HugoAsset

    assert DataFile.objects.get(pk=data.pk).content == {"rows": 1}
    moved = HugoAsset.objects.get(pk=asset.pk)
    assert moved.storage_name == "hugo/static/img/x.png" and moved.size == 3
    HugoAsset.objects.create(kind="bundle", path="a/b.jpg", sha256="1" * 64)
    assert HugoAsset.objects.count() == 2
