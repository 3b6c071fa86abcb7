"""The embedded default: SQLite under var/, debug on, no Redis needed (what `make run` uses)."""

import os

from .base import *  # noqa: F401,F403
from .base import env_bool

DEBUG = env_bool("DJANGO_DEBUG", True)
# Emails (digest confirmations) are printed to the console unless an SMTP server is configured.
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
# The embedded default runs without Redis: /healthz checks the database only.
HEALTH_CHECK_REDIS = env_bool("HEALTH_CHECK_REDIS", False)
# No broker under the embedded default: a task queued by a request (the confirmation email, printed to the console)
# runs in the web process. With CELERY_BROKER_URL set, a worker takes it, as in production.
CELERY_TASK_ALWAYS_EAGER = "CELERY_BROKER_URL" not in os.environ
