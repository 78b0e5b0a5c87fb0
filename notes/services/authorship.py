"""Bylines by consent: nobody with an account goes public as an author of a note they did not
agree to be named on. An Author may add co-authors; a co-author who is a user
confirms (or an Editor does for them) before a version naming them is published. An Author
cannot take their own name off a note, nor name someone who cannot answer; only Editors pin
notes (weight) and put them in the feed's promotion slots."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ..models import Author, AuthorConsent, Note, NoteRevision, Status
from .records import is_editor, revision_record
from .working import authors_set, version_bump, working_copy_write, working_state


class AuthorshipError(Exception):
    """A change of authors that is not allowed as asked; the message says why."""


def _user_of(user):
    return user if user is not None and user.is_authenticated else None


def consents_request(*, note: Note, handles: list[str], user) -> None:
    """Before `handles` become the note's authors (on the row or in its working copy): ask
    each author with an account who is new to the note. The saving user and an Editor's
    additions are confirmed at once; an author already on the row with no record (named
    before consents were recorded, or by an import) is not asked again."""
    authors = list(Author.objects.filter(handle__in=handles, user__isnull=False))
    if not authors:
        return
    consents = {c.author_id: c for c in note.author_consents.filter(author__in=authors)}
    on_row = set(note.authorships.values_list("author_id", flat=True))
    editor = is_editor(user)
    now = timezone.now()
    for author in authors:
        consent = consents.get(author.pk)
        if editor or (user is not None and author.user_id == user.pk):
            if consent is None:
                AuthorConsent.objects.create(
                    note=note, author=author, state=AuthorConsent.State.CONFIRMED,
                    requested_by=_user_of(user), decided_by=_user_of(user), decided_at=now,
                )  # fmt: skip
            elif consent.state != AuthorConsent.State.CONFIRMED:
                _decide(consent, AuthorConsent.State.CONFIRMED, user, now)
            continue
        if consent is None:
            if author.pk not in on_row:
                AuthorConsent.objects.create(
                    note=note, author=author, requested_by=_user_of(user), created_at=now
                )
        elif consent.state == AuthorConsent.State.DECLINED:
            consent.state, consent.requested_by = AuthorConsent.State.PENDING, _user_of(user)
            consent.decided_by, consent.decided_at, consent.created_at = None, None, now
            consent.save()


def _decide(consent: AuthorConsent, state: str, user, now) -> None:
    consent.state, consent.decided_by, consent.decided_at = state, _user_of(user), now
    consent.save(update_fields=["state", "decided_by", "decided_at"])


def authors_check(*, note: Note, current: list[str], wanted: list[str], user) -> None:
    """Refuse an Author's change that takes their own name off the note."""
    if is_editor(user) or user is None or not user.is_authenticated:
        return
    own = set(Author.objects.filter(user=user).values_list("handle", flat=True))
    removed = [handle for handle in current if handle in own and handle not in wanted]
    if removed:
        raise AuthorshipError(
            f"You cannot take your own name ({removed[0]}) off the authors. Ask an Editor, "
            "or decline the co-authorship from your dashboard if you were added by someone else."
        )


def authors_naming_check(*, current: list[str], wanted: list[str], user) -> None:
    """Refuse an Author's change that names someone who cannot answer: an author without an
    account (an imported or demo name) or whose account is closed could never confirm or
    decline, so only Editors name them. An Author names themself and people with an account
    (who are asked to confirm); names already on what is being edited stay as they are."""
    if is_editor(user):
        return
    added = [handle for handle in wanted if handle not in current]
    if not added:
        return
    unanswerable = dict(
        Author.objects.filter(handle__in=added)
        .filter(Q(user__isnull=True) | Q(user__is_active=False))
        .values_list("handle", "name")
    )
    refused = [handle for handle in added if handle in unanswerable]
    if refused:
        names = ", ".join(f"{unanswerable[handle]} ({handle})" for handle in refused)
        raise ValidationError(
            {
                "authors": f"You cannot name {names} as an author: without an account of their "
                "own they cannot confirm or decline it. Ask an Editor to add them."
            }
        )


def promotion_check(*, state: dict, fields: dict, user) -> None:
    """Refuse an Author's change to whether the note is in the feed's promotion slots: like
    pinning, where a note stands in everyone's feed is an Editor's decision."""
    if "promotion" not in fields or is_editor(user):
        return
    if bool(fields["promotion"]) != bool(state.get("promotion")):
        raise ValidationError(
            {
                "promotion": "Only Editors put a note in the feed's promotion slots or take it "
                "out: ask an Editor."
            }
        )


def unconfirmed_authors(note: Note, handles: list[str]) -> list[Author]:
    """Of `handles`, the authors whose consent to this note is pending or was declined."""
    consents = AuthorConsent.objects.unconfirmed(
        note, Author.objects.filter(handle__in=handles).values_list("pk", flat=True)
    ).select_related("author")
    return [consent.author for consent in consents]


def consents_settle(*, note: Note, handles: list[str], user) -> None:
    """Before a version naming `handles` goes public: an Editor publishing it confirms for the
    authors who have not (recorded as theirs); anyone else is refused until they do."""
    waiting = unconfirmed_authors(note, handles)
    if not waiting:
        return
    if not is_editor(user):
        names = ", ".join(author.name for author in waiting)
        raise AuthorshipError(
            f"Waiting for {names} to confirm being named as an author of this note: it is "
            "published once they confirm (from their dashboard) or an Editor does."
        )
    now = timezone.now()
    for consent in AuthorConsent.objects.unconfirmed(note, [a.pk for a in waiting]):
        _decide(consent, AuthorConsent.State.CONFIRMED, user, now)


@transaction.atomic
def authorship_confirm(*, note_id: int, author_id: int, user) -> AuthorConsent:
    """The author themself, or an Editor for them, agrees to be named on the note."""
    consent = (
        AuthorConsent.objects.select_for_update()
        .select_related("author")
        .filter(note_id=note_id, author_id=author_id)
        .first()
    )
    if consent is None:
        raise AuthorshipError("Nobody asked this author to be named on this note.")
    if not (is_editor(user) or (user.is_authenticated and consent.author.user_id == user.pk)):
        raise PermissionDenied("Only the author themself or an Editor confirms a byline.")
    if consent.state != AuthorConsent.State.CONFIRMED:
        _decide(consent, AuthorConsent.State.CONFIRMED, user, timezone.now())
    return consent


@transaction.atomic
def authorship_decline(*, note_id: int, user) -> AuthorConsent:
    """`user` declines a pending request to be named on the note: their name leaves its
    authors (and its working copy's), and the request is kept as declined."""
    consent = (
        AuthorConsent.objects.select_for_update()
        .select_related("author")
        .filter(note_id=note_id, author__user=user, state=AuthorConsent.State.PENDING)
        .first()
    )
    if consent is None:
        raise AuthorshipError("There is no request for you to decline on this note.")
    note = Note.objects.select_for_update().get(pk=note_id)
    handle = consent.author.handle
    _decide(consent, AuthorConsent.State.DECLINED, user, timezone.now())
    state = working_state(note)
    if handle in state["authors"]:
        state["authors"] = [h for h in state["authors"] if h != handle]
        if note.status == Status.PUBLISHED:
            working_copy_write(note, state, user)
        else:
            authors_set(note, state["authors"])
        version_bump(note)
        revision_record(
            note=note,
            kind=NoteRevision.Kind.SAVE,
            user=user,
            message=f"{consent.author.name} declined to be named as an author",
            state=working_state(note),
        )
    return consent
