"""Test settings: PostgreSQL on this machine by default (tests/conftest.py falls back to SQLite only when it is
unreachable and REQUIRE_SERVICES is not set), fast password hashing, no outgoing mail."""

import os

import dj_database_url

from .base import *  # noqa: F401,F403

DATABASES = {
    "default": timeouts(dj_database_url.parse(  # noqa: F405 (from .base)
        os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"),
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "0")),  # tests/faults serve with persistent ones
    ), statement_ms="0")
}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# The end-to-end digest test starts a worker with EMAIL_BACKEND set to SMTP towards its loopback server.
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")
CELERY_RESULT_BACKEND = CELERY_BROKER_URL
# Many advise requests per minute across the suite: the throttle tests switch the limit on where they test it.
API_ADVISE_RATE = os.environ.get("API_ADVISE_RATE", "off")
