"""People (Admins only): users with their role, state and author profile; invite by email,
change a role, deactivate or reactivate. Writes go through accounts.services; anyone who is
not an Admin gets 403."""

from __future__ import annotations

from urllib.parse import urlsplit

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from accounts import services
from notes.models import Author
from scidraft.site.meta import PageMeta
from scidraft.site.models import SiteSettings

ROLE_CHOICES = list(services.ROLES.items())


class InviteForm(forms.Form):
    name = forms.CharField(max_length=200)
    # A text box that asks for an email keyboard: the editor's form styles style text boxes.
    email = forms.EmailField(
        widget=forms.TextInput(attrs={"inputmode": "email", "autocomplete": "email"})
    )
    role = forms.ChoiceField(choices=ROLE_CHOICES, initial="author")
    author = forms.ModelChoiceField(
        queryset=Author.objects.none(),
        required=False,
        empty_label="A new profile",
        label="Author profile",
        help_text="An existing profile without a user (from an import, say), or a new one.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["author"].queryset = Author.objects.filter(user__isnull=True).order_by("name")


def _require_admin(user) -> None:
    if not user.is_superuser:
        raise PermissionDenied("Only Admins manage people.")


def _origin(request) -> str:
    """Where invitation links point: the site's configured address, else this request's."""
    parts = urlsplit(SiteSettings.objects.current().base_url or "")
    if parts.scheme and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}"
    return request.build_absolute_uri("/").rstrip("/")


def _people_page(request, form: InviteForm, *, status: int = 200):
    users = (
        get_user_model()
        .objects.select_related("author")
        .prefetch_related("groups")
        .order_by("-is_active", "username")
    )
    rows = [
        {
            "user": user,
            "role": services.role_of(user),
            "pending": not user.has_usable_password(),
            "author": getattr(user, "author", None),
        }
        for user in users
    ]
    return render(
        request,
        "editor/people.html",
        {
            "rows": rows,
            "form": form,
            "roles": ROLE_CHOICES,
            "meta": PageMeta(title="People | SciDraft editor", noindex=True),
            "assets": {},
        },
        status=status,
    )


@never_cache
@login_required
@require_GET
def people_list(request):
    _require_admin(request.user)
    return _people_page(request, InviteForm())


@never_cache
@login_required
@require_POST
def people_invite(request):
    _require_admin(request.user)
    form = InviteForm(request.POST)
    if not form.is_valid():
        return _people_page(request, form, status=400)
    data = form.cleaned_data
    try:
        user = services.user_invite(
            email=data["email"], name=data["name"], role=data["role"], by=request.user,
            origin=_origin(request), author_id=data["author"].pk if data["author"] else None,
        )  # fmt: skip
    except services.PeopleError as error:
        form.add_error(None, str(error))
        return _people_page(request, form, status=400)
    messages.success(request, f"Invitation sent to {user.email} (user name {user.username}).")
    return redirect("editor:people")


ACTIONS = {"role", "deactivate", "reactivate", "resend"}


@never_cache
@login_required
@require_POST
def people_change(request, user_id: int):
    """One action on one user: POST action=role (with role=), deactivate, reactivate, resend."""
    _require_admin(request.user)
    target = get_object_or_404(get_user_model(), pk=user_id)
    action = request.POST.get("action", "")
    if action not in ACTIONS:
        return HttpResponseBadRequest(
            "Unknown action: choose role, deactivate, reactivate or resend."
        )
    name = target.get_username()
    try:
        if action == "role":
            role = request.POST.get("role", "")
            services.user_set_role(user_id=target.pk, role=role, by=request.user)
            done = f"{name} is now {services.ROLES[role]}."
        elif action == "deactivate":
            services.user_deactivate(user_id=target.pk, by=request.user)
            done = f"{name} is deactivated: they can no longer log in. Their notes stay."
        elif action == "reactivate":
            services.user_reactivate(user_id=target.pk, by=request.user)
            done = f"{name} is active again."
        else:
            services.user_invite_resend(user_id=target.pk, by=request.user, origin=_origin(request))
            done = f"A new invitation was sent to {target.email}."
    except services.PeopleError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, done)
    return redirect("editor:people")
