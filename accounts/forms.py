"""Django's authentication forms with SciDraft's rate limits (accounts.limits)."""

from __future__ import annotations

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm

from . import limits


class RateLimitedLoginMixin:
    """Checks the rate limits before the password: a refused attempt never reaches it."""

    rate_limited = False
    rate_limit_status = 429  # 503 when the limits could not be read
    retry_after = 0

    def clean(self):
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if not username or not password:
            return super().clean()
        attempt = limits.login_attempt(self.request, username)
        if attempt.blocked:
            self.rate_limited = True
            self.rate_limit_status = attempt.status
            self.retry_after = attempt.retry_after
            raise forms.ValidationError(attempt.message, code="rate_limited")
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            attempt.failed()
            raise
        attempt.succeeded()
        return cleaned


class LoginForm(RateLimitedLoginMixin, AuthenticationForm):
    pass


class AdminLoginForm(RateLimitedLoginMixin, AdminAuthenticationForm):
    pass


class ResetForm(PasswordResetForm):
    """Rate-limited per address (a message) and per email address (silently: no enumeration)."""

    rate_limited = False
    rate_limit_status = 429
    retry_after = 0

    def __init__(self, *args, request=None, **kwargs):
        self.request = request
        self.send = True
        super().__init__(*args, **kwargs)

    def clean(self):
        cleaned = super().clean()
        email = cleaned.get("email")
        if email:
            attempt = limits.reset_attempt(self.request, email)
            if attempt.blocked:
                self.rate_limited = True
                self.rate_limit_status = attempt.status
                self.retry_after = attempt.retry_after
                raise forms.ValidationError(attempt.message, code="rate_limited")
            self.send = attempt.send
        return cleaned

    def get_users(self, email):
        if not self.send:
            return iter(())
        return super().get_users(email)
