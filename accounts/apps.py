from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self):
        # The admin's own login page is a second door to the same accounts: it gets the same
        # rate limits as /accounts/login/.
        from django.contrib import admin

        from .forms import AdminLoginForm

        admin.site.login_form = AdminLoginForm
