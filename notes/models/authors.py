"""Authors, their ordered authorship of notes, and their consent to being named."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone


class Author(models.Model):
    """A person who writes notes. `handle` is the theme's `author` identity (`@handle`)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="author",
    )
    name = models.CharField(max_length=200)
    handle = models.SlugField(max_length=100, unique=True, allow_unicode=True)
    institute = models.CharField(max_length=200, blank=True)
    orcid = models.CharField(
        max_length=19,
        blank=True,
        validators=[
            RegexValidator(r"^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$", "An ORCID iD: 0000-0002-1825-0097.")
        ],
    )
    email = models.EmailField(blank=True)
    bio = models.TextField(blank=True)
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class AuthorConsentQuerySet(models.QuerySet):
    def pending_for(self, user):
        """Requests waiting for `user` to confirm or decline being named on a note."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(author__user=user, state=AuthorConsent.State.PENDING)

    def unconfirmed(self, note: models.Model, author_ids):
        """Of `author_ids`, the consents on `note` that are not confirmed."""
        return self.filter(note=note, author_id__in=list(author_ids)).exclude(
            state=AuthorConsent.State.CONFIRMED
        )


class AuthorConsent(models.Model):
    """Whether a person with an account agreed to be named as an author of a note.

    A save that adds an author who is a user (not the one saving) asks them: the note cannot go
    public carrying their name until they confirm, or an Editor does. Authors added by an
    Editor, the saving user themself and authors without an account (imported names) need no
    request; a name already on the live note when this record began has no row and stays.
    """

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for confirmation"
        CONFIRMED = "confirmed", "Confirmed"
        DECLINED = "declined", "Declined"

    note = models.ForeignKey("Note", on_delete=models.CASCADE, related_name="author_consents")
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="consents")
    state = models.CharField(max_length=20, choices=State.choices, default=State.PENDING)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="authorship_requests",
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="authorship_decisions",
        help_text="The author themself, or the Editor who confirmed for them.",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = AuthorConsentQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["note", "author"], name="authorconsent_unique")
        ]

    def __str__(self) -> str:
        return f"{self.author} on {self.note}: {self.get_state_display()}"


class NoteAuthor(models.Model):
    """Ordered authorship: the first author is the card's @handle."""

    note = models.ForeignKey("Note", on_delete=models.CASCADE, related_name="authorships")
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="authorships")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["note", "author"], name="noteauthor_unique")]

    def __str__(self) -> str:
        return f"{self.author} on {self.note}"
