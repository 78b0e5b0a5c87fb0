"""Editors manage every bibliography file (ARCHITECTURE "Roles"); Authors only their own."""

from django.contrib.auth.management import create_permissions
from django.db import migrations


def grant_to_editors(apps, schema_editor):
    # Permissions are normally created after all migrations (post_migrate); create this one now
    # so the Editor group can be granted it in this same migration.
    config = apps.get_app_config("bibliography")
    config.models_module = True
    create_permissions(config, apps=apps, verbosity=0)
    config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permission = Permission.objects.get(
        content_type__app_label="bibliography", codename="edit_any_bibfile"
    )
    for group in Group.objects.filter(name="Editor"):
        group.permissions.add(permission)


def revoke(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    Permission.objects.filter(
        content_type__app_label="bibliography", codename="edit_any_bibfile"
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("bibliography", "0001_initial"),
        ("notes", "0002_environments_and_roles"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="bibfile",
            options={
                "ordering": ["name"],
                "permissions": [("edit_any_bibfile", "Can edit any bibliography file")],
                "verbose_name": "bibliography file",
            },
        ),
        migrations.RunPython(grant_to_editors, revoke),
    ]
