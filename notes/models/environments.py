"""Theorem-like environment kinds."""

from __future__ import annotations

from django.db import models


class Environment(models.Model):
    """A theorem-like environment kind (`:::lemma` blocks and `**Lemma.**` lead-ins)."""

    class Style(models.TextChoices):
        THEOREM = "theorem", "Theorem (italic body)"
        DEFINITION = "definition", "Definition (upright body)"
        REMARK = "remark", "Remark (upright, light heading)"
        PROOF = "proof", "Proof (ends with ∎)"

    key = models.SlugField(max_length=50, unique=True, help_text="Used in `:::key` blocks.")
    label = models.CharField(max_length=100, help_text="Heading word, e.g. Lemma.")
    plural = models.CharField(max_length=100, help_text="e.g. Lemmas.")
    counter = models.SlugField(
        max_length=50,
        blank=True,
        help_text="Kinds with the same counter share one numbering; blank: the kind's own.",
    )
    numbered = models.BooleanField(default=True)
    style = models.CharField(max_length=20, choices=Style.choices, default=Style.THEOREM)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "key"]

    def __str__(self) -> str:
        return self.label

    @property
    def counter_name(self) -> str:
        return self.counter or self.key
