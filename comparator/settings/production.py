"""Production: everything from the environment; refuses to start with a weak or publicly known secret key, and sends
the security headers (HSTS, Content-Security-Policy, Permissions-Policy).

`manage.py check --deploy` with the documented production environment (README, "Production") leaves only
security.W021 (HSTS preload), which commits the operator's whole domain and is theirs to decide.
"""

import os

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F401,F403
from .base import SECRET_KEY, env_bool

# Keys that are public: the development default in base.py and the value .env.example once shipped. Anyone with the
# key can sign a digest confirmation link for any address (bypassing double opt-in) and forge sessions.
PUBLIC_SECRET_KEYS = frozenset({"insecure-local-only-key-change-me", "change-me-to-a-long-random-string"})


def secret_key_problem(key: str) -> str | None:
    """Why `key` must not sign anything in production, or None: unset, public, or weak by Django's own measure
    (security.W009: under 50 characters, under 5 distinct characters, or Django's generated insecure prefix)."""
    if not key:
        return "DJANGO_SECRET_KEY is not set"
    if key in PUBLIC_SECRET_KEYS or key.startswith(("insecure-", "change-me", "build-only")):
        return "DJANGO_SECRET_KEY is a public example or development key"
    if key.startswith("django-insecure-"):
        return "DJANGO_SECRET_KEY starts with django-insecure- (a key generated for development)"
    if len(key) < 50 or len(set(key)) < 5:
        return "DJANGO_SECRET_KEY is too weak: use at least 50 random characters"
    return None


_problem = secret_key_problem(SECRET_KEY if os.environ.get("DJANGO_SECRET_KEY") else "")
if _problem:
    raise ImproperlyConfigured(
        f"{_problem}. Generate one with: python -c 'import secrets; print(secrets.token_urlsafe(64))'"
    )

DEBUG = False
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", True)
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]
# TLS is terminated by the operator's proxy or ingress, which says so in X-Forwarded-Proto. Plain-HTTP requests are
# redirected to HTTPS, except the probes kubelet and Prometheus send to the pod itself.
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", True)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
# Browsers only honour HSTS over HTTPS, so a plain-HTTP stack (docker-compose) is unaffected. A year, subdomains
# included; preload is the operator's decision (DJANGO_HSTS_PRELOAD).
SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", str(365 * 24 * 3600)))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SECURITY_HEADERS = env_bool("DJANGO_SECURITY_HEADERS", True)
