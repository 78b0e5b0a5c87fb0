"""Environment kinds the theme's notes use, and the Editor and Author groups (ARCHITECTURE "Roles").

Statement-like results share the "theorem" counter, as most papers number them (Theorem 1,
Lemma 2, …); definitions, examples and remarks each have a counter of their own; proofs and
solutions are not numbered.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

# key, label, plural, counter, numbered, style
ENVIRONMENTS = [
    ("definition", "Definition", "Definitions", "definition", True, "definition"),
    ("theorem", "Theorem", "Theorems", "theorem", True, "theorem"),
    ("lemma", "Lemma", "Lemmas", "theorem", True, "theorem"),
    ("proposition", "Proposition", "Propositions", "theorem", True, "theorem"),
    ("corollary", "Corollary", "Corollaries", "theorem", True, "theorem"),
    ("claim", "Claim", "Claims", "theorem", True, "theorem"),
    ("conjecture", "Conjecture", "Conjectures", "theorem", True, "theorem"),
    ("criterion", "Criterion", "Criteria", "theorem", True, "theorem"),
    ("formula", "Formula", "Formulas", "theorem", True, "theorem"),
    ("identity", "Identity", "Identities", "theorem", True, "theorem"),
    ("property", "Property", "Properties", "theorem", True, "theorem"),
    ("rule", "Rule", "Rules", "theorem", True, "theorem"),
    ("axiom", "Axiom", "Axioms", "definition", True, "definition"),
    ("postulate", "Postulate", "Postulates", "definition", True, "definition"),
    ("principle", "Principle", "Principles", "definition", True, "definition"),
    ("assumption", "Assumption", "Assumptions", "definition", True, "definition"),
    ("hypothesis", "Hypothesis", "Hypotheses", "definition", True, "definition"),
    ("example", "Example", "Examples", "example", True, "definition"),
    ("counterexample", "Counterexample", "Counterexamples", "example", True, "definition"),
    ("exercise", "Exercise", "Exercises", "exercise", True, "definition"),
    ("algorithm", "Algorithm", "Algorithms", "algorithm", True, "definition"),
    ("observation", "Observation", "Observations", "remark", True, "remark"),
    ("remark", "Remark", "Remarks", "remark", True, "remark"),
    ("note", "Note", "Notes", "remark", False, "remark"),
    ("solution", "Solution", "Solutions", "", False, "proof"),
    ("proof", "Proof", "Proofs", "", False, "proof"),
]

# app_label.codename; Editors get all of these, Authors the subset below.
EDITOR_PERMISSIONS = [
    "notes.add_note", "notes.change_note", "notes.delete_note", "notes.view_note",
    "notes.publish_note", "notes.edit_any_note", "notes.review_note",
    "notes.add_noterevision", "notes.view_noterevision",
    "notes.add_tag", "notes.change_tag", "notes.delete_tag", "notes.view_tag",
    "notes.add_environment", "notes.change_environment", "notes.delete_environment",
    "notes.view_environment",
    "notes.view_author",
    "notes.add_page", "notes.change_page", "notes.view_page",
    "bibliography.add_bibfile", "bibliography.change_bibfile", "bibliography.delete_bibfile",
    "bibliography.view_bibfile", "bibliography.view_bibentry",
]
# Authors act on their own and co-authored notes and their own .bib files; the ownership
# rule lives in the querysets (Note.objects.editable_by), these are the model-level grants.
AUTHOR_PERMISSIONS = [
    "notes.add_note", "notes.change_note", "notes.view_note", "notes.publish_note",
    "notes.add_noterevision", "notes.view_noterevision",
    "notes.add_tag", "notes.view_tag", "notes.view_environment", "notes.view_author",
    "bibliography.add_bibfile", "bibliography.change_bibfile", "bibliography.view_bibfile",
    "bibliography.view_bibentry",
]


def create_environments(apps, schema_editor):
    Environment = apps.get_model("notes", "Environment")
    for position, (key, label, plural, counter, numbered, style) in enumerate(ENVIRONMENTS):
        Environment.objects.update_or_create(
            key=key,
            defaults={
                "label": label,
                "plural": plural,
                "counter": counter,
                "numbered": numbered,
                "style": style,
                "position": position,
            },
        )


def create_groups(apps, schema_editor):
    # Permissions are normally created after all migrations (post_migrate); create them now
    # so the groups can be granted them in this same migration.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")

    def permissions(names):
        found = []
        for name in names:
            app_label, codename = name.split(".")
            found.append(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )
        return found

    editor, _ = Group.objects.get_or_create(name="Editor")
    editor.permissions.set(permissions(EDITOR_PERMISSIONS))
    author, _ = Group.objects.get_or_create(name="Author")
    author.permissions.set(permissions(AUTHOR_PERMISSIONS))


def remove_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=["Editor", "Author"]).delete()


def remove_environments(apps, schema_editor):
    keys = [row[0] for row in ENVIRONMENTS]
    apps.get_model("notes", "Environment").objects.filter(key__in=keys).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("notes", "0001_initial"),
        ("bibliography", "0001_initial"),
        ("site", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.RunPython(create_environments, remove_environments),
        migrations.RunPython(create_groups, remove_groups),
    ]
