"""The admin site with its login throttled (comparator.security.admin_login_limited): guessing passwords gets a
429 after settings.ADMIN_LOGIN_ATTEMPTS attempts per ADMIN_LOGIN_WINDOW seconds, per client and per username."""

import math

from django.contrib import admin
from django.http import HttpResponse
from django.utils.translation import gettext

from .security import admin_login_limited


class ComparatorAdminSite(admin.AdminSite):
    def login(self, request, extra_context=None):
        if request.method == "POST":
            wait = admin_login_limited(request)
            if wait is not None:
                response = HttpResponse(gettext("Too many login attempts. Please try again later."), status=429,
                                        content_type="text/plain; charset=utf-8")
                response["Retry-After"] = str(math.ceil(wait))
                return response
        return super().login(request, extra_context)
