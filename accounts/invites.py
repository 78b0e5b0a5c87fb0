"""Accepting an invitation: the link an Admin's invite mails (accounts.services.user_invite)
opens a page where the invitee chooses a password, and is then logged in."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.urls import reverse_lazy

from . import services
from .views import AccountPage


class InviteAcceptView(AccountPage, auth_views.PasswordResetConfirmView):
    """Django's reset-confirm flow (the token leaves the URL for the session before the form
    shows) with the invitation's own tokens, which die once a password is set."""

    page_title = "Welcome: choose a password"
    template_name = "registration/invite_accept.html"
    token_generator = services.invite_tokens
    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"
    success_url = reverse_lazy("editor:dashboard")

    def form_valid(self, form):
        response = super().form_valid(form)
        messages.success(self.request, "Your password is set. Welcome to the editor.")
        return response
