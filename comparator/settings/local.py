"""The embedded default: SQLite under var/, debug on, no Redis needed (what `make run` uses)."""

from .base import *  # noqa: F401,F403
from .base import env_bool

DEBUG = env_bool("DJANGO_DEBUG", True)
