"""Log in, log out, password change and reset: django.contrib.auth's views in the site's look."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.contrib.auth import views as auth_views
from django.urls import reverse_lazy

from scidraft.site.meta import PageMeta
from scidraft.site.models import SiteSettings

from . import limits
from .forms import LoginForm, ResetForm


class AccountPage:
    """The page's <head> (PageMeta, never indexed) and the site's own `site` in the context."""

    page_title = ""

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        # Django's auth views put a RequestSite under "site"; templates want SiteSettings, which
        # the context processor provides once the view's value is out of the way.
        context.pop("site", None)
        context.pop("site_name", None)
        site = SiteSettings.objects.current()
        context["meta"] = PageMeta(title=f"{self.page_title} | {site.title}", noindex=True)
        return context


def _rate_limited(response, form):
    if getattr(form, "rate_limited", False):
        response.status_code = form.rate_limit_status
        response["Retry-After"] = str(form.retry_after)
    return response


class LoginView(AccountPage, auth_views.LoginView):
    authentication_form = LoginForm
    page_title = "Log in"

    def form_valid(self, form):
        # Session rotation: django.contrib.auth.login() cycles the session key.
        response = super().form_valid(form)
        limits.remember_device(response, form.get_user().get_username())
        return response

    def form_invalid(self, form):
        return _rate_limited(super().form_invalid(form), form)


class LogoutView(AccountPage, auth_views.LogoutView):
    """POST only (Django 5): a link or an image cannot log anyone out."""

    page_title = "Logged out"


class PasswordChangeView(AccountPage, auth_views.PasswordChangeView):
    """Other sessions of the user end; this one is kept (update_session_auth_hash)."""

    page_title = "Change password"
    success_url = reverse_lazy("accounts:password_change_done")


class PasswordChangeDoneView(AccountPage, auth_views.PasswordChangeDoneView):
    page_title = "Password changed"


class PasswordResetView(AccountPage, auth_views.PasswordResetView):
    """Always the same "sent" page, whether or not the address belongs to an account."""

    form_class = ResetForm
    page_title = "Reset password"
    success_url = reverse_lazy("accounts:password_reset_done")

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "request": self.request}

    def form_valid(self, form):
        site = SiteSettings.objects.current()
        # The link in the mail points at the site's configured address when there is one, so
        # it never depends on the Host header of the request that asked for it.
        parts = urlsplit(site.base_url or "")
        origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
        self.extra_email_context = {"site_title": site.title, "origin": origin}
        return super().form_valid(form)

    def form_invalid(self, form):
        return _rate_limited(super().form_invalid(form), form)


class PasswordResetDoneView(AccountPage, auth_views.PasswordResetDoneView):
    page_title = "Check your email"


class PasswordResetConfirmView(AccountPage, auth_views.PasswordResetConfirmView):
    page_title = "Choose a new password"
    success_url = reverse_lazy("accounts:password_reset_complete")

    def get_user(self, uidb64):
        # A link mailed before the account was deactivated must not set its password: the
        # token itself does not change with is_active, so the check is here.
        user = super().get_user(uidb64)
        return user if user is not None and user.is_active else None


class PasswordResetCompleteView(AccountPage, auth_views.PasswordResetCompleteView):
    page_title = "Password reset"
