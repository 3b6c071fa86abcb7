"""Production: everything from the environment; refuses to start with a weak or publicly known secret key, and sends
the security headers (HSTS, Content-Security-Policy, Permissions-Policy).

`manage.py check --deploy` with the documented production environment (README, "Production") leaves only
security.W021 (HSTS preload), which commits the operator's whole domain and is theirs to decide.
"""

import math
import os
from collections import Counter

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
    if _patterned(key) or _entropy_bits(key) < MIN_SECRET_KEY_BITS:
        return "DJANGO_SECRET_KEY is patterned or has too little entropy: use a generated key"
    return None


# What a key's own characters say about its randomness (an upper bound: a patterned key can still look varied, so
# the repetition test comes first). Django's get_random_secret_key() (50 characters of 50) measures about 240 bits,
# secrets.token_urlsafe(64) about 450; 'abcde' * 10 measures 116.
MIN_SECRET_KEY_BITS = 200


def _entropy_bits(key: str) -> float:
    counts = Counter(key)
    return -sum(n * math.log2(n / len(key)) for n in counts.values())


def _patterned(key: str) -> bool:
    """A key that repeats a shorter run of itself, or a run of consecutive characters ('abcdef...')."""
    if any(key == (key[:period] * (len(key) // period + 1))[: len(key)] for period in range(1, len(key) // 2 + 1)):
        return True
    steps = sum(1 for a, b in zip(key, key[1:], strict=False) if abs(ord(b) - ord(a)) <= 1)
    return steps > len(key) // 2


_problem = secret_key_problem(SECRET_KEY if os.environ.get("DJANGO_SECRET_KEY") else "")
if _problem:
    raise ImproperlyConfigured(
        f"{_problem}. Generate one with: python -c 'import secrets; print(secrets.token_urlsafe(64))'"
    )

DEBUG = False
# Links in every email (the weekly digest is sent outside any request) start with SITE_URL: a deployment without it
# would mail links to http://127.0.0.1:8000. docker-compose and deploy/kubernetes set it; refuse to start without.
if not os.environ.get("SITE_URL", "").startswith(("https://", "http://")):
    raise ImproperlyConfigured("SITE_URL is not set: the public address of the site, e.g. https://gpus.example.org")
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
