"""The embedded default, production-shaped (what `make run` uses): SQLite under var/, no Redis needed, DEBUG off, a
secret key generated for this install and kept in var/secret_key, static files compressed and cache-busted
(`make run` runs collectstatic: whitenoise's manifest storage from base.py), the site's own 404 and 500 pages.
`make dev` (or DJANGO_DEBUG=true) turns DEBUG on for development."""

import os
import secrets

from .base import *  # noqa: F401,F403
from .base import BASE_DIR, env_bool

DEBUG = env_bool("DJANGO_DEBUG", False)


def _install_key() -> str:
    """DJANGO_SECRET_KEY when set, else this install's own key, generated once into var/secret_key (mode 600)."""
    if os.environ.get("DJANGO_SECRET_KEY"):
        return os.environ["DJANGO_SECRET_KEY"]
    path = BASE_DIR / "var" / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_urlsafe(64))
    return path.read_text().strip()


SECRET_KEY = _install_key()
# Mail is printed to the console unless an SMTP server is configured (EMAIL_HOST or EMAIL_BACKEND).
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND") or (
    "django.core.mail.backends.smtp.EmailBackend" if os.environ.get("EMAIL_HOST")
    else "django.core.mail.backends.console.EmailBackend")
# The embedded default runs without Redis: /healthz reports the broker as not used.
HEALTH_CHECK_REDIS = env_bool("HEALTH_CHECK_REDIS", False)
# No broker under the embedded default: a task queued by a request (the confirmation email, printed to the console)
# runs in the web process. With CELERY_BROKER_URL set, a worker takes it, as in production.
CELERY_TASK_ALWAYS_EAGER = "CELERY_BROKER_URL" not in os.environ
