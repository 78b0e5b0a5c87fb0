"""Migrations are complete and create the environment kinds and the roles."""

from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from notes.models import Environment

THEME_KINDS = [
    "Definition",
    "Lemma",
    "Theorem",
    "Proposition",
    "Corollary",
    "Proof",
    "Claim",
    "Axiom",
    "Conjecture",
    "Counterexample",
    "Criterion",
    "Formula",
    "Identity",
    "Observation",
    "Postulate",
    "Principle",
    "Property",
    "Rule",
    "Example",
    "Algorithm",
]
ADDED_KINDS = ["Remark", "Exercise", "Solution", "Assumption", "Hypothesis", "Note"]


@pytest.mark.django_db
def test_models_and_migrations_agree():
    """`makemigrations --check` finds nothing to write."""
    call_command("makemigrations", "--check", "--dry-run", stdout=StringIO())


@pytest.mark.django_db
def test_environment_kinds_exist_after_migrate():
    """Every kind the theme's notes use, plus SciDraft's additions, is a row after migrate."""
    labels = set(Environment.objects.values_list("label", flat=True))
    assert set(THEME_KINDS + ADDED_KINDS) <= labels


@pytest.mark.django_db
def test_statement_kinds_share_one_counter_and_proofs_are_unnumbered():
    """Theorem, Lemma, Corollary… number together; Proof and Solution carry no number."""
    counters = {env.key: env.counter_name for env in Environment.objects.all()}
    assert counters["theorem"] == counters["lemma"] == counters["corollary"] == "theorem"
    assert counters["definition"] != counters["theorem"]
    unnumbered = set(Environment.objects.filter(numbered=False).values_list("key", flat=True))
    assert {"proof", "solution"} <= unnumbered
    assert Environment.objects.get(key="proof").style == Environment.Style.PROOF


@pytest.mark.django_db
def test_editor_and_author_groups_exist_with_their_permissions():
    """Editors publish and edit any note and manage tags and environments; Authors do not."""
    editor = {
        f"{p.content_type.app_label}.{p.codename}"
        for p in Group.objects.get(name="Editor").permissions.all()
    }
    author = {
        f"{p.content_type.app_label}.{p.codename}"
        for p in Group.objects.get(name="Author").permissions.all()
    }
    assert {
        "notes.edit_any_note",
        "notes.review_note",
        "notes.change_environment",
        "notes.delete_tag",
        "bibliography.delete_bibfile",
    } <= editor
    assert {
        "notes.add_note",
        "notes.change_note",
        "notes.publish_note",
        "bibliography.add_bibfile",
    } <= author
    assert not author & {
        "notes.edit_any_note",
        "notes.review_note",
        "notes.delete_note",
        "notes.change_environment",
        "bibliography.delete_bibfile",
    }
    assert author < editor
