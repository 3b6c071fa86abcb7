"""WSGI entry point (gunicorn comparator.wsgi)."""

import os
import sys

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "comparator.settings.local")
# A web process runs 4 threads; while one computes an advice (pure Python, holding the GIL), the others' page
# requests wait for the GIL again after every database call. Handing it over every 1 ms instead of CPython's 5 ms
# cut the other pages' p50 under 8 advice clients from 2.87-3.05x to 2.11-2.30x of idle (bench/advisor.py, ledger
# in docs/performance.md); GIL_SWITCH_INTERVAL_MS=5 restores CPython's default for the baseline.
sys.setswitchinterval(float(os.environ.get("GIL_SWITCH_INTERVAL_MS", "1")) / 1000)
application = get_wsgi_application()
