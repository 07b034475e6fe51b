"""The one login page of the console and the admin (/admin/login/): Keystone credentials
with [api] auth_strategy = keystone (console/keystone.py), a local staff account
otherwise. After it, `next=` is followed only to this site; without one the operator
lands on the console."""
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.views import LoginView

from console.keystone import KeystoneLoginForm, keystone_url


class ConsoleLoginView(LoginView):
    template_name = "console/login.html"
    redirect_authenticated_user = False

    def get_form_class(self):
        return KeystoneLoginForm if keystone_login() else AdminAuthenticationForm

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(admin.site.each_context(self.request), title="Log in", app_path=self.request.get_full_path(),
                       keystone=keystone_login(),
                       keystone_url=keystone_url() if keystone_login() else None)
        return context


def keystone_login():
    return settings.PLACEMENT_AUTH_STRATEGY == "keystone"


login = ConsoleLoginView.as_view()
