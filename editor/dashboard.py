"""The editor's dashboard at /write/: the notes a person works on, filtered and paged."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from notes import services
from notes.models import Author, AuthorConsent, Note, Status, Tag
from scidraft.site.meta import PageMeta

from .references import waiting_notes

STATUS_FILTERS = ("draft", "review", "scheduled", "published", "changes")
DASHBOARD_FILTERS = ("q", "status", "author", "tag", "problems")


def _meta(title: str) -> PageMeta:
    return PageMeta(title=f"{title} | SciDraft editor", noindex=True)


DASHBOARD_PAGE_SIZE = 50


@never_cache
@login_required
@require_GET
def dashboard(request):
    """The notes a person works on: an Author's own and co-authored notes; every note for
    Editors and Admins (or only theirs, ?scope=mine). Filtered by title, status, author, tag,
    problems and review; 50 a page, in a constant number of queries."""
    user = request.user
    editor = services.is_editor(user)
    scope = "mine" if not editor or request.GET.get("scope") == "mine" else "all"
    notes = Note.objects.for_dashboard(user, mine=scope == "mine")
    filters = {name: request.GET.get(name, "").strip() for name in DASHBOARD_FILTERS}
    notes = notes.dashboard_filtered(**filters, now=timezone.now())
    page = Paginator(notes, DASHBOARD_PAGE_SIZE).get_page(request.GET.get("page"))
    rows = list(page.object_list)
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "editor/dashboard.html",
        {
            "rows": [_dashboard_row(note, user) for note in rows],
            "page": page,
            "page_query": query.urlencode(),
            "filters": filters,
            "scope": scope,
            "editor": editor,
            "status_filters": STATUS_FILTERS,
            "author_options": Author.objects.filter(is_active=True).values_list("handle", "name"),
            "tag_options": Tag.objects.offered_to(user)
            .order_by("name")
            .values_list("slug", "name"),
            "references_waiting": waiting_notes(user).count(),
            "requests": AuthorConsent.objects.pending_for(user)
            .select_related("note", "requested_by")
            .order_by("created_at"),
            "meta": _meta("Notes" if scope == "all" else "My notes"),
            "assets": {},
        },
    )


def _dashboard_row(note: Note, user) -> dict:
    now = timezone.now()
    if note.changes_in_review or note.status == Status.REVIEW:
        label = "In review" if note.status == Status.REVIEW else "Published, changes in review"
    elif note.has_changes:
        label = "Published, with unpublished changes"
    elif note.status == Status.PUBLISHED:
        label = "Scheduled" if note.date > now else "Published"
    else:
        label = "Draft"
    links = list(note.authorships.all())
    return {
        "note": note,
        "status": label,
        "authors": [link.author for link in links],
        "coauthor": note.created_by_id != user.pk
        and any(link.author.user_id == user.pk for link in links),
        "problems": note.problem_count,
    }
